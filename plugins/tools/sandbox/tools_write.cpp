// Mutating tools: each turns its arguments into an `action` and applies it through the world's
// action log, keyed by the call's idempotency key (a repeated key applies once).
#include <fmt/format.h>

#include "plugins/tools/sandbox/tools.hpp"

namespace sreh::plugins::sandbox::detail {

namespace {

using actors::risk_class;

struct spec {
  const char* name;
  const char* description;
  risk_class risk;
  action_kind kind;
  const char* target_arg;
  const char* extra_properties; // JSON members after the target's, "" for none
  const char* extra_required;   // JSON array items after the target, "" for none
};

constexpr spec specs[] = {
  {"deploy.rollback", "Rolls a service back to its previous version (or to_version).",
   risk_class::medium, action_kind::rollback, "service",
   R"("to_version":{"type":"string","minLength":1,"maxLength":64})", ""},
  {"service.restart", "Restarts every replica of a service.", risk_class::medium,
   action_kind::restart, "service", "", ""},
  {"service.scale", "Sets a service's replica count (1..100).", risk_class::low, action_kind::scale,
   "service", R"("replicas":{"type":"integer","minimum":1,"maximum":100})", R"("replicas")"},
  {"db.set_pool_limit", "Sets a database's max_connections.", risk_class::medium,
   action_kind::set_pool_limit, "database",
   R"("limit":{"type":"integer","minimum":1,"maximum":100000})", R"("limit")"},
  {"host.cleanup_disk", "Removes rotated logs and temporary files on a host.", risk_class::low,
   action_kind::cleanup_disk, "host", "", ""},
  {"cert.rotate", "Issues and loads a new TLS certificate for a service.", risk_class::medium,
   action_kind::rotate_cert, "service", "", ""},
  {"flag.set", "Sets a feature flag to true or false.", risk_class::medium, action_kind::set_flag,
   "flag", R"("value":{"type":"boolean"})", R"("value")"},
  {"host.cordon", "Stops scheduling new work on a host.", risk_class::low, action_kind::cordon,
   "host", "", ""},
  {"host.drain", "Cordons a host and moves its workloads elsewhere.", risk_class::high,
   action_kind::drain, "host", "", ""},
  {"job.restart", "Restarts a job, placing it off cordoned and excluded hosts.", risk_class::medium,
   action_kind::restart_job, "job",
   R"("exclude_hosts":{"type":"array","items":{"type":"string","minLength":1,"maxLength":128},)"
   R"("maxItems":64})",
   ""},
};

std::string schema_of(const spec& s) {
  auto props =
    fmt::format(R"("{}":{{"type":"string","minLength":1,"maxLength":128}})", s.target_arg);
  if (*s.extra_properties != '\0')
    props += fmt::format(",{}", s.extra_properties);
  auto required = fmt::format(R"("{}")", s.target_arg);
  if (*s.extra_required != '\0')
    required += fmt::format(",{}", s.extra_required);
  return fmt::format(R"({{"type":"object","properties":{{{}}},"required":[{}],)"
                     R"("additionalProperties":false}})",
                     props, required);
}

/// The action the arguments describe (types were checked against the schema).
action action_of(const spec& s, const rapidjson::Value& args) {
  action a;
  a.kind = s.kind;
  a.target = string_arg(args, s.target_arg);
  a.version = string_arg(args, "to_version");
  for (const char* key : {"replicas", "limit"})
    if (args.HasMember(key) && args[key].IsInt())
      a.number = args[key].GetInt();
  if (args.HasMember("value") && args["value"].IsBool())
    a.value = args["value"].GetBool();
  if (args.HasMember("exclude_hosts") && args["exclude_hosts"].IsArray())
    for (const auto& h : args["exclude_hosts"].GetArray())
      if (h.IsString())
        a.exclude_hosts.emplace_back(h.GetString());
  return a;
}

} // namespace

void add_write_tools(actors::tool_registry& reg, const world_ptr& w) {
  for (const auto& s : specs) {
    auto handler = [s](world& wd, const rapidjson::Value& args,
                       const std::string& key) -> expected<std::string> {
      return wd.apply(key, action_of(s, args));
    };
    reg.add(sandbox_tool(s.name, s.description, schema_of(s), s.risk, w, handler));
  }
}

} // namespace sreh::plugins::sandbox::detail
