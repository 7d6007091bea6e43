// YAML node configs: loaded, or refused with `NAME:LINE:COL: ...` (or `NAME: ...`).
#include "config/node/node_config.hpp"

#include <string>

#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto cfg = sreh::config::load_string(std::string{input}, "fuzz.yaml");
  if (!cfg)
    SREH_FUZZ_CHECK(cfg.error().message.rfind("fuzz.yaml", 0) == 0);
}
