#pragma once
// The stored shape of an approval's list fields, shared by every store: roles and escalate_to
// as JSON arrays of strings, votes as [{"by","role","approve","comment","at"}], and the role rule
// that decides who may decide an approval (core's apply_vote rule, for filtering in queries).

#include <string>
#include <string_view>
#include <vector>

#include "core/model/approval.hpp"

namespace sreh::persistence {

[[nodiscard]] std::string strings_json(const std::vector<std::string>& xs);
[[nodiscard]] std::string votes_json(const std::vector<approval_vote>& votes);

/// Parses a JSON array of strings into `out`; false (and `out` unspecified) on any other shape.
[[nodiscard]] bool read_strings(std::string_view text, std::vector<std::string>& out);
/// Parses the stored votes into `out`; false on any other shape.
[[nodiscard]] bool read_votes(std::string_view text, std::vector<approval_vote>& out);

/// The rank a role needs to decide an approval with `roles` — the rule of core's apply_vote:
/// the lowest-ranked known role, or "approver" when none is known (never open by omission).
[[nodiscard]] int needed_rank(const std::vector<std::string>& roles);

} // namespace sreh::persistence
