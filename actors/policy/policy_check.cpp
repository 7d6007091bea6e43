#include "actors/policy/policy_check.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::actors {

namespace {

/// Mutating actions of the window that succeeded or run (allowed, or approved), as the store has
/// them (every node's), and the steps they belong to.
std::vector<policy::past_action>
stored_history(runtime& rt, const expected<std::vector<step>>& steps,
               std::set<std::pair<std::string, std::int64_t>>& stored) {
  std::vector<policy::past_action> out;
  if (!steps) {
    rt.log->warn("policy: cannot read recent actions for rate limits: {}", steps.error().message);
    return out;
  }
  for (auto& s : *steps) {
    auto t = rt.tools.find(s.tool);
    const bool running = s.state == step_state::intent;
    if (!t || t->idempotent())
      continue;
    out.push_back({s.tool, t->scope(s.args).target, running ? s.started_at : s.finished_at});
    stored.emplace(s.run_id, s.n);
  }
  return out;
}

} // namespace

policy_check prepare_policy_check(const runtime& rt, const policy::policy_set& policy, const run& r,
                                  const std::string& tool_name, const std::string& args,
                                  std::int64_t n) {
  policy_check c;
  c.policy = &policy;
  c.run_id = r.id;
  c.n = n;
  auto t = rt.tools.find(tool_name);
  if (!t) {
    c.known_tool = false;
    return c;
  }
  auto sc = t->scope(args);
  auto& a = c.action;
  a.tool = tool_name;
  a.risk = to_string(t->risk());
  a.target = sc.target;
  a.environment = sc.environment;
  a.tier = sc.tier;
  a.blast_radius = sc.blast_radius;
  a.labels = json::string_members(r.labels);
  a.now = rt.clock.now_us();
  const auto window = policy::longest_rate_window_s(policy);
  if (!t->idempotent() && window > 0)
    c.history_since = a.now - window * 1'000'000;
  return c;
}

expected<std::vector<step>> read_rate_history(persistence::run_store& s, timestamp_us since) {
  return s.rate_counted_tool_steps(since);
}

policy::decision decide_policy(runtime& rt, policy_check& c,
                               const expected<std::vector<step>>& history) {
  if (!c.known_tool)
    return {policy::verdict::allow, "unknown-tool", "the tool does not exist", {}};
  auto& a = c.action;
  if (!c.history_since)
    return policy::evaluate(*c.policy, a);
  // The store was read without the lock (other checks need not wait for it). Now one check at a
  // time merges this node's holds, decides and holds: an action allowed here since the read is
  // among the holds (those that succeeded stay until they leave the window), so two runs cannot
  // both see the last free slot.
  std::set<std::pair<std::string, std::int64_t>> stored;
  a.history = stored_history(rt, history, stored);
  auto lk = rt.holds.lock();
  rt.holds.append_since(*c.history_since, stored, a.history);
  auto d = policy::evaluate(*c.policy, a);
  if (d.effect == policy::verdict::allow)
    rt.holds.hold(c.run_id, c.n, {a.tool, a.target, a.now});
  return d;
}

void release_action(runtime& rt, const std::string& run_id, std::int64_t n, bool succeeded) {
  // Every step's outcome comes here: the common cases (a success, which keeps its hold; nothing
  // held at all) take no lock.
  if (succeeded || rt.holds.size() == 0)
    return;
  auto lk = rt.holds.lock();
  rt.holds.release_failed(run_id, n);
}

void release_run_actions(runtime& rt, const std::string& run_id) {
  if (rt.holds.size() == 0)
    return;
  auto lk = rt.holds.lock();
  rt.holds.release_run(run_id);
}

std::string policy_json(const policy::decision& d, const policy::policy_set& p) {
  return json::object("effect", policy::to_string(d.effect), "rule", d.rule_id, "reason", d.reason,
                      "policy_version", p.version);
}

} // namespace sreh::actors
