#pragma once
// The schema versions of the store: one numbering for every backend. Each backend keeps its own
// SQL for each version (sqlite/migrations.cpp, postgres/migrations.cpp: the types differ) and
// records the versions it applied in its `schema_version` table; a version that changes nothing
// in one backend is still recorded there, so that a version number means the same schema
// everywhere. A new version is added here first, then to every backend (a static_assert in each
// checks that its list matches this one).
//
// History: the backends numbered alone until version 4, which was the index of running tool
// intents on SQLite but cluster membership on PostgreSQL (whose index came as 5). SQLite now
// has 4 as a no-op and the index as 5 (CREATE INDEX IF NOT EXISTS), so a SQLite file at the old
// 4 — which has the index — moves to 5 without a change, and one at 3 gets the index at 5. A file
// that this build migrated is refused by a build that knew only the old numbering (as after
// any new version).

#include <array>
#include <cstddef>
#include <string_view>

namespace sreh::persistence {

/// One version of the schema and what it changed.
struct schema_change {
  int version;
  std::string_view change;
};

inline constexpr std::array<schema_change, 15> schema_history{{
  {1, "runs, steps and the event log"},
  {2, "approvals; the audit hash chain over the event log; the index of succeeded tool steps"},
  {3, "relay offsets"},
  {4, "cluster membership and run leases (PostgreSQL; nothing on SQLite)"},
  {5, "the index of running tool intents (rate limits)"},
  {6, "Works, the template versions they are pinned to, world entities and their history"},
  {7, "runs: kind (goal or flow), parent run and a flow run's pinned definition"},
  {8, "runs: the budget's max_cost"},
  {9, "runs: the outcome; steps: when the tool began to execute"},
  {10, "long-term memory: entries, their versions, the full-text index"},
  {11, "runs: the reasoning-quality score"},
  {12, "evolution candidates"},
  {13, "runs' conversations: messages, in order, and the step that took each"},
  {14, "the index of unfinished runs without an IN list (SQLite; nothing on PostgreSQL)"},
  {15, "the notifications' outbox: one delivery per notice and receiver"},
}};

/// The version this build migrates every backend to.
inline constexpr int latest_schema_version = schema_history.back().version;

/// True when `migrations` (anything with a `version` member, in order) are the versions of
/// schema_history, one each.
template <class Migrations>
[[nodiscard]] constexpr bool follows_schema_history(const Migrations& migrations) {
  if (migrations.size() != schema_history.size())
    return false;
  for (std::size_t i = 0; i < schema_history.size(); ++i)
    if (migrations[i].version != schema_history[i].version)
      return false;
  return true;
}

} // namespace sreh::persistence
