#include "eval/replay.hpp"

#include <fmt/format.h>

#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>

#include "actors/gateway/llm_provider.hpp"
#include "actors/tools/forwarding_tool.hpp"
#include "core/base/json.hpp"
#include "core/llm/wire.hpp"
#include "eval/follow.hpp"
#include "net/node/node_parts.hpp"
#include "persistence/store/store.hpp"

namespace sreh::eval {

namespace {

using steady = std::chrono::steady_clock;
namespace wire = llm::wire;

/// Arguments as one canonical text (the model's spacing does not matter).
std::string canonical(const std::string& args) {
  auto doc = json::parse(args.empty() ? "{}" : args);
  return doc ? json::stringify(*doc) : args;
}

std::string key_of(const std::string& tool, const std::string& args) {
  return tool + '\x1f' + canonical(args);
}

std::optional<rapidjson::Document> object_of(const std::string& text) {
  auto doc = json::parse(text.empty() ? "{}" : text);
  if (!doc || !doc->IsObject())
    return std::nullopt;
  return std::move(*doc);
}

/// The policy effect journaled with a tool step ("" when none).
std::string policy_effect(const step& s) {
  auto d = object_of(s.decision);
  const auto* p = d ? wire::member(*d, "policy") : nullptr;
  return p && p->IsObject() ? wire::string_or(*p, "effect") : std::string{};
}

std::string policy_rule(const step& s) {
  auto d = object_of(s.decision);
  const auto* p = d ? wire::member(*d, "policy") : nullptr;
  return p && p->IsObject() ? wire::string_or(*p, "rule") : std::string{};
}

bool is_compensation(const step& s) {
  auto d = object_of(s.decision);
  const auto* detail = d ? wire::member(*d, "detail") : nullptr;
  return detail && detail->IsObject() && wire::member(*detail, "compensates") != nullptr;
}

/// Whether the tool was called for step `s` (not refused by policy, by validation or before
/// the call), so that its result is the tool's.
bool was_called(const step& s) {
  if (s.kind != step_kind::tool ||
      (s.state != step_state::succeeded && s.state != step_state::failed))
    return false;
  auto effect = policy_effect(s);
  if (effect == "deny" || effect == "rejected")
    return false;
  for (const char* prefix :
       {"not executed", "cancelled before execution", "unknown tool", "invalid arguments for"})
    if (s.error.starts_with(prefix))
      return false;
  return true;
}

/// What the recorded tools answer with: the recorded outcomes of calls, undos and checks, each
/// by tool and arguments in journal order. Thread-safe (tools are called from any run thread).
class tape {
 public:
  explicit tape(const std::vector<step>& steps) {
    for (const auto& s : steps) {
      if (was_called(s)) {
        auto& q = is_compensation(s) ? undos_ : calls_;
        q[key_of(s.tool, s.args)].push_back(
          {s.state == step_state::succeeded, s.result.empty() ? "{}" : s.result, s.error});
      } else if (s.kind == step_kind::observe) {
        auto args = object_of(s.args);
        std::int64_t n = args ? wire::int_of(*args, "for_step").value_or(0) : 0;
        auto res = object_of(s.result);
        if (n < 1 || n > static_cast<std::int64_t>(steps.size()) || !res)
          continue;
        const auto& of = steps.at(static_cast<std::size_t>(n - 1));
        const auto* holds = wire::member(*res, "holds");
        const auto* observed = wire::member(*res, "observed");
        checks_[key_of(of.tool, of.args)].push_back(
          {holds && holds->IsBool() && holds->GetBool(),
           observed ? json::stringify(*observed) : std::string{"{}"}});
      }
    }
  }

  actors::tool_result take_call(const std::string& tool, const std::string& args) {
    return take(calls_, tool, args, "call");
  }
  actors::tool_result take_undo(const std::string& tool, const std::string& args) {
    return take(undos_, tool, args, "undo");
  }
  actors::check_result take_check(const std::string& tool, const std::string& args) {
    std::lock_guard<std::mutex> lock{mu_};
    auto i = checks_.find(key_of(tool, args));
    if (i == checks_.end() || i->second.empty()) {
      misses_.push_back(fmt::format("a check of {} {} that the recording has not", tool, args));
      return {false, R"({"error":"replay: the recording has no such check"})"};
    }
    auto c = std::move(i->second.front());
    i->second.pop_front();
    return c;
  }

  /// What the replay asked for that the recording does not have.
  std::vector<std::string> misses() {
    std::lock_guard<std::mutex> lock{mu_};
    return misses_;
  }

 private:
  struct outcome {
    bool ok = true;
    std::string result, error;
  };
  using queues = std::map<std::string, std::deque<outcome>>;

  actors::tool_result take(queues& q, const std::string& tool, const std::string& args,
                           const char* what) {
    std::lock_guard<std::mutex> lock{mu_};
    auto i = q.find(key_of(tool, args));
    if (i == q.end() || i->second.empty()) {
      misses_.push_back(fmt::format("a {} of {} {} that the recording has not", what, tool, args));
      return actors::tool_result::failure(
        fmt::format("replay: the recording has no {} of '{}' with these arguments", what, tool));
    }
    auto o = std::move(i->second.front());
    i->second.pop_front();
    return o.ok ? actors::tool_result::success(std::move(o.result))
                : actors::tool_result::failure(std::move(o.error));
  }

  std::mutex mu_;
  queues calls_, undos_;
  std::map<std::string, std::deque<actors::check_result>> checks_;
  std::vector<std::string> misses_;
};

/// A node tool that answers with the recorded outcomes instead of acting. Everything the kernel
/// and the reasoners read about it (name, schema, risk, scope, observations) is the real tool's.
class recorded_tool final : public actors::forwarding_tool {
 public:
  recorded_tool(actors::tool_ptr inner, std::shared_ptr<tape> t)
    : forwarding_tool(std::move(inner)), tape_(std::move(t)) {}

  bool blocking() const override { return false; } // it answers at once
  actors::tool_result execute(const actors::tool_call& call) override {
    return tape_->take_call(name(), call.args);
  }
  actors::tool_result compensate(const actors::tool_call& original) override {
    return tape_->take_undo(name(), original.args);
  }
  actors::check_result check(std::string_view args) override {
    return tape_->take_check(name(), std::string{args});
  }
  /// The real post-condition, with its delay cut to 1 ms: the timer step stays in the journal,
  /// the wait does not.
  std::optional<actors::postcondition> postcondition_for(std::string_view args) const override {
    auto pc = inner()->postcondition_for(args);
    if (pc && pc->after_ms > 0)
      pc->after_ms = 1;
    return pc;
  }
  actors::reconcile_result reconcile(std::string_view) override { return {}; }

 private:
  std::shared_ptr<tape> tape_;
};

llm::finish_reason finish_of(const std::string& s) {
  for (auto f : {llm::finish_reason::stop, llm::finish_reason::tool_calls,
                 llm::finish_reason::length, llm::finish_reason::refusal})
    if (s == llm::to_string(f))
      return f;
  return llm::finish_reason::other;
}

std::vector<std::string> strings_of(const rapidjson::Value* v) {
  std::vector<std::string> out;
  if (v && v->IsArray())
    for (const auto& x : v->GetArray())
      if (x.IsString())
        out.emplace_back(x.GetString());
  return out;
}

/// The gateway's answer recorded by reason step `s`, as the gateway gave it.
actors::gateway_result recorded_answer(const step& s) {
  actors::gateway_result g;
  if (s.kind != step_kind::reason) {
    g.error = fmt::format("replay: recorded step {} is a {} step, not a model call", s.n,
                          to_string(s.kind));
    return g;
  }
  auto doc = object_of(s.result);
  if (s.state == step_state::intent || !doc) {
    g.error = fmt::format("replay: the recording has no answer for step {}", s.n);
    return g;
  }
  g.log = strings_of(wire::member(*doc, "attempts"));
  if (s.state != step_state::succeeded) {
    constexpr std::string_view prefix = "no model answered: ";
    g.error = s.error.starts_with(prefix) ? s.error.substr(prefix.size()) : s.error;
    return g;
  }
  g.route = wire::string_or(*doc, "answered_by");
  if (g.route == "builtin") { // the chain's last resort decided: it decides again here
    if (!g.log.empty() && g.log.back() == "builtin: answered")
      g.log.pop_back();
    g.reached_builtin = true;
    g.error = "replay: the recorded answer came from the builtin reasoner";
    return g;
  }
  g.ok = true;
  g.provider = wire::string_or(*doc, "provider");
  g.model = wire::string_or(*doc, "model");
  g.latency_ms = wire::int_of(*doc, "latency_ms").value_or(0);
  auto& r = g.response;
  r.id = wire::string_or(*doc, "id");
  r.model = g.model;
  r.text = wire::string_or(*doc, "text");
  r.refusal = wire::string_or(*doc, "refusal");
  r.finish = finish_of(wire::string_or(*doc, "finish"));
  r.raw_finish = wire::string_or(*doc, "raw_finish");
  if (const auto* calls = wire::member(*doc, "tool_calls"); calls && calls->IsArray())
    for (const auto& c : calls->GetArray())
      if (c.IsObject())
        r.tool_calls.push_back(
          {wire::string_or(c, "id"), wire::string_or(c, "name"), wire::string_or(c, "arguments")});
  if (const auto* u = wire::member(*doc, "usage"); u && u->IsObject())
    r.usage = llm::usage{wire::int_of(*u, "input_tokens").value_or(0),
                         wire::int_of(*u, "output_tokens").value_or(0)};
  return g;
}

/// At most `width` characters of `s` on one line.
std::string clip(std::string s, std::size_t width = 60) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  if (s.size() > width)
    s = s.substr(0, width - 3) + "...";
  return s;
}

std::string describe(const step& s) {
  switch (s.kind) {
  case step_kind::tool: {
    auto effect = policy_effect(s);
    return fmt::format("tool {} {} {}{}", s.tool, clip(canonical(s.args), 40), to_string(s.state),
                       effect.empty() || effect == "allow" ? "" : " [" + effect + "]");
  }
  case step_kind::reason: {
    auto doc = object_of(s.result);
    if (!doc)
      return fmt::format("reason {}", to_string(s.state));
    std::string names;
    if (const auto* calls = wire::member(*doc, "tool_calls"); calls && calls->IsArray())
      for (const auto& c : calls->GetArray())
        names += (names.empty() ? "" : ", ") + wire::string_or(c, "name");
    return fmt::format("reason {}: {}", wire::string_or(*doc, "answered_by", "-"),
                       !names.empty()
                         ? "calls " + names
                         : fmt::format("answers \"{}\"", clip(wire::string_or(*doc, "text"), 36)));
  }
  case step_kind::observe: {
    auto doc = object_of(s.result);
    const auto* holds = doc ? wire::member(*doc, "holds") : nullptr;
    return fmt::format("observe {} {}", s.tool,
                       holds && holds->IsBool() && holds->GetBool() ? "holds" : "does not hold");
  }
  case step_kind::conclude: {
    auto doc = object_of(s.result);
    return fmt::format("conclude \"{}\"",
                       clip(doc ? wire::string_or(*doc, "conclusion") : std::string{}, 50));
  }
  default:
    return fmt::format("{} {}", to_string(s.kind), to_string(s.state));
  }
}

std::string request_hash(const step& s) {
  auto doc = object_of(s.args);
  return doc ? wire::string_or(*doc, "request_hash") : std::string{};
}

/// The parts of a reason step's response that decide what the run does next.
std::string answer_of(const step& s) {
  auto doc = object_of(s.result);
  if (!doc)
    return s.result;
  std::string out = wire::string_or(*doc, "answered_by") + '\x1f' + wire::string_or(*doc, "text") +
                    '\x1f' + wire::string_or(*doc, "finish") + '\x1f' +
                    wire::string_or(*doc, "bad");
  if (const auto* calls = wire::member(*doc, "tool_calls"))
    out += '\x1f' + json::stringify(*calls);
  return out;
}

/// What differs between recorded step `a` and replayed step `b` ("" = the same).
std::string difference(const step& a, const step& b) {
  if (a.kind != b.kind)
    return fmt::format("a {} step was recorded, the replay made a {} step", to_string(a.kind),
                       to_string(b.kind));
  if (a.tool != b.tool)
    return fmt::format("tool: recorded {}, replay {}", a.tool, b.tool);
  if (a.kind == step_kind::tool && canonical(a.args) != canonical(b.args))
    return fmt::format("arguments: recorded {}, replay {}", clip(canonical(a.args)),
                       clip(canonical(b.args)));
  if (a.kind == step_kind::tool && policy_effect(a) != policy_effect(b))
    return fmt::format("policy: recorded {} ({}), replay {} ({})", policy_effect(a),
                       policy_rule(a).empty() ? "default" : policy_rule(a), policy_effect(b),
                       policy_rule(b).empty() ? "default" : policy_rule(b));
  if (a.state != b.state)
    return fmt::format("state: recorded {}, replay {}{}", to_string(a.state), to_string(b.state),
                       b.error.empty() ? "" : fmt::format(" ({})", clip(b.error)));
  if (a.kind == step_kind::reason && answer_of(a) != answer_of(b))
    return "the answer differs";
  if (a.kind == step_kind::reason && request_hash(a) != request_hash(b))
    return "the model was asked something else (its request hash differs); the recorded answer "
           "was used";
  if ((a.kind == step_kind::tool || a.kind == step_kind::observe ||
       a.kind == step_kind::conclude) &&
      a.state == step_state::succeeded && canonical(a.result) != canonical(b.result))
    return "the result differs";
  if (a.error != b.error)
    return fmt::format("error: recorded \"{}\", replay \"{}\"", clip(a.error), clip(b.error));
  return {};
}

std::string end_of(const run& r) {
  if (r.state == run_state::succeeded)
    return fmt::format("succeeded: {}", r.conclusion);
  return fmt::format("{}: {}", to_string(r.state), r.error);
}

/// Decides approval `a` of the replay as the recording did for its step; returns what it did.
std::string decide_as_recorded(net::node_parts& n, const recording& rec,
                               const requested_approval& a) {
  const approval* was = nullptr;
  for (const auto& x : rec.approvals)
    if (x.step_n == a.step && x.kind == approval_kind::action)
      was = &x;
  std::vector<approval_vote> votes;
  std::string note;
  if (was && !was->votes.empty()) {
    votes = was->votes;
    note = fmt::format("step {}: approval {} decided with the recorded votes of {} ({})", a.step,
                       a.id, was->id, to_string(was->state));
  } else {
    approval_vote v;
    v.by = "sreh-replay";
    v.role = "admin";
    v.approve = !was; // policy asks where the recording did not: let the replay go on
    v.comment = was ? "the recorded approval " + was->id + " was " + to_string(was->state)
                    : "the recording has no approval for this step";
    note = fmt::format("step {}: approval {} {} by sreh-replay: {}", a.step, a.id,
                       v.approve ? "approved" : "denied", v.comment);
    votes.push_back(std::move(v));
  }
  for (auto& v : votes) {
    v.at = n.clock().now_us();
    std::promise<expected<approval>> done;
    n.kernel().decide(a.id, v, [&done](expected<approval> r) { done.set_value(std::move(r)); });
    auto r = done.get_future().get();
    if (!r)
      return note + fmt::format("; the vote of {} was refused: {}", v.by, r.error().message);
    if (r->state != approval_state::pending)
      break;
  }
  return note;
}

} // namespace

expected<recording> load_recording(persistence::store& s, const std::string& run_id) {
  auto r = s.get_run(run_id);
  if (!r)
    return r.error();
  if (!*r)
    return sreh::error{errc::not_found, fmt::format("run {} is not in the store", run_id)};
  recording rec;
  rec.r = std::move(**r);
  if (!is_terminal(rec.r.state))
    return sreh::error{errc::invalid_argument,
                       fmt::format("run {} has not ended (it is {}): replay needs a finished run",
                                   run_id, to_string(rec.r.state))};
  if (rec.r.kind != "goal")
    return sreh::error{errc::invalid_argument,
                       fmt::format("run {} is a {} run: only goal runs replay (a flow's steps "
                                   "come from its definition, not from a model)",
                                   run_id, rec.r.kind)};
  auto steps = s.get_steps(run_id);
  if (!steps)
    return steps.error();
  rec.steps = std::move(*steps);
  persistence::approval_filter f;
  f.run_id = run_id;
  f.limit = 500;
  auto page = s.list_approvals(f);
  if (!page)
    return page.error();
  rec.approvals = std::move(page->approvals);
  return rec;
}

expected<replay_report> replay(const recording& rec, const config::node_config& cfg,
                               std::shared_ptr<actors::tool_registry> tools,
                               policy::policy_set policy, actors::model_provider_ptr provider,
                               const replay_options& opts) {
  auto started = steady::now();
  bool recorded_reasons = false;
  for (const auto& s : rec.steps)
    recorded_reasons = recorded_reasons || s.kind == step_kind::reason;
  auto* llm = provider->as_llm();
  if (recorded_reasons && !llm)
    return sreh::error{errc::invalid_argument,
                       fmt::format("run {} was driven by a language model (it has reason steps), "
                                   "but this config's model is '{}': replay it with the config "
                                   "it ran with",
                                   rec.r.id, provider->name())};
  if (!recorded_reasons && llm)
    return sreh::error{errc::invalid_argument,
                       fmt::format("run {} was driven by a deterministic reasoner (it has no "
                                   "reason steps), but this config's model is '{}': replay it "
                                   "with the config it ran with",
                                   rec.r.id, provider->name())};
  if (llm) {
    auto steps = std::make_shared<const std::vector<step>>(rec.steps);
    llm->answer_from([steps](const std::string&, std::int64_t n) {
      if (n < 1 || n > static_cast<std::int64_t>(steps->size())) {
        actors::gateway_result g;
        g.error = fmt::format("replay: the recording has no step {}", n);
        return g;
      }
      return recorded_answer(steps->at(static_cast<std::size_t>(n - 1)));
    });
  }
  auto t = std::make_shared<tape>(rec.steps);

  temp_dir dir;
  if (dir.path.empty())
    return sreh::error{errc::internal, "replay: cannot create a scratch data dir"};
  config::node_config scratch = cfg; // its tools, policy, model and budgets; not its store
  scratch.node_id = "replay";
  scratch.data_dir = dir.path;
  scratch.store = {};
  scratch.store.path = dir.path + "/sreh.db";
  scratch.nats = {};
  scratch.cluster = {};

  run_follower follower; // outlives the node: its callbacks may run until the node stops
  auto parts =
    net::node_parts::start(scratch, std::move(tools), std::move(policy), std::move(provider),
                           [t](actors::tool_ptr tool) -> actors::tool_ptr {
                             return std::make_shared<recorded_tool>(std::move(tool), t);
                           });
  if (!parts)
    return sreh::error{parts.error().code,
                       "replay: cannot start a scratch node: " + parts.error().message};
  auto& n = **parts;
  auto sub = n.hub().subscribe(
    [&follower](const actors::event_hub::batch& b) { follower.on_events(b->events); });

  goal_request req;
  req.goal = rec.r.goal;
  req.submitter = rec.r.submitter;
  req.labels = rec.r.labels;
  req.budget = rec.r.budget;
  if (rec.r.budget.deadline_us >
      0) // as long as the recorded run had (relative: the kernel adds now)
    req.budget.deadline_us = std::max<timestamp_us>(1, rec.r.budget.deadline_us - rec.r.created_at);
  std::promise<expected<actors::submit_reply>> submitted;
  n.kernel().submit(std::move(req), [&submitted](expected<actors::submit_reply> r) {
    submitted.set_value(std::move(r));
  });
  auto reply = submitted.get_future().get();
  if (!reply) {
    n.hub().unsubscribe(sub);
    return sreh::error{reply.error().code,
                       "replay: the goal was refused: " + reply.error().message};
  }
  replay_report out;
  out.source_run = rec.r.id;
  out.replay_run = reply->run_id;
  out.goal = rec.r.goal;

  auto deadline = steady::now() + opts.run_timeout;
  std::vector<requested_approval> approvals;
  while (!follower.wait(out.replay_run, deadline, approvals)) {
    if (approvals.empty()) {
      n.kernel().cancel(out.replay_run, "sreh-replay", [](expected<run_state>) {});
      follower.wait(out.replay_run, steady::now() + std::chrono::seconds(10), approvals);
      out.notes.push_back(fmt::format("the replay did not end within {} s and was cancelled",
                                      opts.run_timeout.count()));
      break;
    }
    for (const auto& a : approvals)
      out.notes.push_back(decide_as_recorded(n, rec, a));
  }
  n.hub().unsubscribe(sub);
  auto run = n.store().get_run(out.replay_run);
  auto steps = n.store().get_steps(out.replay_run);
  if (!run || !*run || !steps)
    return sreh::error{errc::unavailable, "replay: cannot read the replayed run back"};

  const auto& a = rec.steps;
  const auto& b = *steps;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    step_comparison c;
    c.n = static_cast<std::int64_t>(i) + 1;
    if (i < a.size())
      c.recorded = describe(a[i]);
    if (i < b.size())
      c.replayed = describe(b[i]);
    if (i >= a.size())
      c.difference = "the recording ends before this step";
    else if (i >= b.size())
      c.difference = "the replay ended before this step";
    else
      c.difference = difference(a[i], b[i]);
    c.same = c.difference.empty();
    if (!c.same && out.first_divergence == 0)
      out.first_divergence = c.n;
    if (i < a.size() && a[i].kind == step_kind::reason) {
      ++out.reason_steps;
      if (i < b.size() && b[i].kind == step_kind::reason &&
          request_hash(a[i]) == request_hash(b[i]))
        ++out.same_request_hashes;
    }
    out.steps.push_back(std::move(c));
  }
  out.recorded_end = end_of(rec.r);
  out.replayed_end = end_of(**run);
  out.same_end = out.recorded_end == out.replayed_end;
  for (auto& m : t->misses())
    out.notes.push_back("the replay asked for " + m);
  for (auto& p : follower.problems())
    out.notes.push_back(p);
  parts->reset(); // actors, then the writer, then the store; the scratch dir goes last
  out.wall_ms = std::chrono::duration<double, std::milli>(steady::now() - started).count();
  return out;
}

std::string render_text(const replay_report& r) {
  std::string out = fmt::format("replay of run {}: \"{}\"\n  on a scratch node as run {}: the "
                                "recorded model answers and tool results, no model server\n\n",
                                r.source_run, clip(r.goal, 70), r.replay_run);
  out += fmt::format("  {:>3}  {:<66}  {}\n", "#", "recorded", "replay");
  for (const auto& s : r.steps)
    out += fmt::format("  {:>3}  {:<66}  {}\n", s.n, s.recorded.empty() ? "-" : s.recorded,
                       s.same ? std::string{"same"} : "DIFFERS: " + s.difference);
  out += fmt::format("\n  recorded end: {}\n  replay end:   {}{}\n", clip(r.recorded_end, 100),
                     clip(r.replayed_end, 100), r.same_end ? "  (same)" : "  (DIFFERS)");
  if (r.reason_steps > 0)
    out += fmt::format("  model requests: {} of {} reason steps assembled the same request "
                       "(hash){}\n",
                       r.same_request_hashes, r.reason_steps,
                       r.same_request_hashes == r.reason_steps
                         ? ""
                         : " (a different request: the prompt, the tools, the context budget or an "
                           "earlier step changed)");
  for (const auto& n : r.notes)
    out += "  note: " + n + "\n";
  if (r.same())
    out += fmt::format("\nsame steps and end: {} steps ({:.0f} ms)\n", r.steps.size(), r.wall_ms);
  else
    out += fmt::format("\ndiverged{}\n", r.first_divergence
                                           ? fmt::format(" at step {}", r.first_divergence)
                                           : std::string{": the run ended differently"});
  return out;
}

std::string render_json(const replay_report& r) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("run");
  w.String(r.source_run.c_str());
  w.Key("replay_run");
  w.String(r.replay_run.c_str());
  w.Key("same");
  w.Bool(r.same());
  w.Key("first_divergence");
  if (r.first_divergence)
    w.Int64(r.first_divergence);
  else
    w.Null();
  w.Key("steps");
  w.StartArray();
  for (const auto& s : r.steps) {
    w.StartObject();
    w.Key("n");
    w.Int64(s.n);
    w.Key("recorded");
    w.String(s.recorded.c_str());
    w.Key("replayed");
    w.String(s.replayed.c_str());
    w.Key("same");
    w.Bool(s.same);
    if (!s.same) {
      w.Key("difference");
      w.String(s.difference.c_str());
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("recorded_end");
  w.String(r.recorded_end.c_str());
  w.Key("replayed_end");
  w.String(r.replayed_end.c_str());
  w.Key("same_end");
  w.Bool(r.same_end);
  w.Key("reason_steps");
  w.Int64(r.reason_steps);
  w.Key("same_request_hashes");
  w.Int64(r.same_request_hashes);
  w.Key("notes");
  w.StartArray();
  for (const auto& n : r.notes)
    w.String(n.c_str());
  w.EndArray();
  w.Key("wall_ms");
  w.Double(r.wall_ms);
  w.EndObject();
  return buf.GetString();
}

} // namespace sreh::eval
