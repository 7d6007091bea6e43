// `sreh notifications [--state S]` and `sreh notifications retry ID`: the notifications' outbox
// (docs/notifications.md), its dead letters, and sending one again.
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"
#include "core/base/http_url.hpp"

namespace sreh::app::cli {

namespace {

void print_table(const style& st, const rapidjson::Value& list) {
  std::printf("%s\n", st.bold(pad("ID", 40) + "  " + pad("EVENT", 20) + "  " + pad("STATE", 9) +
                              "  " + pad("TRIES", 5) + "  " + pad("SUBJECT", 30) + "  LAST ERROR")
                        .c_str());
  if (!list.IsArray())
    return;
  for (const auto& n : list.GetArray()) {
    const auto state = str(n, "state");
    const auto colored =
      state_colored(st, state) + std::string(state.size() < 9 ? 9 - state.size() : 0, ' ');
    std::printf("%s  %s  %s  %5lld  %s  %s\n", pad(truncate(str(n, "id"), 40), 40).c_str(),
                pad(str(n, "event"), 20).c_str(), colored.c_str(),
                static_cast<long long>(num(n, "attempts")), pad(str(n, "subject"), 30).c_str(),
                truncate(str(n, "last_error"), 80).c_str());
  }
}

int retry(const options& o) {
  if (o.positional.size() != 2)
    return usage_error("notifications retry takes exactly one notification id");
  const auto& id = o.positional[1];
  int code = exit_ok;
  auto doc = call_readable(o, "POST", "/v1/notifications/" + percent_encode(id) + "/retry", code);
  if (!doc)
    return code;
  auto st = make_style();
  std::printf("%s  %s\n", id.c_str(),
              state_colored(st, str(member(*doc, "notification"), "state")).c_str());
  return exit_ok;
}

} // namespace

int notifications(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"state", "limit", "cursor"}, {"json"});
  if (!o)
    return exit_usage;
  if (!o->positional.empty() && o->positional[0] == "retry")
    return retry(*o);
  if (!o->positional.empty())
    return usage_error("notifications takes no arguments (or: notifications retry ID)");
  const auto target = with_query("/v1/notifications", *o, {"state", "limit", "cursor"}, {});
  int code = exit_ok;
  auto doc = call_readable(*o, "GET", target, code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "notifications");
  if (list.IsArray() && list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("no notifications").c_str());
    return exit_ok;
  }
  print_table(st, list);
  if (auto next = str(*doc, "next_cursor"); !next.empty())
    std::printf("%s\n", st.dim("more: sreh notifications --cursor " + next).c_str());
  return exit_ok;
}

} // namespace sreh::app::cli
