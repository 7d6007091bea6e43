// Conditions of the knowledge base (`error_rate > 3x baseline and error_rate > 0.01`): parsed,
// or refused with an error that is not empty; a parsed condition keeps its text.
#include "plugins/models/builtin/knowledge_base.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto c = sreh::plugins::reasoner::parse_condition(input);
  if (!c)
    SREH_FUZZ_CHECK(!c.error().message.empty());
}

// kb.cpp's embedded knowledge base is generated into the plugins library's build; the target
// parses the fuzzer's text only.
namespace sreh::plugins::reasoner {
std::string_view embedded_knowledge_text() {
  return {};
}
} // namespace sreh::plugins::reasoner
