#include "policy_check.hpp"

#include <fmt/format.h>

#include "sreh/core/json.hpp"

namespace sreh::actors {

namespace {

std::map<std::string, std::string> labels_of(const run& r) {
  std::map<std::string, std::string> out;
  auto doc = json::parse(r.labels);
  if (!doc || !doc->IsObject())
    return out;
  for (auto& m : doc->GetObject())
    if (m.value.IsString())
      out.emplace(m.name.GetString(), m.value.GetString());
  return out;
}

/// Mutating actions this node executed within the longest rate window of the policy.
std::vector<policy::past_action> history(const runtime& rt, timestamp_us now) {
  std::vector<policy::past_action> out;
  auto window = policy::longest_rate_window_s(rt.policy);
  if (window <= 0)
    return out;
  auto steps = rt.store.executed_tool_steps(now - window * 1'000'000);
  if (!steps) {
    rt.log->warn("policy: cannot read recent actions for rate limits: {}", steps.error().message);
    return out;
  }
  for (auto& s : *steps) {
    auto t = rt.tools.find(s.tool);
    if (!t || t->idempotent())
      continue;
    out.push_back({s.tool, t->scope(s.args).target, s.finished_at});
  }
  return out;
}

} // namespace

policy::decision check_policy(const runtime& rt, const run& r, const std::string& tool_name,
                              const std::string& args) {
  auto t = rt.tools.find(tool_name);
  if (!t)
    return {policy::verdict::allow, "unknown-tool", "the tool does not exist", {}};
  auto sc = t->scope(args);
  policy::action a;
  a.tool = tool_name;
  a.risk = to_string(t->risk());
  a.target = sc.target;
  a.environment = sc.environment;
  a.tier = sc.tier;
  a.blast_radius = sc.blast_radius;
  a.labels = labels_of(r);
  a.now = rt.clock.now_us();
  if (!t->idempotent())
    a.history = history(rt, a.now);
  return policy::evaluate(rt.policy, a);
}

std::string policy_json(const policy::decision& d, const policy::policy_set& p) {
  return fmt::format(R"({{"effect":{},"rule":{},"reason":{},"policy_version":{}}})",
                     json::quote(policy::to_string(d.effect)), json::quote(d.rule_id),
                     json::quote(d.reason), json::quote(p.version));
}

} // namespace sreh::actors
