// Loading a world file (SCENARIOS.md, "World file").
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "plugins/tools/sandbox/loader.hpp"
#include "plugins/tools/sandbox/scenario.hpp"

namespace sreh::plugins::sandbox {

namespace detail {

namespace {

/// A name read from the file that must refer to an entity of some kind; checked once every
/// entity is known.
struct reference {
  entry field;
  std::string name;
  enum { service, host, gpu_host, job } want;
};

void fill_service_defaults(service& s) {
  metric_map d{{"rps", 100}, {"latency_p99_ms", 50}, {"error_rate", 0.001},
               {"cpu", 0.3}, {"memory", 0.4},        {"restarts", 0}};
  if (s.kind == service_kind::database) {
    d["connections"] = 0.3 * s.max_connections;
    d["slow_queries"] = 0;
  }
  for (auto& [k, v] : d)
    s.baseline.emplace(k, v);
}

/// One edge of `calls`: a callee's name (called once per request) or
/// `{name: callee, per_request: N}`.
void read_call(reader& r, const entry& c, service& s, std::vector<reference>& refs) {
  auto where = c;
  int per_request = 1;
  if (c.value.is_mapping()) {
    auto m = fields(r, c, {"name", "per_request"}, {"name"});
    where = m["name"];
    if (m.count("per_request"))
      per_request = static_cast<int>(r.integer(m["per_request"], 1, 10'000));
  } else if (!c.value.is_scalar()) {
    r.fail(c, "expected a service name or {name: service, per_request: N}");
  }
  auto callee = name(r, where);
  if (callee == s.name)
    r.fail(where, fmt::format("service '{}' cannot call itself", s.name));
  if (std::find(s.calls.begin(), s.calls.end(), callee) != s.calls.end())
    r.fail(where, fmt::format("service '{}' lists '{}' twice in calls", s.name, callee));
  s.calls.push_back(callee);
  if (per_request > 1)
    s.per_request.emplace(callee, per_request);
  refs.push_back({where, callee, reference::service});
}

service read_service(reader& r, const entry& f, std::vector<reference>& refs) {
  auto m = fields(
    r, f, {"name", "kind", "tier", "replicas", "version", "calls", "baseline", "max_connections"},
    {"name"});
  service s;
  s.name = name(r, m["name"]);
  if (m.count("kind")) {
    auto k = choice(r, m["kind"], {"service", "database", "cache", "queue"});
    s.kind = k == "database" ? service_kind::database
             : k == "cache"  ? service_kind::cache
             : k == "queue"  ? service_kind::queue
                             : service_kind::service;
  }
  if (m.count("tier")) {
    auto t = choice(r, m["tier"], {"critical", "standard", "batch"});
    s.tier = t == "critical" ? service_tier::critical
             : t == "batch"  ? service_tier::batch
                             : service_tier::standard;
  }
  if (m.count("replicas"))
    s.replicas = static_cast<int>(r.integer(m["replicas"], 1, 1000));
  if (m.count("version"))
    s.version = name(r, m["version"]);
  if (m.count("max_connections")) {
    if (s.kind != service_kind::database)
      r.fail(m["max_connections"], "max_connections is only for databases (kind: database)");
    s.max_connections = static_cast<int>(r.integer(m["max_connections"], 1, 1'000'000));
  } else if (s.kind == service_kind::database) {
    s.max_connections = 100;
  }
  if (m.count("calls"))
    for (auto& c : r.items(m["calls"]))
      read_call(r, c, s, refs);
  auto kind = static_cast<entity_kind>(static_cast<int>(s.kind));
  if (m.count("baseline"))
    s.baseline = baseline(r, m["baseline"], metric_names(kind));
  fill_service_defaults(s);
  return s;
}

host read_host(reader& r, const entry& f, std::vector<reference>& refs) {
  auto m = fields(r, f, {"name", "kind", "services", "jobs", "gpus", "baseline"}, {"name"});
  host h;
  h.name = name(r, m["name"]);
  if (m.count("kind"))
    h.kind = choice(r, m["kind"], {"vm", "gpu"}) == "gpu" ? host_kind::gpu : host_kind::vm;
  if (m.count("gpus")) {
    if (h.kind != host_kind::gpu)
      r.fail(m["gpus"], "gpus is only for GPU hosts (kind: gpu)");
    h.gpus = static_cast<int>(r.integer(m["gpus"], 1, 1024));
  } else if (h.kind == host_kind::gpu) {
    h.gpus = 8;
  }
  if (m.count("services"))
    for (auto& x : name_list(r, m["services"])) {
      h.services.push_back(x.value.scalar());
      refs.push_back({x, h.services.back(), reference::service});
    }
  if (m.count("jobs")) {
    if (h.kind != host_kind::gpu)
      r.fail(m["jobs"], "jobs run only on GPU hosts (kind: gpu)");
    for (auto& x : name_list(r, m["jobs"])) {
      h.jobs.push_back(x.value.scalar());
      refs.push_back({x, h.jobs.back(), reference::job});
    }
  }
  if (m.count("baseline"))
    h.baseline =
      baseline(r, m["baseline"], metric_names(entity_kind::host, h.kind == host_kind::gpu));
  metric_map d{{"disk_used", 0.45}, {"load", 0.3}};
  if (h.kind == host_kind::gpu) {
    d["gpu_util"] = h.jobs.empty() && h.services.empty() ? 0.05 : 0.9;
    d["gpu_ecc_errors"] = 0;
    d["xid_errors"] = 0;
  }
  for (auto& [k, v] : d)
    h.baseline.emplace(k, v);
  return h;
}

job read_job(reader& r, const entry& f, std::vector<reference>& refs) {
  auto m = fields(r, f, {"name", "kind", "gpus", "hosts", "baseline"}, {"name"});
  job j;
  j.name = name(r, m["name"]);
  if (m.count("kind"))
    j.kind = choice(r, m["kind"], {"training", "inference"}) == "inference" ? job_kind::inference
                                                                            : job_kind::training;
  if (m.count("gpus"))
    j.gpus = static_cast<int>(r.integer(m["gpus"], 1, 100'000));
  if (m.count("hosts"))
    for (auto& x : name_list(r, m["hosts"])) {
      j.hosts.push_back(x.value.scalar());
      refs.push_back({x, j.hosts.back(), reference::gpu_host});
    }
  if (m.count("baseline"))
    j.baseline = baseline(r, m["baseline"], metric_names(entity_kind::job));
  j.baseline.emplace("throughput", 1.0);
  j.baseline.emplace("stalled", 0);
  return j;
}

deploy_record read_deploy(reader& r, const entry& f, std::vector<reference>& refs) {
  auto m =
    fields(r, f, {"service", "version", "previous", "at", "by"}, {"service", "version", "at"});
  deploy_record d;
  d.service = name(r, m["service"]);
  refs.push_back({m["service"], d.service, reference::service});
  d.version = name(r, m["version"]);
  if (m.count("previous"))
    d.previous = name(r, m["previous"]);
  d.at = duration(r, m["at"], true);
  if (m.count("by"))
    d.by = r.string(m["by"]);
  return d;
}

void check_references(reader& r, const world_model& w, const std::vector<reference>& refs) {
  for (const auto& ref : refs) {
    auto kind = w.kind_of(ref.name);
    bool is_service = kind && *kind <= entity_kind::queue;
    switch (ref.want) {
    case reference::service:
      if (!is_service)
        r.fail(ref.field, fmt::format("unknown service '{}'", ref.name));
      break;
    case reference::job:
      if (kind != entity_kind::job)
        r.fail(ref.field, fmt::format("unknown job '{}'", ref.name));
      break;
    case reference::host:
    case reference::gpu_host:
      if (kind != entity_kind::host)
        r.fail(ref.field, fmt::format("unknown host '{}'", ref.name));
      if (ref.want == reference::gpu_host && w.find_host(ref.name)->kind != host_kind::gpu)
        r.fail(ref.field, fmt::format("host '{}' is not a GPU host", ref.name));
      break;
    }
  }
}

} // namespace

world_model read_world(reader& r, const entry& top) {
  auto m = fields(r, top, {"world", "services", "hosts", "jobs", "flags", "deploys"},
                  {"world", "services"});
  world_model w;
  w.name = name(r, m["world"]);
  std::vector<reference> refs;
  std::set<std::string> names;
  auto unique = [&](const entry& item, const std::string& name) {
    if (!names.insert(name).second)
      r.fail(item, fmt::format("duplicate name '{}' (services, hosts and jobs share one namespace)",
                               name));
  };
  for (auto& f : r.items(m["services"])) {
    w.services.push_back(read_service(r, f, refs));
    unique(f, w.services.back().name);
  }
  if (w.services.empty())
    r.fail(m["services"], "a world needs at least one service");
  if (m.count("hosts"))
    for (auto& f : r.items(m["hosts"])) {
      w.hosts.push_back(read_host(r, f, refs));
      unique(f, w.hosts.back().name);
    }
  if (m.count("jobs"))
    for (auto& f : r.items(m["jobs"])) {
      w.jobs.push_back(read_job(r, f, refs));
      unique(f, w.jobs.back().name);
    }
  if (m.count("flags")) {
    auto& ff = m["flags"];
    if (!ff.value.is_null() && !ff.value.is_mapping())
      r.fail(ff, "expected a mapping of flag: true|false");
    for (const auto& f : r.pairs(ff))
      w.flags.emplace(f.key, r.boolean(f));
  }
  if (m.count("deploys"))
    for (auto& f : r.items(m["deploys"]))
      w.deploys.push_back(read_deploy(r, f, refs));
  check_references(r, w, refs);
  return w;
}

} // namespace detail

expected<world_model> load_world(const std::string& path) {
  auto text = config::yaml::read_text_file(path);
  if (!text)
    return text.error();
  try {
    auto r = detail::file_reader(path);
    auto w = detail::read_world(r, r.parse(*text));
    w.file = path;
    return w;
  } catch (const detail::load_error& e) {
    return sreh::error{errc::invalid_argument, e.message};
  } catch (const std::exception& e) {
    return sreh::error{errc::invalid_argument, fmt::format("{}: {}", path, e.what())};
  }
}

} // namespace sreh::plugins::sandbox
