// Policy files: loaded, or refused naming the file.
#include <string>

#include "config/policy/policy_config.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto p = sreh::config::load_policy_string(std::string{input}, "fuzz.yaml");
  if (!p)
    SREH_FUZZ_CHECK(p.error().message.rfind("fuzz.yaml", 0) == 0);
}
