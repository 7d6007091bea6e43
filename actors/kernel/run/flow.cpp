// Flow runs (docs/flows.md, "Running a flow"): a run whose steps come from a flow instead of the
// reasoner. `flows::next_action` (core/flows/runner.hpp) decides, from the pinned definition and
// the journal, what the run does next; this file journals it with the run actor's protocol:
// tool calls go through policy, approvals and the idempotency keys of any tool step; approvals
// and timers park the run; a goal, another flow or a parallel block starts runs of its own and
// parks until the kernel sees their join decided.

#include <fmt/format.h>

#include "actors/kernel/run/actor_impl.hpp"
#include "config/flows/flow_file.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/flows/inputs.hpp"
#include "core/flows/runner.hpp"

namespace sreh::actors::run_impl {

/// What a flow run reads from its spec once per actor.
struct flow_state {
  flows::flow f;
  std::string parallel; // a branch run: the parallel step and the branch
  std::string branch;
  std::map<std::string, std::string> inputs;
  std::map<std::string, flows::step_result> prior;
  /// The runner's records of the journal's first `settled_upto` steps: those settled (succeeded,
  /// failed, cancelled), which never change, so each is read once per actor, not at every step.
  std::vector<flows::record> settled;
  std::size_t settled_upto = 0;
};

namespace {

expected<std::shared_ptr<flow_state>> read_spec(const run& r) {
  auto doc = json::parse_object(r.spec);
  if (!doc)
    return sreh::error{errc::internal, "its spec is not JSON: " + doc.error().message};
  auto fs = std::make_shared<flow_state>();
  auto text = json::string_or(*doc, "text");
  auto source = json::string_or(*doc, "source");
  auto f = config::load_flow_string(text, source.empty() ? json::string_or(*doc, "flow") : source);
  if (!f)
    return sreh::error{errc::internal, "its pinned definition does not load: " + f.error().message};
  fs->f = std::move(*f);
  fs->parallel = json::string_or(*doc, "parallel");
  fs->branch = json::string_or(*doc, "branch");
  if (auto m = doc->FindMember("inputs"); m != doc->MemberEnd() && m->value.IsObject()) {
    for (const auto& x : m->value.GetObject())
      fs->inputs[x.name.GetString()] = json::stringify(x.value);
  }
  if (auto m = doc->FindMember("prior"); m != doc->MemberEnd() && m->value.IsObject())
    for (const auto& x : m->value.GetObject()) {
      flows::step_result res;
      if (x.value.IsObject()) {
        res.status = json::string_or(x.value, "status");
        if (auto o = x.value.FindMember("output"); o != x.value.MemberEnd())
          res.output = json::stringify(o->value);
      }
      fs->prior[x.name.GetString()] = std::move(res);
    }
  return fs;
}

/// What ties a journaled step to its flow step: `{"flow": {"step", "phase", "attempt"}}`, the
/// `detail` of the step's decision (as the reasoner's hypotheses are for a goal run's steps).
std::string flow_detail(const flows::action& a) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    w.Key("flow");
    w.StartObject();
    json::field(w, "step", a.step);
    json::field(w, "phase", to_string(a.phase));
    json::field(w, "attempt", a.attempt);
    if (a.kind == flows::action::call_tool && a.timeout_ms > 0)
      json::field(w, "timeout_ms", a.timeout_ms);
    w.EndObject();
    w.EndObject();
  });
}

/// The decision of a flow's own step (not a tool call): the thought and the flow detail.
std::string tag(const flows::action& a, const std::string& thought) {
  return json::object("thought", thought, "detail", json::raw_text{flow_detail(a)});
}

/// A journaled step as the runner reads it: a step with an outcome that belongs to a flow step.
std::optional<flows::record> record_of(const step& s, const step_facts& f) {
  if (s.state == step_state::intent || !f.flow)
    return std::nullopt;
  flows::record r;
  r.step = f.flow->step;
  r.phase = f.flow->phase;
  r.attempt = f.flow->attempt;
  r.ok = s.state == step_state::succeeded;
  r.final = !r.ok && !retryable(s);
  r.result = s.result;
  r.error = s.error;
  r.started_at = s.started_at;
  r.finished_at = s.finished_at;
  return r;
}

bool settled(step_state s) {
  return s == step_state::succeeded || s == step_state::failed || s == step_state::cancelled;
}

/// The journal as the runner reads it. `scratch` holds the records when a step past the settled
/// ones has an outcome that may still change (in doubt).
const std::vector<flows::record>& records_of(flow_state& fs, const run_journal& j,
                                             std::vector<flows::record>& scratch) {
  const auto& steps = j.steps;
  for (; fs.settled_upto < steps.size() && settled(steps[fs.settled_upto].state); ++fs.settled_upto)
    if (auto r = record_of(steps[fs.settled_upto], j.facts(steps[fs.settled_upto])))
      fs.settled.push_back(std::move(*r));
  if (fs.settled_upto == steps.size())
    return fs.settled;
  scratch = fs.settled;
  for (auto i = fs.settled_upto; i < steps.size(); ++i)
    if (auto r = record_of(steps[i], j.facts(steps[i])))
      scratch.push_back(std::move(*r));
  return scratch;
}

/// When the run's last action (a step of a tool that changes something) ended; 0 for none.
timestamp_us last_action_end(const runtime& rt, const std::vector<step>& steps) {
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) {
    if (s->kind != step_kind::tool || s->state == step_state::intent || s->finished_at == 0)
      continue;
    if (rt.tools.mutating()(s->tool))
      return s->finished_at;
  }
  return 0;
}

/// World state as a check after the run's last action may read it: only an observation begun
/// after that action ended, so that a check never judges an action on the state before it.
flows::world_lookup world_of(std::shared_ptr<const world_snapshot> snap, timestamp_us action_end) {
  return [snap, action_end](const std::string& entity,
                            const std::string& metric) -> expected<expr::value> {
    if (!snap)
      return sreh::error{errc::unavailable, "world state has not been observed yet"};
    if (snap->begun_at <= action_end)
      return sreh::error{errc::unavailable,
                         fmt::format("world state not yet observed since the last action "
                                     "(newest observation: version {})",
                                     snap->generation)};
    for (const auto& e : snap->entities) {
      if (e.id != entity)
        continue;
      if (auto m = e.metrics.find(metric); m != e.metrics.end())
        return expr::value{m->second};
      if (auto p = e.props.find(metric); p != e.props.end())
        return expr::value{p->second};
      return sreh::error{errc::not_found, fmt::format("world.{}.{}: {} '{}' has no metric '{}'",
                                                      entity, metric, e.kind, entity, metric)};
    }
    return sreh::error{errc::not_found, fmt::format("world.{}.{}: no entity '{}' in world state",
                                                    entity, metric, entity)};
  };
}

std::string key_of(const run& r, const flows::action& a) {
  if (a.phase == flows::phase::compensate)
    return fmt::format("{}/{}/compensate", r.id, a.step);
  return a.attempt > 1 ? fmt::format("{}/{}#{}", r.id, a.step, a.attempt)
                       : fmt::format("{}/{}", r.id, a.step);
}

/// The request of one run a step starts, or why it cannot start.
expected<goal_request> request_for(const runtime& rt, const run& parent, const flow_state& fs,
                                   const flows::child_run& c, const std::string& prior) {
  goal_request req;
  req.idempotency_key = parent.id + "/" + c.key;
  req.submitter = parent.submitter;
  req.parent = parent.id;
  req.budget = rt.cfg.budget;
  switch (c.kind) {
  case flows::child_run::goal_run:
    req.goal = c.goal;
    req.labels = c.labels;
    return req;
  case flows::child_run::flow_run: {
    const flows::flow* callee = nullptr;
    for (const auto& f : rt.cfg.flows.loaded)
      if (f.name == c.flow)
        callee = &f;
    if (!callee)
      return sreh::error{errc::not_found, fmt::format("no flow '{}' on this node", c.flow)};
    auto inputs = flows::resolve_inputs(*callee, c.inputs);
    if (!inputs)
      return sreh::error{inputs.error().code,
                         fmt::format("flow {}: {}", c.flow, inputs.error().message)};
    req.kind = "flow";
    req.goal = "flow " + callee->name;
    req.labels = parent.labels;
    req.budget.max_steps = std::max<std::int64_t>(req.budget.max_steps, flows::max_run_steps);
    req.spec = flows::pin(*callee, *inputs);
    return req;
  }
  case flows::child_run::branch_run: {
    req.kind = "flow";
    req.goal = fmt::format("flow {}: branch {} of {}", fs.f.name, c.branch, c.parallel);
    req.labels = parent.labels;
    req.budget.max_steps = std::max<std::int64_t>(req.budget.max_steps, flows::max_run_steps);
    req.spec = flows::pin(fs.f, fs.inputs,
                          fmt::format(R"(,"parallel":{},"branch":{},"prior":{})",
                                      json::quote(c.parallel), json::quote(c.branch), prior));
    return req;
  }
  }
  return sreh::error{errc::internal, "unknown run kind"};
}

std::string runs_args(const flows::action& a, const std::vector<goal_request>& reqs) {
  auto runs = json::build([&](json::writer& w) {
    w.StartArray();
    for (std::size_t i = 0; i < reqs.size(); ++i)
      json::write_object(w, "key", a.runs[i].key, "kind", reqs[i].kind, "goal", reqs[i].goal);
    w.EndArray();
  });
  return json::object("join", to_string(a.join), "timeout_ms", a.timeout_ms, "single_goal",
                      a.runs.size() == 1 && a.runs.front().kind == flows::child_run::goal_run,
                      "runs", json::raw_text{runs});
}

/// The run's pinned definition, read once per actor; null (the run failed) when it cannot be.
flow_state* pinned(self_ptr self) {
  auto& st = self->state;
  if (!st.flow) {
    auto fs = read_spec(st.journal.r);
    if (!fs) {
      fail(self, fmt::format("flow run {}: {}", st.journal.r.id, fs.error().message));
      return nullptr;
    }
    st.flow = std::move(*fs);
  }
  return st.flow.get();
}

/// What the runner says the run does next, from the journal as it is now.
flows::action next_of(self_ptr self, flow_state& fs) {
  auto& st = self->state;
  std::vector<flows::record> scratch;
  const auto& records = records_of(fs, st.journal, scratch);
  auto snap = st.rt->world ? st.rt->world->current() : nullptr;
  flows::run_view view{fs.f,
                       fs.parallel,
                       fs.branch,
                       fs.inputs,
                       fs.prior,
                       records,
                       st.rt->clock.now_us(),
                       world_of(snap, last_action_end(*st.rt, st.journal.steps))};
  view.world_retry_ms = std::max<std::int64_t>(st.rt->cfg.works.world_sync_ms, 100);
  view.world_version = snap ? snap->generation : 0;
  return flows::next_action(view);
}

} // namespace

void advance_flow(self_ptr self) {
  auto& st = self->state;
  auto& j = st.journal;
  auto* pin = pinned(self);
  if (pin == nullptr)
    return;
  auto& fs = *pin;
  auto a = next_of(self, fs);
  auto thought = a.step.empty() ? a.message : fmt::format("{}: {}", a.step, a.message);
  switch (a.kind) {
  case flows::action::call_tool: {
    decision d;
    d.kind = decision::call_tool;
    d.tool = a.tool;
    d.args = a.args;
    d.thought = thought;
    d.detail = flow_detail(a);
    d.idempotency_key = key_of(j.r, a);
    // The step's decision carries the flow tag: the journal is read back through it.
    return propose(self, d);
  }
  case flows::action::approve: {
    j.add_flow_intent(step_kind::approval,
                      json::object("approvers", a.approval.approvers, "timeout_ms",
                                   a.approval.timeout_ms, "reason", a.approval.reason),
                      tag(a, thought));
    policy::decision pd;
    pd.effect = policy::verdict::require_approval;
    pd.rule_id = fmt::format("flow:{}/{}", fs.f.name, a.step);
    pd.reason = a.approval.reason;
    pd.approval.approvers = a.approval.approvers;
    pd.approval.roles = a.approval.roles;
    pd.approval.timeout_s = (a.approval.timeout_ms + 999) / 1000;
    pd.approval.on_timeout = "deny";
    st.parked_on = j.request_approval(j.steps.back().n, pd);
    return commit(self, after_commit::park);
  }
  case flows::action::sleep:
    j.add_timer(0, a.until_us, thought, tag(a, thought));
    return commit(self, after_commit::park_timer);
  case flows::action::check:
    if (const auto& recorded = st.rt->replay.checks) { // a replay judges as the recording did
      if (auto c = recorded(a.step, a.attempt)) {
        a.ok = c->ok, a.result = std::move(c->result), a.error = std::move(c->error);
      } else {
        a.ok = false;
        a.error =
          fmt::format("replay: the recording has no check {} of flow step '{}'", a.attempt, a.step);
        a.result = json::object("error", a.error);
      }
    }
    j.add_flow_record(step_kind::observe, a.ok, a.result, a.error, tag(a, thought));
    return commit(self, after_commit::advance);
  case flows::action::start_runs: {
    std::vector<goal_request> reqs;
    for (const auto& c : a.runs) {
      auto req = request_for(*st.rt, j.r, fs, c, a.output.empty() ? "{}" : a.output);
      if (!req) { // the step fails at once; nothing started
        j.add_flow_record(step_kind::subruns, false, "{}", req.error().message, tag(a, thought));
        return commit(self, after_commit::advance);
      }
      reqs.push_back(std::move(*req));
    }
    j.add_flow_intent(step_kind::subruns, runs_args(a, reqs), tag(a, thought));
    return commit(self, after_commit::start_runs);
  }
  case flows::action::succeed: {
    decision d;
    d.kind = decision::conclude;
    d.thought = a.message;
    d.conclusion = a.message;
    d.detail = a.output.empty() ? "{}" : a.output;
    j.add_conclusion(d);
    return finish(self, run_state::succeeded, a.message);
  }
  case flows::action::fail:
    return fail(self, a.message);
  }
}

void start_runs(self_ptr self) {
  auto& st = self->state;
  auto& j = st.journal;
  auto* pin = pinned(self);
  if (pin == nullptr)
    return;
  // The requests are rebuilt from the flow (the same action as when the intent was journaled:
  // the runner is a function of the journal, and the intent adds no record).
  auto a = next_of(self, *pin);
  if (a.kind != flows::action::start_runs) {
    st.rt->log->error("flow run {}: step {} started runs the flow no longer asks for", j.r.id,
                      j.steps.back().n);
    return fail(self, "the flow's definition and its journal disagree");
  }
  auto pending = std::make_shared<std::size_t>(a.runs.size());
  auto ids = std::make_shared<std::vector<std::string>>(a.runs.size());
  auto failed = std::make_shared<std::string>();
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    auto req = request_for(*st.rt, j.r, *pin, a.runs[i], a.output.empty() ? "{}" : a.output);
    if (!req) {
      *failed = req.error().message;
      if (--*pending == 0)
        break;
      continue;
    }
    auto done = [self, pending, ids, failed, i] {
      if (--*pending > 0)
        return;
      auto& j = self->state.journal;
      if (!failed->empty()) {
        // Nothing is known of the runs that did start: the step fails, and cancelling the
        // flow run cancels them.
        self->state.journal.runs_joined(false, "{}", "cannot start its runs: " + *failed);
        return commit(self, after_commit::advance);
      }
      std::string list = "[";
      for (const auto& id : *ids)
        list += (list.size() > 1 ? "," : "") + json::quote(id);
      j.wait_for_runs(list + "]");
      commit(self, after_commit::park_runs);
    };
    self->request(st.kernel, caf::infinite, submit_atom::value, std::move(*req))
      .then(
        [ids, failed, i, done](kernel_reply& rep) {
          if (rep.err)
            *failed = rep.err.message;
          else
            (*ids)[i] = rep.run_id;
          done();
        },
        [failed, done](caf::error& e) {
          *failed = caf::to_string(e);
          done();
        });
  }
  if (*pending == 0) {
    j.runs_joined(false, "{}", "cannot start its runs: " + *failed);
    commit(self, after_commit::advance);
  }
}

void on_runs_joined(self_ptr self, const std::vector<flows::child_end>& ends, bool timed_out) {
  auto& st = self->state;
  auto& j = st.journal;
  if (j.steps.empty() || j.steps.back().kind != step_kind::subruns ||
      j.steps.back().state != step_state::intent) {
    st.rt->log->error("flow run {}: woken for runs it does not wait for", j.r.id);
    return self->quit();
  }
  const auto wait = j.facts(j.steps.back()).runs.value_or(runs_wait{});
  auto res = flows::join(wait.join, wait.single_goal, ends);
  if (!res.decided && timed_out) {
    res.decided = true;
    res.ok = false;
    res.error = fmt::format("timed out after {} s", wait.timeout_ms / 1000);
    res.cancel.clear();
    for (const auto& e : ends)
      if (e.state.empty())
        res.cancel.push_back(e.key);
  }
  if (!res.decided) {
    st.rt->log->error("flow run {}: woken before its runs' join was decided", j.r.id);
    return self->quit();
  }
  for (const auto& key : res.cancel)
    for (const auto& e : ends)
      if (e.key == key && !e.run_id.empty())
        self
          ->request(st.kernel, caf::infinite, cancel_atom::value, e.run_id,
                    fmt::format("flow run {} (step {}: {})", j.r.id, j.steps.back().n,
                                res.ok ? "join any succeeded" : "the join failed"))
          .then([](kernel_reply&) {}, [](caf::error&) {});
  auto runs = json::array(ends, [](json::writer& w, const flows::child_end& e) {
    json::write_object(w, "key", e.key, "run", e.run_id, "state",
                       e.state.empty() ? "cancelled" : e.state, "conclusion", e.conclusion, "error",
                       e.error);
  });
  j.runs_joined(res.ok,
                json::object("runs", json::raw_text{runs}, "output", json::raw_text{res.output}),
                res.error);
  commit(self, after_commit::advance);
}

} // namespace sreh::actors::run_impl
