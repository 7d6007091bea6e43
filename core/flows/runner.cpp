#include "core/flows/runner.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/flows/graph.hpp"
#include "core/flows/inputs.hpp"
#include "core/flows/run_context.hpp"

namespace sreh::flows {

namespace {

constexpr std::array<const char*, 5> phase_names{"run", "backoff", "check", "sleep", "compensate"};

std::string with_attempt(const std::string& key, int attempt) {
  return attempt > 1 ? fmt::format("{}#{}", key, attempt) : key;
}

/// How one step stands: over (`ended`, with where to go when it chose), or the action it needs.
struct standing {
  std::optional<action> next;
  bool ok = false;
  std::string output;
  std::string error;
  std::string jump; // a condition's choice: a step id, "end", or "" (on in file order)
};

standing ended_ok(std::string output, std::string jump = {}) {
  standing s;
  s.ok = true;
  s.output = std::move(output);
  s.jump = std::move(jump);
  return s;
}

standing ended_failed(std::string error) {
  standing s;
  s.error = std::move(error);
  return s;
}

standing needs(action a) {
  standing s;
  s.next = std::move(a);
  return s;
}

action make(const step& s, action::kind_t k, flows::phase p, int attempt = 1) {
  action a;
  a.kind = k;
  a.step = s.id;
  a.phase = p;
  a.attempt = attempt;
  return a;
}

std::vector<const record*> of_phase(const std::vector<const record*>& recs, phase p) {
  std::vector<const record*> out;
  for (const auto* r : recs)
    if (r->phase == p)
      out.push_back(r);
  return out;
}

/// The action that makes attempt `n` of an acting step (tool, goal, flow), or its failure when
/// a placeholder cannot be filled.
standing attempt(const step& s, const run_context& cx, int n) {
  if (const auto* t = std::get_if<tool_call>(&s.body)) {
    auto args = render_json(t->args_json, cx.texts());
    if (!args)
      return ended_failed(args.error().message);
    auto a = make(s, action::call_tool, phase::run, n);
    a.tool = t->tool;
    a.args = std::move(*args);
    a.timeout_ms = s.timeout_ms;
    a.message = n > 1 ? fmt::format("{} (attempt {})", t->tool, n) : t->tool;
    return needs(std::move(a));
  }
  child_run c;
  c.key = with_attempt(s.id, n);
  if (const auto* g = std::get_if<goal_step>(&s.body)) {
    auto text = cx.render_text(g->goal);
    if (!text)
      return ended_failed(text.error().message);
    std::string labels = "{";
    for (const auto& [k, v] : g->labels) {
      auto lv = cx.render_text(v);
      if (!lv)
        return ended_failed(fmt::format("labels.{}: {}", k, lv.error().message));
      labels +=
        fmt::format("{}{}:{}", labels.size() > 1 ? "," : "", json::quote(k), json::quote(*lv));
    }
    c.kind = child_run::goal_run;
    c.goal = std::move(*text);
    c.labels = labels + "}";
  } else {
    const auto& fc = std::get<flow_call>(s.body);
    auto inputs = render_json(fc.inputs_json, cx.texts());
    if (!inputs)
      return ended_failed(inputs.error().message);
    c.kind = child_run::flow_run;
    c.flow = fc.flow;
    c.inputs = std::move(*inputs);
  }
  auto a = make(s, action::start_runs, phase::run, n);
  a.message = c.kind == child_run::goal_run ? "goal: " + c.goal : "flow " + c.flow;
  a.runs.push_back(std::move(c));
  a.timeout_ms = s.timeout_ms;
  return needs(std::move(a));
}

/// A tool, goal or flow step: its attempts, with the backoff between them.
standing acting(const step& s, const std::vector<const record*>& recs, const run_context& cx) {
  auto runs = of_phase(recs, phase::run);
  if (runs.empty())
    return attempt(s, cx, 1);
  const auto& last = *runs.back();
  if (last.ok) {
    if (s.kind() == step_kind::tool)
      return ended_ok(last.result);
    auto doc = json::parse(last.result.empty() ? "{}" : last.result);
    return ended_ok(doc && doc->IsObject() && doc->HasMember("output")
                      ? json::stringify((*doc)["output"])
                      : std::string{"null"});
  }
  if (last.final || last.attempt > s.retries.max)
    return ended_failed(last.attempt > 1
                          ? fmt::format("{} (after {} attempts)", last.error, last.attempt)
                          : last.error);
  for (const auto* b : of_phase(recs, phase::backoff))
    if (b->attempt == last.attempt)
      return attempt(s, cx, last.attempt + 1);
  auto a = make(s, action::sleep, phase::backoff, last.attempt);
  auto delay = s.retries.delay_ms(last.attempt);
  a.until_us = last.finished_at + delay * 1000;
  a.message = fmt::format("retry {} of {} in {} ms", last.attempt, s.retries.max, delay);
  return needs(std::move(a));
}

standing approval_standing(const step& s, const std::vector<const record*>& recs,
                           const run_context& cx) {
  auto runs = of_phase(recs, phase::run);
  if (!runs.empty())
    return runs.back()->ok ? ended_ok(runs.back()->result) : ended_failed(runs.back()->error);
  auto a = make(s, action::approve, phase::run);
  a.approval = std::get<approval_step>(s.body);
  auto reason = cx.render_text(a.approval.reason.empty() ? "flow step " + s.id : a.approval.reason);
  if (!reason)
    return ended_failed(reason.error().message);
  a.approval.reason = std::move(*reason);
  a.message = a.approval.reason;
  return needs(std::move(a));
}

standing condition_standing(const step& s, const std::vector<const record*>& recs,
                            const run_context& cx) {
  auto checks = of_phase(recs, phase::check);
  if (!checks.empty()) {
    const auto& c = *checks.back();
    if (!c.ok)
      return ended_failed(c.error);
    auto doc = json::parse(c.result);
    std::string jump;
    if (doc && doc->IsObject() && doc->HasMember("then") && (*doc)["then"].IsString())
      jump = (*doc)["then"].GetString();
    return ended_ok(c.result, jump);
  }
  const auto& cond = std::get<condition_step>(s.body);
  auto a = make(s, action::check, phase::check);
  std::vector<std::string> observed_all; // JSON texts, one per case tried
  std::string target = cond.otherwise;
  int chosen = -1;
  for (std::size_t i = 0; i < cond.cases.size(); ++i) {
    std::string observed;
    auto h = cx.holds(cond.cases[i].when, observed);
    if (!h) {
      a.ok = false;
      a.error = fmt::format("in '{}': {}", cond.cases[i].when, h.error().message);
      a.result = json::object("error", a.error);
      a.message = a.error;
      return needs(std::move(a));
    }
    observed_all.push_back(std::move(observed));
    if (*h) {
      target = cond.cases[i].then;
      chosen = static_cast<int>(i);
      break;
    }
  }
  auto observed =
    json::array(observed_all, [](json::writer& w, const std::string& text) { json::raw(w, text); });
  a.result =
    json::object("then", target, "case", chosen < 0 ? std::nullopt : std::optional<int>{chosen},
                 "observed", json::raw_text{observed});
  a.message = target.empty() ? "go on" : "go to " + target;
  return needs(std::move(a));
}

standing wait_standing(const step& s, const std::vector<const record*>& recs, const run_context& cx,
                       timestamp_us now, std::int64_t retry_ms, std::uint64_t world_version) {
  const auto& w = std::get<wait_step>(s.body);
  auto sleeps = of_phase(recs, phase::sleep);
  if (w.until.empty()) {
    if (!sleeps.empty())
      return ended_ok(json::object("slept", true));
    auto a = make(s, action::sleep, phase::sleep);
    a.until_us = now + w.duration_ms * 1000;
    a.message = describe(s);
    return needs(std::move(a));
  }
  auto checks = of_phase(recs, phase::check);
  if (checks.size() > sleeps.size() && !checks.empty()) {
    const auto& c = *checks.back();
    if (!c.ok)
      return ended_failed(c.error);
    auto doc = json::parse(c.result);
    if (doc && doc->IsObject() && doc->HasMember("holds") && (*doc)["holds"].IsBool() &&
        (*doc)["holds"].GetBool())
      return ended_ok(c.result);
    auto begin = checks.front()->started_at;
    auto deadline = begin + w.deadline_ms * 1000;
    bool unobserved =
      doc && doc->IsObject() && doc->HasMember("unobserved") && (*doc)["unobserved"].IsString();
    if (c.started_at >= deadline)
      return ended_failed(fmt::format(
        "'{}' did not hold within {} s ({} checks){}", w.until, w.deadline_ms / 1000, checks.size(),
        unobserved ? std::string{": "} + (*doc)["unobserved"].GetString() : std::string{}));
    auto a = make(s, action::sleep, phase::sleep, static_cast<int>(checks.size()));
    // Judged on no world state since the run's last action: look again once the world sync has
    // observed it, not a whole `every` later.
    auto every_ms = unobserved ? std::min(w.every_ms, retry_ms) : w.every_ms;
    a.until_us = std::min(c.started_at + every_ms * 1000, deadline);
    a.message = unobserved ? fmt::format("world state not observed since the last action: check "
                                         "again in {} ms",
                                         every_ms)
                           : fmt::format("not yet: check again in {} s", w.every_ms / 1000);
    return needs(std::move(a));
  }
  auto a = make(s, action::check, phase::check, static_cast<int>(checks.size()) + 1);
  std::string observed;
  std::string shown = w.until;
  auto h = cx.holds(w.until, observed, &shown);
  if (!h && h.error().code == errc::unavailable) { // not observed yet: does not hold so far
    a.result = json::object("holds", false, "unobserved", h.error().message);
    a.message = fmt::format("'{}': {}", shown, h.error().message);
  } else if (!h) {
    a.ok = false;
    a.error = fmt::format("in '{}': {}", w.until, h.error().message);
    a.result = json::object("error", a.error);
    a.message = a.error;
  } else {
    a.result = json::object("holds", *h, "observed", json::raw_text{observed}, "world_version",
                            world_version);
    a.message = fmt::format("'{}' {}", shown, *h ? "holds" : "does not hold");
  }
  return needs(std::move(a));
}

standing parallel_standing(const step& s, const std::vector<const record*>& recs) {
  auto runs = of_phase(recs, phase::run);
  if (!runs.empty()) {
    const auto& r = *runs.back();
    auto doc = json::parse(r.result.empty() ? "{}" : r.result);
    auto output = doc && doc->IsObject() && doc->HasMember("output")
                    ? json::stringify((*doc)["output"])
                    : std::string{"null"};
    return r.ok ? ended_ok(output) : ended_failed(r.error);
  }
  const auto& p = std::get<parallel_step>(s.body);
  auto a = make(s, action::start_runs, phase::run);
  a.join = p.join;
  a.timeout_ms = s.timeout_ms;
  for (const auto& b : p.branches) {
    child_run c;
    c.kind = child_run::branch_run;
    c.key = s.id + "/" + b.name;
    c.parallel = s.id;
    c.branch = b.name;
    a.runs.push_back(std::move(c));
  }
  a.message = fmt::format("{} branches, join {}", p.branches.size(), to_string(p.join));
  return needs(std::move(a));
}

standing stand(const step& s, const std::vector<const record*>& recs, const run_context& cx,
               timestamp_us now, std::int64_t world_retry_ms, std::uint64_t world_version) {
  switch (s.kind()) {
  case step_kind::tool:
  case step_kind::goal:
  case step_kind::flow:
    return acting(s, recs, cx);
  case step_kind::approval:
    return approval_standing(s, recs, cx);
  case step_kind::condition:
    return condition_standing(s, recs, cx);
  case step_kind::wait:
    return wait_standing(s, recs, cx, now, world_retry_ms, world_version);
  case step_kind::parallel:
    return parallel_standing(s, recs);
  }
  return ended_failed("unknown step kind");
}

/// The steps that ended so far with their outputs, for the branch runs a parallel step starts.
std::string outputs(const run_progress& p, const std::map<std::string, step_result>& prior) {
  return json::build([&](json::writer& w) {
    auto add = [&](const std::string& id, const step_result& r) {
      json::field(
        w, id,
        json::raw_text{json::object("status", r.status, "output", json::raw_text{r.output})});
    };
    w.StartObject();
    for (const auto& [id, r] : prior)
      if (p.ended.count(id) == 0)
        add(id, r);
    for (const auto& [id, r] : p.ended)
      add(id, r);
    w.EndObject();
  });
}

std::string summary(const run_progress& p) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    w.Key("steps");
    w.StartObject();
    for (const auto& [id, r] : p.ended)
      json::field(w, id, json::raw_text{json::object("status", r.status)});
    w.EndObject();
    w.EndObject();
  });
}

/// Compensates the steps done so far, newest first (each step's `compensate` call, once), then
/// fails with `why`.
action compensate(const run_view& v, const run_progress& p, const run_context& cx,
                  const std::map<std::string, std::vector<const record*>>& by_step,
                  const std::string& why) {
  std::vector<std::string> undone;
  for (auto i = p.done.rbegin(); i != p.done.rend(); ++i) {
    const auto* s = v.f.find(*i);
    if (!s || !s->compensate)
      continue;
    auto recs = by_step.find(*i);
    bool did = false;
    if (recs != by_step.end())
      for (const auto* r : recs->second)
        did = did || r->phase == phase::compensate;
    if (did) {
      undone.push_back(*i);
      continue;
    }
    auto args = render_json(s->compensate->args_json, cx.texts());
    action a = make(*s, action::call_tool, phase::compensate);
    a.tool = s->compensate->tool;
    a.args = args ? std::move(*args) : std::string{"{}"};
    a.message = fmt::format("compensate {}: {}", s->id, a.tool);
    if (!args) { // journal the failure to render as the compensation's outcome
      a.kind = action::check;
      a.ok = false;
      a.error = fmt::format("compensation of {}: {}", s->id, args.error().message);
      a.result = json::object("error", a.error);
    }
    return a;
  }
  action f;
  f.kind = action::fail;
  std::string list;
  for (const auto& id : undone)
    list += (list.empty() ? "" : ", ") + id;
  f.message = undone.empty() ? why : fmt::format("{}; compensated {}", why, list);
  f.output = summary(p);
  return f;
}

} // namespace

const char* to_string(phase p) {
  auto i = static_cast<std::size_t>(p);
  return i < phase_names.size() ? phase_names[i] : "unknown";
}

std::optional<phase> parse_phase(std::string_view s) {
  for (std::size_t i = 0; i < phase_names.size(); ++i)
    if (s == phase_names[i])
      return static_cast<phase>(i);
  return std::nullopt;
}

std::string pin(const flow& f, const std::map<std::string, std::string>& inputs,
                std::string_view extra) {
  std::string in = "{";
  for (const auto& [k, v] : inputs)
    in += fmt::format("{}{}:{}", in.size() > 1 ? "," : "", json::quote(k), v);
  in += "}";
  return fmt::format(R"({{"flow":{},"version":{},"source":{},"text":{},"inputs":{}{}}})",
                     json::quote(f.name), json::quote(f.version), json::quote(f.source),
                     json::quote(f.text), in, extra);
}

action next_action(const run_view& v) {
  const std::vector<step>* list = &v.f.steps;
  if (!v.parallel.empty()) {
    const auto* p = v.f.find(v.parallel);
    const auto* ps = p ? std::get_if<parallel_step>(&p->body) : nullptr;
    list = nullptr;
    if (ps)
      for (const auto& b : ps->branches)
        if (b.name == v.branch)
          list = &b.steps;
    if (!list) {
      action f;
      f.kind = action::fail;
      f.message =
        fmt::format("flow {} has no branch '{}' in step '{}'", v.f.name, v.branch, v.parallel);
      return f;
    }
  }
  std::map<std::string, std::vector<const record*>> by_step;
  for (const auto& r : v.records)
    by_step[r.step].push_back(&r);
  run_progress p;
  run_context cx{v, p};
  std::string at = list->empty() ? std::string{} : list->front().id;
  // Acyclic (the loader checks it), so every step is visited at most once.
  for (std::size_t guard = 0; !at.empty() && guard <= v.f.all_steps().size(); ++guard) {
    const auto* s = v.f.find(at);
    if (!s) {
      action f;
      f.kind = action::fail;
      f.message = fmt::format("flow {} has no step '{}'", v.f.name, at);
      return f;
    }
    static const std::vector<const record*> none;
    auto recs = by_step.find(at);
    auto st = stand(*s, recs == by_step.end() ? none : recs->second, cx, v.now, v.world_retry_ms,
                    v.world_version);
    if (st.next) {
      if (st.next->kind == action::start_runs && s->kind() == step_kind::parallel)
        st.next->output = outputs(p, v.prior);
      return std::move(*st.next);
    }
    if (st.ok) {
      p.ended[at] = {"succeeded", st.output};
      p.done.push_back(at);
      at = st.jump.empty() ? v.f.following(at) : st.jump == end_target ? std::string{} : st.jump;
      continue;
    }
    p.ended[at] = {"failed", ""};
    auto why = fmt::format("step {} failed: {}", at, st.error);
    switch (s->failure.action) {
    case failure_action::fail: {
      action f;
      f.kind = action::fail;
      f.message = std::move(why);
      f.output = summary(p);
      return f;
    }
    case failure_action::continue_on:
      at = v.f.following(at);
      continue;
    case failure_action::go_to:
      at = s->failure.target == end_target ? std::string{} : s->failure.target;
      continue;
    case failure_action::compensate:
      return compensate(v, p, cx, by_step, why);
    }
  }
  action done;
  done.kind = action::succeed;
  done.message = v.parallel.empty()
                   ? fmt::format("flow {} finished: {} steps succeeded", v.f.name, p.done.size())
                   : fmt::format("branch {} of {} finished: {} steps succeeded", v.branch,
                                 v.parallel, p.done.size());
  done.output = summary(p);
  return done;
}

} // namespace sreh::flows
