// YAML node configs: loaded, or refused with `NAME:LINE:COL: ...` (or `NAME: ...`), with the
// plugins' sections app/serve registers (their readers compiled in alone: CMakeLists.txt).
#include "config/node/node_config.hpp"

#include <string>

#include "config/node/sections.hpp"
#include "config/notify/section.hpp"
#include "plugins/sections.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

const sreh::config::section_registry& sections() {
  static const auto r = [] {
    sreh::config::section_registry s;
    sreh::plugins::register_sandbox_section(s);
    sreh::plugins::register_http_probe_section(s);
    sreh::plugins::register_shell_section(s);
    sreh::plugins::register_prometheus_section(s);
    sreh::plugins::register_alertmanager_section(s);
    sreh::config::register_notify_section(s);
    return s;
  }();
  return r;
}

} // namespace

void fuzz_one(std::string_view input) {
  auto cfg = sreh::config::load_string(std::string{input}, "fuzz.yaml", {}, nullptr, &sections());
  if (!cfg)
    SREH_FUZZ_CHECK(cfg.error().message.rfind("fuzz.yaml", 0) == 0);
}
