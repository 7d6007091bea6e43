// Loading a scenario file (SCENARIOS.md, "Scenario file").
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/expr/expression.hpp"
#include "plugins/tools/sandbox/expression.hpp"
#include "plugins/tools/sandbox/loader.hpp"
#include "plugins/tools/sandbox/scenario.hpp"

namespace sreh::plugins::sandbox {

namespace detail {

namespace {

constexpr std::string_view tool_names[] = {
  "topology.get",      "service.describe",  "host.describe",   "metrics.query",
  "logs.search",       "deploys.list",      "flags.list",      "jobs.list",
  "alerts.list",       "deploy.rollback",   "service.restart", "service.scale",
  "db.set_pool_limit", "host.cleanup_disk", "cert.rotate",     "flag.set",
  "host.cordon",       "host.drain",        "job.restart",
};

bool is_service(std::optional<entity_kind> k) {
  return k && *k <= entity_kind::queue;
}

/// Fails unless `name` (read from `f`) is an entity of the wanted kind.
void want(reader& r, const world_model& w, const entry& f, const std::string& name,
          std::string_view wanted) {
  auto k = w.kind_of(name);
  if (!k)
    r.fail(f, fmt::format("unknown {} '{}' in world '{}'", wanted, name, w.name));
  bool ok = wanted == "service"    ? is_service(k)
            : wanted == "database" ? k == entity_kind::database
            : wanted == "gpu host"
              ? k == entity_kind::host && w.find_host(name)->kind == host_kind::gpu
              : std::string_view{to_string(*k)} == wanted;
  if (!ok)
    r.fail(f, fmt::format("'{}' is a {}{}, not a {}", name,
                          k == entity_kind::host
                            ? w.find_host(name)->kind == host_kind::gpu ? "gpu " : "vm "
                            : "",
                          to_string(*k), wanted));
}

fault read_fault(reader& r, const world_model& w, const entry& f) {
  auto m = fields(r, f, {"kind", "target", "at", "version", "cause", "service"}, {"kind"});
  fault x;
  auto kind_name = r.string(m["kind"]);
  auto kind = parse_fault_kind(kind_name);
  if (!kind)
    r.fail(m["kind"], fmt::format("unknown fault kind '{}' (expected one of bad_deploy, "
                                  "memory_leak, connection_pool_exhaustion, dependency_slowdown, "
                                  "traffic_spike, disk_full, cert_expired, bad_flag, gpu_xid, "
                                  "none)",
                                  kind_name));
  x.kind = *kind;
  auto only_for = [&](const char* key, fault_kind k) {
    if (m.count(key) && x.kind != k)
      r.fail(m[key], fmt::format("'{}' is only for {} faults", key, to_string(k)));
    if (!m.count(key) && x.kind == k)
      r.fail(f, fmt::format("a {} fault needs '{}'", to_string(k), key));
  };
  only_for("version", fault_kind::bad_deploy);
  only_for("cause", fault_kind::connection_pool_exhaustion);
  only_for("service", fault_kind::bad_flag);
  if (x.kind == fault_kind::none) {
    if (m.count("target"))
      r.fail(m["target"], "a none fault has no target");
    return x;
  }
  if (!m.count("target"))
    r.fail(f, fmt::format("a {} fault needs 'target'", kind_name));
  if (!m.count("at"))
    r.fail(f, fmt::format("a {} fault needs 'at' (when it began, like -10m)", kind_name));
  x.target = name(r, m["target"]);
  x.at = duration(r, m["at"], true);
  switch (x.kind) {
  case fault_kind::connection_pool_exhaustion:
    want(r, w, m["target"], x.target, "database");
    x.cause = name(r, m["cause"]);
    want(r, w, m["cause"], x.cause, "service");
    if (auto calls = w.find_service(x.cause)->calls;
        std::find(calls.begin(), calls.end(), x.target) == calls.end())
      r.fail(m["cause"], fmt::format("cause '{}' does not call '{}'", x.cause, x.target));
    break;
  case fault_kind::disk_full:
    want(r, w, m["target"], x.target, "host");
    break;
  case fault_kind::gpu_xid:
    want(r, w, m["target"], x.target, "gpu host");
    break;
  case fault_kind::bad_flag:
    want(r, w, m["target"], x.target, "flag");
    x.service = name(r, m["service"]);
    want(r, w, m["service"], x.service, "service");
    break;
  default:
    want(r, w, m["target"], x.target, "service");
    if (x.kind == fault_kind::bad_deploy)
      x.version = name(r, m["version"]);
  }
  return x;
}

herring read_herring(reader& r, const world_model& w, const entry& f) {
  auto m = fields(r, f, {"kind", "target", "at", "version", "text"}, {"kind", "target"});
  herring h;
  auto k = choice(r, m["kind"], {"deploy", "log", "slow"});
  h.kind = k == "deploy" ? herring_kind::deploy
           : k == "slow" ? herring_kind::slow
                         : herring_kind::log;
  h.target = name(r, m["target"]);
  if (h.kind == herring_kind::log) {
    auto kind = w.kind_of(h.target);
    if (!kind || kind == entity_kind::flag)
      r.fail(m["target"], fmt::format("unknown service, host or job '{}'", h.target));
  } else {
    want(r, w, m["target"], h.target, "service");
  }
  if (m.count("at"))
    h.at = duration(r, m["at"], true);
  if (m.count("version") != (h.kind == herring_kind::deploy))
    r.fail(m.count("version") ? m["version"] : f, h.kind == herring_kind::deploy
                                                    ? "a deploy herring needs 'version'"
                                                    : "'version' is only for deploy herrings");
  if (m.count("text") != (h.kind == herring_kind::log))
    r.fail(m.count("text") ? m["text"] : f, h.kind == herring_kind::log
                                              ? "a log herring needs 'text'"
                                              : "'text' is only for log herrings");
  if (h.kind == herring_kind::deploy)
    h.version = name(r, m["version"]);
  if (h.kind == herring_kind::log)
    h.text = r.string(m["text"]);
  return h;
}

expectation read_expect(reader& r, const world_model& w, const entry& f) {
  auto m = fields(
    r, f,
    {"detected", "localized", "root_cause", "mitigated", "forbidden", "max_steps", "recovery"},
    {"detected"});
  expectation e;
  e.detected = r.boolean(m["detected"]);
  if (m.count("localized"))
    for (auto& x : name_list(r, m["localized"], true)) {
      if (!w.kind_of(x.value.scalar()))
        r.fail(x, fmt::format("unknown entity '{}' in world '{}'", x.value.scalar(), w.name));
      e.localized.push_back(x.value.scalar());
    }
  if (m.count("root_cause"))
    for (auto& x : name_list(r, m["root_cause"], true)) {
      auto k = parse_fault_kind(x.value.scalar());
      if (!k)
        r.fail(x, fmt::format("unknown fault kind '{}'", x.value.scalar()));
      e.root_cause.push_back(*k);
    }
  if (m.count("mitigated")) {
    e.mitigated = r.string(m["mitigated"]);
    auto ok = expr::evaluate(
      e.mitigated, [&](const std::string& ent, const std::string& met) -> expected<double> {
        if (auto msg = check_metric(w, ent, met); !msg.empty())
          return sreh::error{errc::invalid_argument, msg};
        return 0.0;
      });
    if (!ok)
      r.fail(m["mitigated"], fmt::format("in '{}': {}", e.mitigated, ok.error().message));
  }
  if (m.count("forbidden"))
    for (auto& x : r.items(m["forbidden"])) {
      auto s = r.string(x);
      auto colon = s.find(':');
      auto tool = s.substr(0, colon);
      if (colon == std::string::npos ||
          std::find(std::begin(tool_names), std::end(tool_names), tool) == std::end(tool_names))
        r.fail(x, fmt::format("expected \"tool:target\" with a sandbox tool, got '{}'", s));
      if (!w.kind_of(s.substr(colon + 1)))
        r.fail(x, fmt::format("unknown target '{}' in world '{}'", s.substr(colon + 1), w.name));
      e.forbidden.push_back(s);
    }
  if (m.count("max_steps"))
    e.max_steps = static_cast<int>(r.integer(m["max_steps"], 1, 1000));
  if (m.count("recovery")) {
    e.recovery = r.string(m["recovery"]);
    if (e.recovery != "recovered" && e.recovery != "partial" && e.recovery != "not_recovered")
      r.fail(m["recovery"],
             fmt::format("expected recovered, partial or not_recovered, got '{}'", e.recovery));
    if (!e.detected)
      r.fail(m["recovery"], "a control case (detected: false) has nothing to recover");
  }
  return e;
}

scenario read_scenario(reader& r, const entry& top, const std::string& dir) {
  auto m =
    fields(r, top, {"scenario", "world", "seed", "faults", "herrings", "alert", "goal", "expect"},
           {"scenario", "world", "alert", "goal", "expect"});
  scenario sc;
  sc.id = name(r, m["scenario"]);
  auto& wf = m["world"];
  if (wf.value.is_scalar()) {
    auto path = (std::filesystem::path{dir} / r.string(wf)).lexically_normal().string();
    auto w = load_world(path);
    if (!w)
      r.fail(wf, fmt::format("cannot load world: {}", w.error().message));
    sc.world = std::move(*w);
  } else {
    sc.world = read_world(r, wf);
  }
  if (m.count("seed"))
    sc.seed = static_cast<std::uint64_t>(r.integer(m["seed"], 0, INT64_MAX));
  if (m.count("faults"))
    for (auto& f : r.items(m["faults"]))
      sc.faults.push_back(read_fault(r, sc.world, f));
  if (m.count("herrings"))
    for (auto& f : r.items(m["herrings"]))
      sc.herrings.push_back(read_herring(r, sc.world, f));
  auto am = fields(r, m["alert"], {"name", "labels", "annotations"}, {"name"});
  sc.alert.name = name(r, am["name"]);
  if (am.count("labels"))
    sc.alert.labels = string_map(r, am["labels"]);
  if (am.count("annotations"))
    sc.alert.annotations = string_map(r, am["annotations"]);
  sc.goal = r.string(m["goal"]);
  if (sc.goal.empty())
    r.fail(m["goal"], "the goal is empty");
  sc.expect = read_expect(r, sc.world, m["expect"]);
  return sc;
}

expected<scenario> load(const std::string& text, const std::string& name, const std::string& dir) {
  try {
    auto r = file_reader(name);
    auto sc = read_scenario(r, r.parse(text), dir);
    sc.file = name;
    return sc;
  } catch (const load_error& e) {
    return sreh::error{errc::invalid_argument, e.message};
  } catch (const std::exception& e) {
    return sreh::error{errc::invalid_argument, fmt::format("{}: {}", name, e.what())};
  }
}

} // namespace

} // namespace detail

expected<scenario> load_scenario(const std::string& path) {
  auto text = config::yaml::read_text_file(path);
  if (!text)
    return text.error();
  auto dir = std::filesystem::path{path}.parent_path().string();
  return detail::load(*text, path, dir.empty() ? "." : dir);
}

expected<scenario> load_scenario_string(const std::string& text, const std::string& name) {
  return detail::load(text, name, ".");
}

} // namespace sreh::plugins::sandbox
