// Knowledge-base files (failure modes, anomaly rules, remedies): parsed, or refused with an
// error that names the file (`fuzz.yaml:LINE:COL: path: what`).
#include "plugins/models/builtin/knowledge_base.hpp"

#include <string>

#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto kb = sreh::plugins::reasoner::parse_knowledge_base(input, "fuzz.yaml");
  if (!kb)
    SREH_FUZZ_CHECK(kb.error().message.rfind("fuzz.yaml", 0) == 0);
}

// kb.cpp's embedded knowledge base is generated into the plugins library's build; the target
// parses the fuzzer's text only.
namespace sreh::plugins::reasoner {
std::string_view embedded_knowledge_text() {
  return {};
}
} // namespace sreh::plugins::reasoner
