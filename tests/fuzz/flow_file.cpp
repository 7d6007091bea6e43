// Flow files: loaded, or refused with an error that names the file (`fuzz.yaml:LINE:COL: path:
// what`); a loaded one has an acyclic graph and writes JSON that parses.
#include "config/flows/flow_file.hpp"

#include <string>

#include "core/flows/flow_json.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto f = sreh::config::load_flow_string(std::string{input}, "fuzz.yaml");
  if (!f) {
    SREH_FUZZ_CHECK(f.error().message.rfind("fuzz.yaml", 0) == 0);
    return;
  }
  SREH_FUZZ_CHECK(sreh::flows::make_graph(*f).cycle().empty());
  rapidjson::StringBuffer buf;
  sreh::json::writer w(buf);
  sreh::flows::write_detail(w, *f);
  SREH_FUZZ_CHECK(sreh::json::parse({buf.GetString(), buf.GetSize()}).has_value());
}
