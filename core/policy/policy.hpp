#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"

namespace sreh::policy {

/// How much autonomy a scope has. read_only: only read-only tools run. review: mutating tools
/// need approval unless a rule allows them. autonomous: mutating tools run unless a rule says
/// otherwise.
enum class mode { read_only, review, autonomous };
enum class verdict { allow, require_approval, deny };

[[nodiscard]] const char* to_string(mode m);
[[nodiscard]] const char* to_string(verdict v);
[[nodiscard]] std::optional<mode> parse_mode(std::string_view s);

/// What a rule asks of an approval.
struct approval_spec {
  std::int64_t approvers = 1;                 // distinct identities
  std::vector<std::string> roles{"approver"}; // who may decide
  std::int64_t timeout_s = 3600;
  std::string on_timeout = "deny";      // deny | escalate
  std::vector<std::string> escalate_to; // roles after escalation (on_timeout: escalate)
};

/// A time window when changes are frozen: weekly (days + UTC hours) or absolute (from/to).
struct window {
  std::vector<int> days; // 0 = Sunday .. 6; empty = every day
  int from_hour = 0;     // UTC, inclusive
  int to_hour = 24;      // UTC, exclusive
  timestamp_us from = 0; // absolute range (both 0 = weekly window)
  timestamp_us to = 0;
};

struct rate_limit {
  std::int64_t max = 0; // actions allowed in the window
  std::int64_t per_s = 3600;
  std::string by = "target"; // count per target, or per "tool"
};

/// A rule matches when every condition it states holds (an absent condition matches all).
/// Rules are evaluated in order; the first match decides.
struct rule {
  std::string id;
  std::string description;
  // -- conditions
  std::vector<std::string> tools;            // names or globs: "service.*", "deploy.rollback"
  std::vector<std::string> targets;          // the action's target, by name (any case)
  std::vector<std::string> risks;            // read_only | low | medium | high
  std::vector<std::string> environments;     // e.g. prod, staging
  std::vector<std::string> tiers;            // critical | standard | batch
  std::map<std::string, std::string> labels; // run labels that must all be equal
  std::optional<double> min_blast_radius;    // share of replicas/hosts affected, 0..1
  std::vector<window> during;                // matches only inside one of these windows (freezes)
  std::optional<rate_limit> limit;           // matches only when the limit would be exceeded
  // -- effect
  verdict effect = verdict::require_approval;
  approval_spec approval;
  std::string reason; // shown to humans; default from the rule
};

/// The policy of a node: a default mode, modes per scope (environment or service), rules.
struct policy_set {
  mode default_mode = mode::review;
  std::map<std::string, mode> scopes; // "env:prod" or "service:checkout" → mode
  std::vector<rule> rules;
  approval_spec default_approval;  // for review mode without a matching rule
  std::string version = "builtin"; // content hash; journaled with each decision
};

/// An action already executed (for rate limits).
struct past_action {
  std::string tool;
  std::string target;
  timestamp_us at = 0;
};

/// Everything the engine needs to know about one proposed action.
struct action {
  std::string tool;
  std::string risk = "medium"; // the tool's risk class
  std::string target;          // service, host, database, flag or job
  std::string environment = "prod";
  std::string tier;                          // of the target, when known
  std::map<std::string, std::string> labels; // the run's labels
  double blast_radius = 0;                   // 0..1, when known
  timestamp_us now = 0;
  /// Mutating actions executed on this node within `longest_rate_window_s`, from the journal;
  /// rate limits count the ones matching their rule in their own window.
  std::vector<past_action> history;
};

struct decision {
  verdict effect = verdict::allow;
  std::string rule_id; // "mode:review", "mode:read_only", or a rule's id
  std::string reason;
  approval_spec approval; // when effect = require_approval
};

/// The pure decision function (DESIGN.md, "Policy, approvals, actions").
[[nodiscard]] decision evaluate(const policy_set& p, const action& a);

/// The longest rate window of any rule (seconds): how far back the kernel counts actions.
[[nodiscard]] std::int64_t longest_rate_window_s(const policy_set& p);

} // namespace sreh::policy
