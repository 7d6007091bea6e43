// `sreh models`: the node's model provider and, behind the gateway, its routes in chain order
// with their breaker state, calls, failures, tokens and cost so far (never a key).
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

namespace {

std::int64_t int_of(const rapidjson::Value& v, const char* key) {
  const auto& m = member(v, key);
  return m.IsInt64() ? m.GetInt64() : 0;
}

} // namespace

int models(int argc, char** argv) {
  int code = exit_ok;
  auto doc = get_listing(argc, argv, "models", "/v1/models", code);
  if (!doc)
    return code;
  auto st = make_style();
  std::printf("provider: %s\n", str(*doc, "provider").c_str());
  const auto& list = member(*doc, "routes");
  if (!list.IsArray() || list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("no model routes (a deterministic reasoner)").c_str());
    return exit_ok;
  }
  std::printf("%s\n", st.bold(pad("ROUTE", 12) + "  " + pad("PROVIDER", 9) + "  " +
                              pad("MODEL", 24) + "  " + pad("BREAKER", 9) + "  " + pad("CALLS", 6) +
                              "  " + pad("FAILED", 6) + "  " + pad("TOKENS IN/OUT", 15) + "  COST")
                        .c_str());
  for (const auto& r : list.GetArray()) {
    const auto& cost = member(r, "cost");
    std::printf("%s  %s  %s  %s  %s  %s  %s  %.4f\n", pad(str(r, "name"), 12).c_str(),
                pad(str(r, "provider"), 9).c_str(), pad(str(r, "model"), 24).c_str(),
                pad(str(r, "breaker"), 9).c_str(),
                pad(std::to_string(int_of(r, "calls")), 6).c_str(),
                pad(std::to_string(int_of(r, "failures")), 6).c_str(),
                pad(std::to_string(int_of(r, "input_tokens")) + "/" +
                      std::to_string(int_of(r, "output_tokens")),
                    15)
                  .c_str(),
                cost.IsNumber() ? cost.GetDouble() : 0.0);
    if (auto url = str(r, "base_url"); !url.empty())
      std::printf("  %s\n", st.dim(url).c_str());
  }
  return exit_ok;
}

} // namespace sreh::app::cli
