// Knowledge-base files (failure modes, anomaly rules, remedies): parsed, or refused with an
// error that names the file (`fuzz.yaml:LINE:COL: path: what`).
#include <string>

#include "plugins/models/builtin/knowledge_base.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto kb = sreh::plugins::reasoner::parse_knowledge_base(input, "fuzz.yaml");
  if (!kb)
    SREH_FUZZ_CHECK(kb.error().message.rfind("fuzz.yaml", 0) == 0);
}
