#pragma once
// The rounds of an investigation and what they found, gathered for the conclusion (private to
// the builtin reasoner: engine.cpp's planner keeps the rounds).

#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugins/models/builtin/engine.hpp"
#include "plugins/models/builtin/report.hpp"

namespace sreh::plugins::reasoner {

/// One pass of triage → diagnosis → remedy → verification. A later round starts when the
/// verification shows the alerted entities still anomalous: another fault hides behind the first.
struct round_data {
  std::int64_t start = 0; // the round looks at steps after this one
  triage_result t;
  std::vector<hypothesis_group> groups;
  std::vector<const hypothesis*> diagnoses;
  std::vector<bool> ambiguous;
  std::map<std::string, std::string> leaf_of;
  remediation_state rem;
  /// Entities the round's walk set aside and never observed (entity, the caller that deferred
  /// it): the frontier a later round starts from.
  std::vector<std::pair<std::string, std::string>> set_aside;
};

/// Adds the entities `t` deferred and did not observe to the round's frontier.
void keep_set_aside(round_data& rd, const triage_result& t);

/// The leaders of the decided groups that no earlier round diagnosed.
void pick_diagnoses(round_data& rd, const std::set<std::string>& known);

/// Every round's findings, gathered for the conclusion.
struct findings {
  verdict v;
  remediation_state rem;
  std::vector<hypothesis_group> groups;
  triage_result t;
};

/// The findings of `rounds` (at least one): the last round's walk, every round's remedies.
[[nodiscard]] findings gather(const std::deque<round_data>& rounds);

/// How the remedies left things: the worst verified outcome; "partial" too when the alerted
/// entities stayed anomalous after remedies that worked; "none" without a verified remedy.
[[nodiscard]] std::string recovery_of(const findings& f, const std::deque<round_data>& rounds);

} // namespace sreh::plugins::reasoner
