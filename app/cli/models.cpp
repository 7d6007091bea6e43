// `sreh models`: the node's model provider and, behind the gateway, its routes in chain order
// with their breaker state, calls, failures, tokens and cost so far (never a key).
// `sreh models check`: a tiny request to each route, its latency or why it failed.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

namespace {

std::int64_t int_of(const rapidjson::Value& v, const char* key) {
  const auto& m = member(v, key);
  return m.IsInt64() ? m.GetInt64() : 0;
}

/// `sreh models check [--timeout MS]`: exit 0 only when every route answered.
int check(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"timeout"}, {"json"});
  if (!o)
    return exit_usage;
  if (!o->positional.empty())
    return usage_error("models check takes no arguments");
  std::int64_t timeout = 10'000;
  if (const auto* t = o->value("timeout")) {
    char* end = nullptr;
    timeout = std::strtoll(t->c_str(), &end, 10);
    if (t->empty() || *end != '\0' || timeout < 1 || timeout > 25'000)
      return usage_error("--timeout: milliseconds from 1 to 25000");
  }
  int code = exit_ok;
  net::http_response raw;
  auto doc =
    call(*o, "POST", "/v1/models/check?timeout_ms=" + std::to_string(timeout), code, {}, {}, &raw);
  if (!doc)
    return code;
  bool all = member(*doc, "ok").IsBool() && member(*doc, "ok").GetBool();
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
    return all ? exit_ok : exit_refused;
  }
  auto st = make_style();
  std::printf("%s\n",
              st.bold(pad("ROUTE", 12) + "  " + pad("PROVIDER", 9) + "  " + pad("MODEL", 24) +
                      "  " + pad("RESULT", 6) + "  " + pad("MS", 6) + "  SERVER")
                .c_str());
  const auto& list = member(*doc, "routes");
  if (!list.IsArray()) {
    std::fprintf(stderr, "sreh: the server sent no routes\n");
    return exit_refused;
  }
  for (const auto& r : list.GetArray()) {
    bool ok = member(r, "ok").IsBool() && member(r, "ok").GetBool();
    std::printf("%s  %s  %s  %s  %s  %s\n", pad(str(r, "route"), 12).c_str(),
                pad(str(r, "provider"), 9).c_str(), pad(str(r, "model"), 24).c_str(),
                (ok ? st.green(pad("ok", 6)) : st.red(pad("FAILED", 6))).c_str(),
                pad(std::to_string(num(r, "latency_ms")), 6).c_str(), str(r, "base_url").c_str());
    if (!ok)
      std::printf("  %s\n", st.red(str(r, "route") + ": " + str(r, "error")).c_str());
  }
  return all ? exit_ok : exit_refused;
}

} // namespace

int models(int argc, char** argv) {
  if (argc > 0 && std::string_view{argv[0]} == "check")
    return check(argc - 1, argv + 1);
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
                              "  " + pad("FAILED", 6) + "  " + pad("TOKENS IN/OUT", 15) + "  " +
                              pad("COST", 8) + "  IN FLIGHT/QUEUED")
                        .c_str());
  for (const auto& r : list.GetArray()) {
    const auto& cost = member(r, "cost");
    std::printf(
      "%s  %s  %s  %s  %s  %s  %s  %-8.4f  %s\n", pad(str(r, "name"), 12).c_str(),
      pad(str(r, "provider"), 9).c_str(), pad(str(r, "model"), 24).c_str(),
      pad(str(r, "breaker"), 9).c_str(), pad(std::to_string(int_of(r, "calls")), 6).c_str(),
      pad(std::to_string(int_of(r, "failures")), 6).c_str(),
      pad(std::to_string(int_of(r, "input_tokens")) + "/" +
            std::to_string(int_of(r, "output_tokens")),
          15)
        .c_str(),
      cost.IsNumber() ? cost.GetDouble() : 0.0,
      (std::to_string(int_of(r, "in_flight")) + "/" + std::to_string(int_of(r, "queued"))).c_str());
    if (auto url = str(r, "base_url"); !url.empty())
      std::printf("  %s\n", st.dim(url).c_str());
  }
  return exit_ok;
}

} // namespace sreh::app::cli
