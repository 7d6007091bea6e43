#include "core/model/approval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace sreh {

namespace {

constexpr std::string_view role_names[] = {"viewer", "operator", "approver", "admin"};

/// The lowest role allowed to decide `a`: the lowest-ranked known role of `roles`, or
/// "approver" when `roles` names none (an approval never falls open to viewers by omission).
std::string_view needed_role(const approval& a) {
  std::string_view lowest;
  for (const auto& r : a.roles)
    if (role_rank(r) > 0 && (lowest.empty() || role_rank(r) < role_rank(lowest)))
      lowest = r;
  return lowest.empty() ? std::string_view{"approver"} : lowest;
}

bool already_voted(const approval& a, const std::string& who) {
  return std::any_of(a.votes.begin(), a.votes.end(),
                     [&](const approval_vote& v) { return v.by == who; });
}

std::int64_t approving_identities(const approval& a) {
  std::set<std::string> who;
  for (const auto& v : a.votes)
    if (v.approve)
      who.insert(v.by);
  return static_cast<std::int64_t>(who.size());
}

} // namespace

const char* to_string(approval_kind k) {
  switch (k) {
  case approval_kind::action:
    return "action";
  case approval_kind::in_doubt:
    return "in_doubt";
  }
  return "unknown";
}

const char* to_string(approval_state s) {
  switch (s) {
  case approval_state::pending:
    return "pending";
  case approval_state::approved:
    return "approved";
  case approval_state::denied:
    return "denied";
  case approval_state::expired:
    return "expired";
  case approval_state::withdrawn:
    return "withdrawn";
  }
  return "unknown";
}

std::optional<approval_kind> parse_approval_kind(std::string_view s) {
  for (auto k : {approval_kind::action, approval_kind::in_doubt})
    if (s == to_string(k))
      return k;
  return std::nullopt;
}

std::optional<approval_state> parse_approval_state(std::string_view s) {
  for (auto st : {approval_state::pending, approval_state::approved, approval_state::denied,
                  approval_state::expired, approval_state::withdrawn})
    if (s == to_string(st))
      return st;
  return std::nullopt;
}

int role_rank(std::string_view role) {
  for (std::size_t i = 0; i < std::size(role_names); ++i)
    if (role == role_names[i])
      return static_cast<int>(i) + 1;
  return 0;
}

// A voter's repeated vote is checked first, before the state: a client retrying its decision
// after the approval was decided (by that very vote) gets the first decision back, not a conflict.
error apply_vote(approval& a, const approval_vote& v) {
  if (!v.by.empty() && already_voted(a, v.by))
    return {}; // idempotent: the first vote of an identity stands
  if (a.state != approval_state::pending)
    return {errc::conflict, fmt::format("approval {} is already {}", a.id, to_string(a.state))};
  if (v.by.empty())
    return {errc::invalid_argument, "a vote needs the identity of who decided"};
  if (v.by == a.requester)
    return {errc::forbidden, "you submitted this run; another person must decide"};
  auto needed = needed_role(a);
  if (role_rank(v.role) < role_rank(needed))
    return {errc::forbidden,
            fmt::format("role {} cannot decide this approval (needs {})", v.role, needed)};
  a.votes.push_back(v);
  if (!v.approve) {
    a.state = approval_state::denied;
    a.decided_at = v.at;
  } else if (approving_identities(a) >= std::max<std::int64_t>(a.required, 1)) {
    a.state = approval_state::approved;
    a.decided_at = v.at;
  }
  return {};
}

} // namespace sreh
