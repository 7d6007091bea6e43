#pragma once

#include <string>
#include <vector>

#include "plugins/models/builtin/engine.hpp"

namespace sreh::plugins::reasoner {

/// What a conclusion states; the report turns it into `detail.result` and the readable summary.
struct verdict {
  std::string outcome; // diagnosed | no_fault_found | unknown_cause
  std::vector<const hypothesis*> diagnoses;
  std::vector<bool> ambiguous; // per diagnosis
  const remediation_state* remediation = nullptr;
  std::string recovery = "none"; // recovered | partial | not_recovered | none
  std::string summary;
};

/// The decision's detail JSON (see reasoner.hpp for the contract); `v` only for conclusions.
[[nodiscard]] std::string detail_json(const std::string& phase,
                                      const std::vector<hypothesis_group>& groups,
                                      const triage_result& t, const evidence& ev, const verdict* v);

/// The readable summary of a conclusion.
[[nodiscard]] std::string summarize(const verdict& v, const std::vector<hypothesis_group>& groups,
                                    const triage_result& t);

} // namespace sreh::plugins::reasoner
