#include "eval/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>

#include "actors/gateway/llm_provider.hpp"
#include "actors/tools/forwarding_tool.hpp"
#include "core/base/json.hpp"
#include "core/conversation/message.hpp"
#include "core/evolve/candidate.hpp"
#include "core/journal/compare.hpp"
#include "core/journal/step_text.hpp"
#include "core/llm/wire.hpp"
#include "eval/follow.hpp"
#include "eval/replay/recorded_answer.hpp"
#include "net/node/node_parts.hpp"
#include "persistence/store/store.hpp"

namespace sreh::eval {

namespace {

using steady = std::chrono::steady_clock;
namespace wire = llm::wire;
using namespace detail;
using journal::is_compensation;
using journal::key_of;
using journal::object_of;
using journal::was_called;

/// What the recorded tools answer with: the recorded outcomes of calls, undos and checks, each
/// by tool and arguments in journal order. Thread-safe (tools are called from any run thread).
/// A flow check's key: its flow step and attempt.
std::string flow_key(const std::string& step, int attempt) {
  return fmt::format("{}#{}", step, attempt);
}

/// The key of a flow run's check step (an observe step tagged with its flow step), if `s` is one.
std::optional<std::string> flow_check_of(const step& s) {
  if (s.kind != step_kind::observe || s.decision.find("\"flow\"") == std::string::npos)
    return std::nullopt;
  auto d = json::parse_object(s.decision);
  const auto* detail = d ? json::member(*d, "detail") : nullptr;
  const auto* flow = detail && detail->IsObject() ? json::member(*detail, "flow") : nullptr;
  if (flow == nullptr || !flow->IsObject())
    return std::nullopt;
  auto id = json::string_or(*flow, "step");
  auto attempt = json::int_of(*flow, "attempt").value_or(1);
  return flow_key(id, static_cast<int>(attempt));
}

class tape {
 public:
  explicit tape(const std::vector<step>& steps) {
    for (const auto& s : steps) {
      if (was_called(s)) {
        auto& q = is_compensation(s) ? undos_ : calls_;
        q[key_of(s.tool, s.args)].push_back(
          {s.state == step_state::succeeded, s.result.empty() ? "{}" : s.result, s.error});
      } else if (auto flow = flow_check_of(s)) {
        flow_checks_[*flow].push_back(
          {s.state == step_state::succeeded, s.result.empty() ? "{}" : s.result, s.error});
      } else if (s.kind == step_kind::observe) {
        auto args = object_of(s.args);
        std::int64_t n = args ? json::int_of(*args, "for_step").value_or(0) : 0;
        auto res = object_of(s.result);
        if (n < 1 || n > static_cast<std::int64_t>(steps.size()) || !res)
          continue;
        const auto& of = steps.at(static_cast<std::size_t>(n - 1));
        const auto* holds = json::member(*res, "holds");
        const auto* observed = json::member(*res, "observed");
        checks_[key_of(of.tool, of.args)].push_back(
          {holds && holds->IsBool() && holds->GetBool(),
           observed ? json::stringify(*observed) : std::string{"{}"}});
      }
    }
  }

  /// The recorded outcome of the next check of flow step `step`, attempt `attempt`.
  std::optional<actors::recorded_check> take_flow_check(const std::string& step, int attempt) {
    std::lock_guard<std::mutex> lock{mu_};
    auto i = flow_checks_.find(flow_key(step, attempt));
    if (i == flow_checks_.end() || i->second.empty()) {
      misses_.push_back(fmt::format("check {} of flow step '{}'", attempt, step));
      return std::nullopt;
    }
    auto c = std::move(i->second.front());
    i->second.pop_front();
    return c;
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
  std::map<std::string, std::deque<actors::recorded_check>> flow_checks_; // by flow_key
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

/// The messages (and replies) the recorded run took from step `n` on, one step each, when its
/// step `n` took one.
std::vector<conversation::message> recorded_messages(const std::vector<step>& steps,
                                                     std::int64_t n) {
  std::vector<conversation::message> out;
  for (auto i = static_cast<std::size_t>(std::max<std::int64_t>(n, 1) - 1); i < steps.size(); ++i) {
    const auto& s = steps[i];
    if (s.kind != step_kind::message && s.kind != step_kind::reply)
      break;
    auto m = conversation::message_from_json(s.args);
    if (!m)
      break; // the replay then diverges at this step, named by the comparison
    out.push_back(std::move(*m));
  }
  return out;
}

/// Refuses a config whose model is not of the kind that drove the recording; a language model
/// is set to answer from the recorded reason steps.
sreh::error use_recorded_model(const recording& rec, actors::model_provider& provider) {
  if (rec.r.kind == "flow")
    return {}; // a flow's steps come from its pinned definition: no reasoner is asked
  bool recorded_reasons = false;
  for (const auto& s : rec.steps)
    recorded_reasons = recorded_reasons || s.kind == step_kind::reason;
  auto* llm = provider.as_llm();
  if (recorded_reasons && !llm)
    return sreh::error{errc::invalid_argument,
                       fmt::format("run {} was driven by a language model (it has reason steps), "
                                   "but this config's model is '{}': replay it with the config "
                                   "it ran with",
                                   rec.r.id, provider.name())};
  if (!recorded_reasons && llm)
    return sreh::error{errc::invalid_argument,
                       fmt::format("run {} was driven by a deterministic reasoner (it has no "
                                   "reason steps), but this config's model is '{}': replay it "
                                   "with the config it ran with",
                                   rec.r.id, provider.name())};
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
  return {};
}

/// The node's config (its tools, policy, model and budgets) on a store in `dir`, alone.
config::node_config scratch_config(const config::node_config& cfg, const std::string& dir) {
  config::node_config scratch = cfg;
  scratch.node_id = "replay";
  scratch.data_dir = dir;
  scratch.store = {};
  scratch.store.path = dir + "/sreh.db";
  scratch.nats = {};
  scratch.cluster = {};
  return scratch;
}

/// The recorded run's goal, as submitted: a flow run with the flow and inputs it pinned; a goal
/// run with what it started with besides its goal (a Work's story, the run it follows up) — all
/// of its spec but the versions, which the replay pins itself.
goal_request goal_of(const run& r) {
  goal_request req;
  if (r.kind == "flow") {
    req.kind = r.kind;
    req.spec = r.spec;
  } else {
    req.spec = evolve::unpinned(r.spec);
  }
  req.goal = r.goal;
  req.submitter = r.submitter;
  req.labels = r.labels;
  req.budget = r.budget;
  if (r.budget.deadline_us > 0) // as long as the recorded run had (relative: the kernel adds now)
    req.budget.deadline_us = std::max<timestamp_us>(1, r.budget.deadline_us - r.created_at);
  return req;
}

/// Waits for the replay to end, deciding its approvals as recorded; cancels it after `timeout`.
void follow_to_end(net::node_parts& n, const recording& rec, run_follower& follower,
                   std::chrono::seconds timeout, replay_report& out) {
  auto deadline = steady::now() + timeout;
  std::vector<requested_approval> approvals;
  while (!follower.wait(out.replay_run, deadline, approvals)) {
    if (approvals.empty()) {
      n.kernel().cancel(out.replay_run, "sreh-replay", [](expected<run_state>) {});
      follower.wait(out.replay_run, steady::now() + std::chrono::seconds(10), approvals);
      out.notes.push_back(
        fmt::format("the replay did not end within {} s and was cancelled", timeout.count()));
      break;
    }
    for (const auto& a : approvals)
      out.notes.push_back(decide_as_recorded(n, rec, a));
  }
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
  if (rec.r.kind != "goal" && rec.r.kind != "flow")
    return sreh::error{
      errc::invalid_argument,
      fmt::format("run {} is a {} run: only goal and flow runs replay", run_id, rec.r.kind)};
  auto steps = s.get_steps(run_id);
  if (!steps)
    return steps.error();
  rec.steps = std::move(*steps);
  for (const auto& x : rec.steps)
    if (x.kind == step_kind::subruns)
      return sreh::error{errc::invalid_argument,
                         fmt::format("run {} started runs of its own at step {}: a flow run that "
                                     "starts runs does not replay (their journals would have to "
                                     "replay with it)",
                                     run_id, x.n)};
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
  if (auto err = use_recorded_model(rec, *provider))
    return err;
  auto t = std::make_shared<tape>(rec.steps);

  temp_dir dir;
  if (dir.path.empty())
    return sreh::error{errc::internal, "replay: cannot create a scratch data dir"};
  auto scratch = scratch_config(cfg, dir.path);

  run_follower follower; // outlives the node: its callbacks may run until the node stops
  net::node_parts::recorded_answers recorded;
  recorded.tools = [t](actors::tool_ptr tool) -> actors::tool_ptr {
    return std::make_shared<recorded_tool>(std::move(tool), t);
  };
  recorded.hooks.checks = [t](const std::string& step, int attempt) {
    return t->take_flow_check(step, attempt);
  };
  recorded.hooks.timers_at_once = true;
  recorded.hooks.messages = [steps = rec.steps](std::int64_t n) {
    return recorded_messages(steps, n);
  };
  auto parts = net::node_parts::start(scratch, std::move(tools), std::move(policy),
                                      std::move(provider), recorded);
  if (!parts)
    return sreh::error{parts.error().code,
                       "replay: cannot start a scratch node: " + parts.error().message};
  auto& n = **parts;
  auto sub = n.hub().subscribe(
    [&follower](const actors::event_hub::batch& b) { follower.on_events(b->events); });

  auto req = goal_of(rec.r);
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
  out.kind = rec.r.kind;

  follow_to_end(n, rec, follower, opts.run_timeout, out);
  n.hub().unsubscribe(sub);
  auto run = n.store().get_run(out.replay_run);
  auto steps = n.store().get_steps(out.replay_run);
  if (!run || !*run || !steps)
    return sreh::error{errc::unavailable, "replay: cannot read the replayed run back"};

  auto cmp = journal::compare(rec.steps, *steps);
  out.steps = std::move(cmp.steps);
  out.first_divergence = cmp.first_divergence;
  out.reason_steps = cmp.reason_steps;
  out.same_request_hashes = cmp.same_request_hashes;
  out.recorded_end = journal::end_of(rec.r);
  out.replayed_end = journal::end_of(**run);
  out.same_end = out.recorded_end == out.replayed_end;
  out.recorded_succeeded = rec.r.state == run_state::succeeded;
  out.replayed_succeeded = (*run)->state == run_state::succeeded;
  auto tool_steps = [](const std::vector<step>& xs) {
    return static_cast<std::int64_t>(
      std::count_if(xs.begin(), xs.end(), [](const step& x) { return x.kind == step_kind::tool; }));
  };
  out.recorded_tool_steps = tool_steps(rec.steps);
  out.replayed_tool_steps = tool_steps(*steps);
  out.misses = static_cast<std::int64_t>(t->misses().size());
  for (auto& m : t->misses())
    out.notes.push_back("the replay asked for " + m);
  for (auto& p : follower.problems())
    out.notes.push_back(p);
  parts->reset(); // actors, then the writer, then the store; the scratch dir goes last
  out.wall_ms = std::chrono::duration<double, std::milli>(steady::now() - started).count();
  return out;
}

} // namespace sreh::eval
