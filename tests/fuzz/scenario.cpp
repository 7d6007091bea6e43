// Scenario files (SCENARIOS.md), with an inline world: loaded, or refused with an error that
// names the file (`fuzz.yaml:LINE:COL: path: what`, or `fuzz.yaml: what`).
#include "plugins/tools/sandbox/scenario.hpp"

#include <string>

#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto sc = sreh::plugins::sandbox::load_scenario_string(std::string{input}, "fuzz.yaml");
  if (!sc)
    SREH_FUZZ_CHECK(sc.error().message.rfind("fuzz.yaml", 0) == 0 ||
                    sc.error().code == sreh::errc::not_found);
}
