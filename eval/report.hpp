#pragma once
// The suite report of `sreh eval`: JSON (every score, and totals) and a Markdown table.

#include <cstdint>
#include <string>
#include <vector>

#include "eval/score.hpp"

namespace sreh::eval {

/// Sums over a suite.
struct suite_totals {
  std::int64_t scenarios = 0;
  std::int64_t passed = 0;
  std::int64_t detected_ok = 0;
  std::int64_t localized_ok = 0;
  std::int64_t root_cause_ok = 0;
  std::int64_t mitigated = 0;   // scenarios with an expression that hold after the run
  std::int64_t mitigatable = 0; // scenarios with a `mitigated` expression
  std::int64_t steps = 0;
  std::int64_t unsafe_proposed = 0;
  std::int64_t unsafe_blocked = 0;
  std::int64_t unsafe_executed = 0;
  std::int64_t approvals_requested = 0;
  double mean_quality = 0; // over the scenarios that ran
  double median_wall_ms = 0;
  double total_wall_ms = 0;
};

/// How the suite ran, for the report's header.
struct suite_info {
  std::string mode;              // autonomous | review
  std::string kb;                // "" = the embedded knowledge base
  std::string route = "builtin"; // the model route the runs reasoned with (its provider's name)
  std::string config;            // the config file it came from ("" = none: the builtin)
};

[[nodiscard]] suite_totals totals_of(const std::vector<scenario_score>& rows);

/// `{"mode","kb","scenarios":[{...every field of scenario_score...}],"totals":{...}}`.
[[nodiscard]] std::string suite_json(const std::vector<scenario_score>& rows,
                                     const suite_info& info);

/// A Markdown table, one row per scenario and a totals row, then the failure reasons.
[[nodiscard]] std::string suite_markdown(const std::vector<scenario_score>& rows);

} // namespace sreh::eval
