// Durable `reason` steps: a run driven by a language model behind the gateway
// (actors/gateway/llm_provider.hpp). Each model call is a reason step: its intent (route, model,
// request hash, context size and trim report) is committed before the call, its outcome records
// the whole response. The call runs on the gateway's transport thread and comes back as a
// (called_atom, token) message. A reason step with an outcome is never asked again: recovery
// and every later turn read the recorded response. The tool calls of a response become tool
// steps one after another (policy, approvals, idempotency as for any step); bad output becomes
// a failed tool step or a note the model sees on its next turn, up to model.max_repairs.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <set>

#include "actors/gateway/llm_provider.hpp"
#include "actors/hub/event_hub.hpp"
#include "actors/kernel/run/actor_impl.hpp"
#include "actors/tools/tool.hpp"
#include "core/base/failpoint.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/llm/answer.hpp"
#include "core/llm/wire.hpp"

namespace sreh::actors::run_impl {

namespace {

/// Unusable answers since the last tool step that succeeded: bad responses and rejected calls.
std::pair<std::int64_t, std::string> repairs_so_far(const run_journal& j) {
  std::int64_t count = 0;
  std::string last;
  for (auto i = j.steps.rbegin(); i != j.steps.rend(); ++i) {
    if (i->kind == step_kind::tool && i->state == step_state::succeeded)
      break;
    if (i->kind == step_kind::reason && i->state == step_state::succeeded) {
      if (const auto& r = j.facts(*i).answer; r && !r->bad.empty()) {
        ++count;
        if (last.empty())
          last = r->bad;
      }
    } else if (i->kind == step_kind::tool && j.facts(*i).rejected) {
      ++count;
      if (last.empty())
        last = i->error;
    }
  }
  return {count, last};
}

/// The run's journal as its model saw it, kept between its turns.
llm::prior_steps_cache& prior_steps(run_state_t& st) {
  if (!st.prior_steps)
    st.prior_steps = std::make_shared<llm::prior_steps_cache>();
  return *st.prior_steps;
}

/// The note for the model when its last answer (before step `before`) was unusable.
std::string notes_before(const run_journal& j, std::int64_t before) {
  for (auto i = j.steps.rbegin(); i != j.steps.rend(); ++i) {
    if (i->n >= before || i->kind != step_kind::reason)
      continue;
    if (i->state != step_state::succeeded)
      return {};
    const auto& r = j.facts(*i).answer;
    if (!r || r->bad.empty())
      return {};
    return fmt::format("[journal step {}] Your last answer could not be used: {}. Call one of "
                       "the tools with JSON arguments that match its schema, or answer with "
                       "your conclusion as plain text.",
                       i->n, r->bad);
  }
  return {};
}

std::string calls_json(const std::vector<llm::tool_call>& calls) {
  return json::array(calls, [](json::writer& w, const llm::tool_call& c) {
    json::write_object(w, "id", c.id, "name", c.name, "arguments", c.arguments);
  });
}

/// Why a response cannot be used as it is ("" when it can).
std::string bad_answer(const llm::chat_response& r) {
  if (!r.tool_calls.empty())
    return {};
  if (r.finish == llm::finish_reason::refusal)
    return "the model refused" + (r.refusal.empty() ? std::string{} : ": " + r.refusal);
  if (r.finish == llm::finish_reason::length)
    return "the answer was cut at max_tokens";
  auto blank = r.text.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank)
    return "the answer was empty";
  return {};
}

tool_ptr tool_of_wire(const tool_registry& tools, const std::string& wire) {
  if (auto t = tools.find(wire))
    return t;
  for (const auto& t : tools.all())
    if (wire_tool_name(t->name()) == wire)
      return t;
  return nullptr;
}

/// The tool call of reason step `rs` the run must make next, if any.
std::optional<llm::tool_call> next_call(const run_journal& j, const step& rs) {
  const auto& r = j.facts(rs).answer;
  if (!r)
    return std::nullopt;
  std::set<std::string> done;
  for (const auto& s : j.steps)
    if (const auto& f = j.facts(s);
        s.n > rs.n && s.kind == step_kind::tool && f.reason_step == rs.n)
      done.insert(f.tool_call_id);
  for (const auto& c : r->calls)
    if (!done.contains(c.id))
      return c;
  return std::nullopt;
}

void call_model(self_ptr self, llm_provider& llm, std::int64_t n);

/// Journals a tool call the run refuses before policy (bad model output) as a failed step: the
/// model sees the error as the call's result on its next turn.
void reject_call(self_ptr self, decision d, const std::string& why) {
  auto& j = self->state.journal;
  j.add_tool_intent(
    d, json::object("effect", "rejected", "rule", nullptr, "reason", "bad model output"));
  j.record_outcome(j.steps.back().n, false, "{}", why);
  commit(self, after_commit::advance);
}

/// Turns tool call `c` of reason step `rs` into a tool step.
void make_tool_step(self_ptr self, std::int64_t rs, const llm::tool_call& c,
                    const std::string& thought) {
  auto& st = self->state;
  decision d;
  d.kind = decision::call_tool;
  d.thought = thought;
  d.detail = json::object("reason_step", rs, "tool_call_id", c.id);
  auto t = tool_of_wire(st.rt->tools, c.name);
  d.tool = t ? t->name() : c.name;
  auto args = json::parse(c.arguments.empty() ? "{}" : c.arguments);
  if (!args || !args->IsObject()) {
    d.args = json::object("arguments_text", c.arguments);
    return reject_call(
      self, d,
      fmt::format("the arguments for '{}' are not a JSON object: {}", c.name,
                  args ? "a JSON " + std::string{json::type_of(*args)} : args.error().message));
  }
  d.args = json::stringify(*args);
  if (!t) {
    std::string known;
    for (const auto& x : st.rt->tools.all())
      known += (known.empty() ? "" : ", ") + wire_tool_name(x->name());
    return reject_call(self, d,
                       fmt::format("unknown tool '{}' (the tools are: {})", c.name, known));
  }
  if (auto checked = t->parse_args(d.args); !checked)
    return reject_call(
      self, d, fmt::format("invalid arguments for '{}': {}", c.name, checked.error().message));
  propose(self, d);
}

/// The response JSON of a decision of the deterministic fallback (the chain reached builtin).
std::string fallback_response(const decision& d, std::int64_t n, std::vector<std::string> log) {
  std::vector<llm::tool_call> calls;
  std::string text = d.kind == decision::call_tool ? d.thought : d.conclusion;
  if (d.kind == decision::call_tool)
    calls.push_back({fmt::format("builtin_{}", n), d.tool, d.args});
  log.push_back("builtin: answered");
  return json::object("answered_by", "builtin", "provider", "builtin", "model", "builtin", "text",
                      text, "tool_calls", json::raw_text{calls_json(calls)}, "finish",
                      d.kind == decision::call_tool ? "tool_calls" : "stop", "give_up",
                      d.kind == decision::give_up, "usage", nullptr, "latency_ms", 0, "cost", 0,
                      "attempts", log);
}

void on_model_answer(self_ptr self, llm_provider& llm, std::int64_t n, gateway_result res) {
  auto& st = self->state;
  auto& j = st.journal;
  if (st.rt->shutdown.stop_requested())
    return; // the step stays an intent: recovery calls again
  if (j.steps.empty() || j.steps.back().n != n || j.steps.back().state != step_state::intent)
    return;
  failpoint("after_model", n);
  if (!res.ok && res.reached_builtin && llm.fallback()) {
    // The chain's last resort: the deterministic reasoner decides from the same journal.
    std::vector<step> prior(j.steps.begin(), j.steps.end() - 1);
    decision d;
    try {
      d = llm.fallback()->decide(run_context{j.r, prior, st.rt->tools, &st.model_memory});
    } catch (const std::exception& e) {
      d.kind = decision::give_up;
      d.conclusion = fmt::format("the fallback reasoner failed: {}", e.what());
    }
    j.record_reason_outcome(n, true, fallback_response(d, n, std::move(res.log)), {});
    if (d.kind == decision::give_up)
      return fail(self, d.conclusion.empty() ? std::string{"the model gave up"} : d.conclusion);
    if (d.kind == decision::conclude) {
      j.add_conclusion(d);
      return finish(self, run_state::succeeded, d.conclusion);
    }
    return commit(self, after_commit::advance);
  }
  if (!res.ok) {
    auto why = fmt::format("no model answered: {}", res.error);
    j.record_reason_outcome(n, false, json::object("attempts", res.log), why);
    return fail(self, why);
  }
  const auto& r = res.response;
  std::int64_t in = r.usage ? r.usage->input_tokens : 0, out = r.usage ? r.usage->output_tokens : 0;
  double cost = r.usage ? llm.gateway().cost_of(res.route, *r.usage) : 0;
  auto bad = bad_answer(r);
  auto usage = r.usage ? json::object("input_tokens", in, "output_tokens", out) : std::string{};
  auto result = json::object(
    "answered_by", res.route, "provider", res.provider, "model",
    r.model.empty() ? res.model : r.model, "id", r.id, "text", r.text, "refusal", r.refusal,
    "tool_calls", json::raw_text{calls_json(r.tool_calls)}, "finish", llm::to_string(r.finish),
    "raw_finish", r.raw_finish, "usage", json::raw_text{usage}, "latency_ms", res.latency_ms,
    "cost", cost, "bad", json::string_or_null(bad), "attempts", res.log);
  j.record_reason_outcome(n, true, std::move(result), {});
  j.r.tokens += in + out;
  j.cost += cost;
  if (j.r.tokens > j.r.budget.max_tokens)
    return fail(self, fmt::format("budget exhausted: {} tokens used, max_tokens is {}", j.r.tokens,
                                  j.r.budget.max_tokens));
  if (j.r.budget.max_cost > 0 && j.cost > j.r.budget.max_cost)
    return fail(self,
                fmt::format("budget exhausted: the model calls cost {:.6g}, max_cost is {:.6g}",
                            j.cost, j.r.budget.max_cost));
  if (bad.empty() && r.tool_calls.empty()) {
    decision d;
    d.kind = decision::conclude;
    d.thought = "the model concluded";
    auto answer = llm::split_final_answer(r.text);
    d.conclusion = answer.result.empty() || answer.text.empty() ? r.text : answer.text;
    d.detail = answer.result.empty()
                 ? json::object("reason_step", n)
                 : json::object("reason_step", n, "result", json::raw_text{answer.result});
    j.add_conclusion(d);
    return finish(self, run_state::succeeded, d.conclusion);
  }
  commit(self, after_commit::advance); // the next advance makes the first tool call, or repairs
}

/// Publishes the text of a streamed answer as it arrives: `model.delta` events on the run's
/// live streams (seq 0: never journaled, never replayed; the outcome has the whole text). Runs on
/// the transport's thread; publishes nothing once the node is stopping.
model_gateway::delta_fn delta_publisher(const runtime_ptr& rt, std::string run_id, std::int64_t n) {
  if (rt->hub == nullptr)
    return {};
  return [weak = std::weak_ptr<runtime>{rt}, run_id = std::move(run_id), n](const std::string& t) {
    auto rt = weak.lock();
    if (!rt || rt->shutdown.stop_requested() || rt->hub == nullptr)
      return;
    event e;
    e.run_id = run_id;
    e.kind = "model.delta";
    e.at = rt->clock.now_us();
    e.data = json::object("step", n, "text", t);
    rt->hub->publish({e});
  };
}

void call_model(self_ptr self, llm_provider& llm, std::int64_t n) {
  auto& st = self->state;
  auto& j = st.journal;
  auto prepared = std::exchange(st.prepared, nullptr);
  if (!prepared || std::exchange(st.prepared_for, 0) != n) { // recovered: assemble it again
    std::vector<step> prior(j.steps.begin(), j.steps.begin() + (n - 1));
    prepared = std::make_shared<reason_request>(llm.prepare(
      run_context{j.r, prior, st.rt->tools, nullptr}, notes_before(j, n), &prior_steps(st)));
    if (auto journaled = j.facts(n).request_hash; !journaled.empty() && journaled != prepared->hash)
      st.rt->log->warn("run {} step {}: the request differs from the one journaled (the node's "
                       "tools or prompt changed since)",
                       j.r.id, n);
  }
  auto cell = std::make_shared<std::optional<gateway_result>>();
  auto* p = &llm;
  auto token =
    st.calls.add([self, p, n, cell] { on_model_answer(self, *p, n, std::move(**cell)); });
  auto handle = run_actor{self};
  auto first = llm.route_for(j.r);
  if (const auto& recorded = llm.answers()) { // replay: the recorded answer, no model called
    cell->emplace(recorded(j.r.id, n));
    caf::anon_send(handle, called_atom::value, token);
    return;
  }
  llm.gateway().call(
    prepared->request,
    [handle, cell, token](gateway_result r) {
      cell->emplace(std::move(r));
      caf::anon_send(handle, called_atom::value, token);
    },
    delta_publisher(st.rt, j.r.id, n), first);
}

} // namespace

void reason(self_ptr self, llm_provider& llm) {
  auto& st = self->state;
  auto& j = st.journal;
  const step* rs = nullptr;
  for (auto i = j.steps.rbegin(); i != j.steps.rend() && !rs; ++i)
    if (i->kind == step_kind::reason)
      rs = &*i;
  if (rs && rs->state == step_state::intent)
    return call_model(self, llm, rs->n); // journaled, not answered (or recovered): call
  if (rs && rs->state == step_state::succeeded)
    if (auto c = next_call(j, *rs)) {
      const auto& r = j.facts(*rs).answer; // its text goes with the first call only
      bool first = r && !r->calls.empty() && r->calls.front().id == c->id;
      return make_tool_step(self, rs->n, *c, first ? r->text : std::string{});
    }
  auto [repairs, last] = repairs_so_far(j);
  if (repairs > llm.max_repairs())
    return fail(self, fmt::format("the model's answers were unusable {} times in a row "
                                  "(model.max_repairs is {}); the last: {}",
                                  repairs, llm.max_repairs(), last));
  auto n = j.next_step_n();
  auto prepared = std::make_shared<reason_request>(llm.prepare(
    run_context{j.r, j.steps, st.rt->tools, nullptr}, notes_before(j, n), &prior_steps(st)));
  const auto& rep = prepared->report;
  // The route order of this run (model.by_label may send it to another route first).
  auto names = llm.gateway().order_names(llm.route_for(j.r));
  const auto* first = &llm.gateway().chain().front();
  for (const auto& r : llm.gateway().chain())
    if (!names.empty() && r.name == names.front())
      first = &r;
  auto context = json::object(
    "messages", prepared->request.messages.size(), "tools", prepared->request.tools.size(),
    "estimated_tokens", rep.estimated_tokens, "budget_tokens", rep.budget_tokens, "truncated",
    rep.truncated, "summarized", rep.summarized, "omitted", rep.omitted, "bytes_removed",
    rep.bytes_removed, "over_budget", rep.over_budget, "messages_seen", rep.messages_seen);
  j.add_reason_intent(json::object("route", first->name, "model", first->model, "chain", names,
                                   "request_hash", prepared->hash, "system_prompt",
                                   llm.system_prompt_version(), "context", json::raw_text{context},
                                   "repairs", repairs));
  st.prepared = std::move(prepared);
  st.prepared_for = n;
  commit(self, after_commit::advance); // once durable, the next advance calls the model
}

} // namespace sreh::actors::run_impl
