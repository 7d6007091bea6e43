// `sreh nodes`: the cluster's members as the node asked sees them (GET /v1/cluster/nodes).
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

namespace {

bool flag_of(const rapidjson::Value& v, const char* key) {
  auto i = v.FindMember(key);
  return i != v.MemberEnd() && i->value.IsBool() && i->value.GetBool();
}

std::string roles_of(const rapidjson::Value& n) {
  std::string out;
  const auto& roles = member(n, "roles");
  if (roles.IsArray())
    for (const auto& r : roles.GetArray())
      if (r.IsString())
        out += (out.empty() ? "" : ",") + std::string{r.GetString()};
  return out;
}

std::string heartbeat_of(const rapidjson::Value& n) {
  const auto ms = num(n, "heartbeat_age_ms");
  if (ms < 0)
    return "never";
  if (ms < 10'000)
    return std::to_string(ms) + " ms";
  return std::to_string(ms / 1000) + " s";
}

} // namespace

int nodes(int argc, char** argv) {
  int code = exit_ok;
  auto doc = get_listing(argc, argv, "nodes", "/v1/cluster/nodes", code);
  if (!doc)
    return code;
  auto st = make_style();
  if (flag_of(*doc, "clustered"))
    std::printf("cluster '%s' as node %s sees it (heartbeat %lld ms, lease %lld ms)%s\n",
                str(*doc, "cluster").c_str(), str(*doc, "self").c_str(),
                static_cast<long long>(num(*doc, "heartbeat_ms")),
                static_cast<long long>(num(*doc, "lease_ttl_ms")),
                flag_of(*doc, "store_reachable") ? "" : st.red("  store unreachable").c_str());
  else
    std::printf("a single node (no cluster topology)\n");
  std::printf("%s\n", st.bold(pad("NODE", 12) + "  " + pad("STATE", 7) + "  " + pad("LINK", 4) +
                              "  " + pad("HEARTBEAT", 9) + "  ACTIVE  PARKED   OWNED  " +
                              pad("HTTP", 21) + "  ROLES")
                        .c_str());
  const auto& list = member(*doc, "nodes");
  if (!list.IsArray())
    return exit_ok;
  for (const auto& n : list.GetArray()) {
    const auto state = str(n, "state");
    const auto painted = state == "alive" ? st.green(pad(state, 7)) : st.red(pad(state, 7));
    const auto link = flag_of(n, "self") ? "self" : flag_of(n, "connected") ? "up" : "down";
    std::printf("%s  %s  %s  %s  %6lld  %6lld  %6lld  %s  %s\n", pad(str(n, "id"), 12).c_str(),
                painted.c_str(), pad(link, 4).c_str(), pad(heartbeat_of(n), 9).c_str(),
                static_cast<long long>(num(n, "active_runs")),
                static_cast<long long>(num(n, "parked_runs")),
                static_cast<long long>(num(n, "owned_runs")), pad(str(n, "http"), 21).c_str(),
                roles_of(n).c_str());
    if (auto why = str(n, "link_error"); !why.empty() && !flag_of(n, "connected"))
      std::printf("%s\n", st.dim("    link: " + why).c_str());
  }
  return exit_ok;
}

} // namespace sreh::app::cli
