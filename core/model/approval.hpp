#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/status.hpp"

namespace sreh {

/// `action`: may this action run? `in_doubt`: did this action (whose outcome was lost in a
/// crash and that its tool cannot reconcile) take effect?
enum class approval_kind { action, in_doubt };

/// pending → approved | denied | expired. `escalated` is a flag, not a state: an approval whose
/// first timeout escalated stays pending with new roles and a new deadline.
/// `withdrawn`: a constraint a person set on the run (docs/conversation.md) closed it before anyone
/// decided; its action never runs.
enum class approval_state { pending, approved, denied, expired, withdrawn };

[[nodiscard]] const char* to_string(approval_kind k);
[[nodiscard]] const char* to_string(approval_state s);
[[nodiscard]] std::optional<approval_kind> parse_approval_kind(std::string_view s);
[[nodiscard]] std::optional<approval_state> parse_approval_state(std::string_view s);

/// One human decision on an approval.
struct approval_vote {
  std::string by;       // identity (token name)
  std::string role;     // the role it acted with
  bool approve = false; // in_doubt: true = "it happened"
  std::string comment;
  timestamp_us at = 0;
};

/// A durable request for human decision about step `step_n` of run `run_id`.
struct approval {
  std::string id; // apr_...
  std::string run_id;
  std::int64_t step_n = 0;
  approval_kind kind = approval_kind::action;
  approval_state state = approval_state::pending;
  std::string tool;
  std::string args = "{}";        // JSON
  std::string rule_id;            // the policy rule that asked for it ("" for in_doubt)
  std::string reason;             // human-readable, from the rule
  std::int64_t required = 1;      // distinct approvers needed
  std::vector<std::string> roles; // roles allowed to decide (any of)
  std::string requester;          // the run's submitter: may never decide
  std::vector<approval_vote> votes;
  timestamp_us created_at = 0;
  timestamp_us expires_at = 0;          // 0 = never
  std::string on_timeout = "deny";      // deny | escalate
  std::vector<std::string> escalate_to; // roles after an escalation
  bool escalated = false;
  timestamp_us decided_at = 0;
};

/// Role order: viewer < operator < approver < admin. Unknown names rank below viewer.
[[nodiscard]] int role_rank(std::string_view role);

/// Applies a vote to a pending approval. Refused (the approval unchanged) when: the approval is
/// no longer pending (conflict); the voter is the requester (forbidden: nobody approves their own
/// action); the voter's role ranks below every role in `roles` (forbidden). A second vote by an
/// identity that already voted changes nothing and is not an error (idempotent). Any deny denies;
/// `required` distinct approving identities approve.
[[nodiscard]] sreh::error apply_vote(approval& a, const approval_vote& v);

} // namespace sreh
