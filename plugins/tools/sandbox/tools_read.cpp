// Read-only tools over the world's structure: topology, descriptions, jobs, flags, alerts,
// deploys (docs/sandbox-tools.md).
#include <fmt/format.h>

#include <algorithm>

#include "plugins/tools/sandbox/tools.hpp"

namespace sreh::plugins::sandbox::detail {

namespace {

using actors::risk_class;

constexpr const char* no_args = R"({"type":"object","properties":{},"additionalProperties":false})";

/// Runs `body` with the world locked, writing one JSON object.
template <class F>
expected<std::string> locked_json(world& w, F&& body) {
  auto lock = world_access::lock(w);
  auto& st = world_access::state(w);
  rapidjson::StringBuffer buf;
  json::writer out{buf};
  if (auto e = body(st, out))
    return e;
  return std::string{buf.GetString()};
}

std::vector<std::string> live_hosts_of_job(const live_state& L, const std::string& job) {
  return L.jobs.at(job).hosts;
}

std::vector<std::string> live_jobs_on(const live_state& L, const std::string& host) {
  std::vector<std::string> out;
  for (const auto& [name, j] : L.jobs)
    if (std::find(j.hosts.begin(), j.hosts.end(), host) != j.hosts.end())
      out.push_back(name);
  return out;
}

void write_service_head(json::writer& out, const world_model& w, const service& s,
                        const live_state& L) {
  const auto& live = L.services.at(s.name);
  out.Key("name");
  out.String(s.name.c_str());
  out.Key("kind");
  out.String(to_string(s.kind));
  out.Key("tier");
  out.String(to_string(s.tier));
  out.Key("replicas");
  out.Int(live.replicas);
  out.Key("version");
  out.String(live.version.c_str());
  out.Key("calls");
  write_names(out, s.calls);
  out.Key("called_by");
  write_names(out, w.callers_of(s.name));
  out.Key("hosts");
  write_names(out, w.hosts_of(s.name));
}

sreh::error unknown(const world_model& w, const std::string& name, std::string_view want) {
  auto k = w.kind_of(name);
  if (!k)
    return {errc::not_found, fmt::format("unknown {} '{}'", want, name)};
  return {errc::invalid_argument,
          fmt::format("unknown {} '{}' ('{}' is a {})", want, name, name, to_string(*k))};
}

expected<std::string> topology(world& w, const rapidjson::Value&, const std::string&) {
  return locked_json(w, [](world::state& st, json::writer& out) -> sreh::error {
    const auto& m = st.spec->world;
    auto L = st.live_at(st.now);
    out.StartObject();
    out.Key("services");
    out.StartArray();
    for (const auto& s : m.services) {
      out.StartObject();
      write_service_head(out, m, s, L);
      out.EndObject();
    }
    out.EndArray();
    out.Key("hosts");
    out.StartArray();
    for (const auto& h : m.hosts) {
      out.StartObject();
      out.Key("name");
      out.String(h.name.c_str());
      out.Key("kind");
      out.String(to_string(h.kind));
      out.Key("services");
      write_names(out, h.services);
      out.Key("jobs");
      write_names(out, live_jobs_on(L, h.name));
      out.EndObject();
    }
    out.EndArray();
    out.Key("jobs");
    out.StartArray();
    for (const auto& j : m.jobs) {
      out.StartObject();
      out.Key("name");
      out.String(j.name.c_str());
      out.Key("kind");
      out.String(to_string(j.kind));
      out.Key("hosts");
      write_names(out, live_hosts_of_job(L, j.name));
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
    return {};
  });
}

expected<std::string> describe_service(world& w, const rapidjson::Value& args, const std::string&) {
  auto name = string_arg(args, "service");
  return locked_json(w, [&](world::state& st, json::writer& out) -> sreh::error {
    const auto& m = st.spec->world;
    const auto* s = m.find_service(name);
    if (!s)
      return unknown(m, name, "service");
    auto L = st.live_at(st.now);
    auto fr = st.frame_at(st.now);
    out.StartObject();
    write_service_head(out, m, *s, L);
    if (s->kind == service_kind::database) {
      out.Key("max_connections");
      out.Int(L.services.at(name).max_connections);
    }
    out.Key("baseline");
    write_metrics(out, s->baseline);
    out.Key("current");
    write_metrics(out, fr.metrics.at(name));
    out.EndObject();
    return {};
  });
}

expected<std::string> describe_host(world& w, const rapidjson::Value& args, const std::string&) {
  auto name = string_arg(args, "host");
  return locked_json(w, [&](world::state& st, json::writer& out) -> sreh::error {
    const auto& m = st.spec->world;
    const auto* h = m.find_host(name);
    if (!h)
      return unknown(m, name, "host");
    auto L = st.live_at(st.now);
    auto fr = st.frame_at(st.now);
    const auto& live = L.hosts.at(name);
    out.StartObject();
    out.Key("name");
    out.String(h->name.c_str());
    out.Key("kind");
    out.String(to_string(h->kind));
    out.Key("services");
    write_names(out, h->services);
    out.Key("jobs");
    write_names(out, live_jobs_on(L, name));
    if (h->kind == host_kind::gpu) {
      out.Key("gpus");
      out.Int(h->gpus);
    }
    out.Key("cordoned");
    out.Bool(live.cordoned);
    out.Key("drained");
    out.Bool(live.drained);
    out.Key("baseline");
    write_metrics(out, h->baseline);
    out.Key("current");
    write_metrics(out, fr.metrics.at(name));
    out.EndObject();
    return {};
  });
}

expected<std::string> list_jobs(world& w, const rapidjson::Value&, const std::string&) {
  return locked_json(w, [](world::state& st, json::writer& out) -> sreh::error {
    auto L = st.live_at(st.now);
    auto fr = st.frame_at(st.now);
    out.StartObject();
    out.Key("jobs");
    out.StartArray();
    for (const auto& j : st.spec->world.jobs) {
      const auto& cur = fr.metrics.at(j.name);
      out.StartObject();
      out.Key("name");
      out.String(j.name.c_str());
      out.Key("kind");
      out.String(to_string(j.kind));
      out.Key("gpus");
      out.Int(j.gpus);
      out.Key("hosts");
      write_names(out, live_hosts_of_job(L, j.name));
      out.Key("stalled");
      out.Bool(cur.at("stalled") > 0);
      out.Key("baseline");
      write_metrics(out, {{"throughput", j.baseline.at("throughput")}});
      out.Key("current");
      write_metrics(out, {{"throughput", cur.at("throughput")}});
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
    return {};
  });
}

expected<std::string> list_flags(world& w, const rapidjson::Value&, const std::string&) {
  return locked_json(w, [](world::state& st, json::writer& out) -> sreh::error {
    auto L = st.live_at(st.now);
    out.StartObject();
    out.Key("flags");
    out.StartArray();
    for (const auto& [name, def] : st.spec->world.flags) {
      const auto& f = L.flags.at(name);
      out.StartObject();
      out.Key("name");
      out.String(name.c_str());
      out.Key("value");
      out.Bool(f.value);
      out.Key("default");
      out.Bool(def);
      out.Key("changed_at");
      f.changed_at == never ? out.Null() : out.String(rfc3339(f.changed_at).c_str());
      out.Key("changed_by");
      f.changed_at == never ? out.Null() : out.String(f.changed_by.c_str());
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
    return {};
  });
}

expected<std::string> list_alerts(world& w, const rapidjson::Value&, const std::string&) {
  return locked_json(w, [](world::state& st, json::writer& out) -> sreh::error {
    const auto& a = st.spec->alert;
    auto since = epoch - 300;
    for (const auto& f : st.spec->faults)
      if (f.kind != fault_kind::none)
        since = std::min(since, start_of(f.at) + 120); // alerts fire a little after the fault
    auto write_map = [&](const std::map<std::string, std::string>& m) {
      out.StartObject();
      for (const auto& [k, v] : m) {
        out.Key(k.c_str());
        out.String(v.c_str());
      }
      out.EndObject();
    };
    out.StartObject();
    out.Key("alerts");
    out.StartArray();
    out.StartObject();
    out.Key("name");
    out.String(a.name.c_str());
    out.Key("labels");
    write_map(a.labels);
    out.Key("annotations");
    write_map(a.annotations);
    out.Key("since");
    out.String(rfc3339(since).c_str());
    out.EndObject();
    out.EndArray();
    out.EndObject();
    return {};
  });
}

expected<std::string> list_deploys(world& w, const rapidjson::Value& args, const std::string&) {
  auto service = string_arg(args, "service");
  auto window = window_arg(args, 86400, 30 * 86400);
  if (!window)
    return window.error();
  return locked_json(w, [&](world::state& st, json::writer& out) -> sreh::error {
    if (!service.empty() && !st.spec->world.find_service(service))
      return unknown(st.spec->world, service, "service");
    auto L = st.live_at(st.now);
    out.StartObject();
    out.Key("deploys");
    out.StartArray();
    for (auto it = L.deploys.rbegin(); it != L.deploys.rend(); ++it) {
      if ((!service.empty() && it->service != service) || it->at < st.now - *window)
        continue;
      out.StartObject();
      for (auto [k, v] : {std::pair{"service", &it->service}, std::pair{"version", &it->version},
                          std::pair{"previous", &it->previous}}) {
        out.Key(k);
        out.String(v->c_str());
      }
      out.Key("at");
      out.String(rfc3339(it->at).c_str());
      out.Key("by");
      out.String(it->by.c_str());
      if (it->rollback) {
        out.Key("rollback");
        out.Bool(true);
      }
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
    return {};
  });
}

} // namespace

void add_read_tools(actors::tool_registry& reg, const world_ptr& w) {
  auto add = [&](const char* name, const char* desc, std::string schema, tool_handler h) {
    reg.add(sandbox_tool(name, desc, std::move(schema), risk_class::read_only, w, std::move(h)));
  };
  auto one_name = [](const char* key) {
    return fmt::format(R"({{"type":"object","properties":{{"{}":{{"type":"string",)"
                       R"("minLength":1,"maxLength":128}}}},"required":["{}"],)"
                       R"("additionalProperties":false}})",
                       key, key);
  };
  add("topology.get", "The call graph: services with calls/called_by/hosts, hosts, jobs.", no_args,
      topology);
  add("service.describe",
      "A service's kind, tier, replicas, version, edges, baseline and "
      "current metrics.",
      one_name("service"), describe_service);
  add("host.describe",
      "A host's services, jobs, cordon/drain state, baseline and current "
      "metrics.",
      one_name("host"), describe_host);
  add("jobs.list", "AI jobs with their hosts, stalled state and throughput.", no_args, list_jobs);
  add("flags.list", "Feature flags with value, default and last change.", no_args, list_flags);
  add("alerts.list", "Firing alerts.", no_args, list_alerts);
  add("deploys.list", "Deploys, newest first (default window 24h).",
      R"({"type":"object","properties":{"service":{"type":"string","minLength":1,)"
      R"("maxLength":128},"window":{"type":"string","minLength":2,"maxLength":16}},)"
      R"("additionalProperties":false})",
      list_deploys);
}

} // namespace sreh::plugins::sandbox::detail
