// Work template files: loaded, or refused with an error that names the file
// (`fuzz.yaml:LINE:COL: path: what`); a loaded one resolves its own defaults without a crash.
#include <string>

#include "config/templates/template_file.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto t = sreh::config::load_template_string(std::string{input}, "fuzz.yaml");
  if (!t) {
    SREH_FUZZ_CHECK(t.error().message.rfind("fuzz.yaml", 0) == 0);
    return;
  }
  (void)sreh::works::resolve_fields(*t, "{}");
}
