// The sandbox world as a Prometheus exporter (the live demo, docs/prometheus.md): every metric
// of every service, host and job now and its baseline, the entities' state (replicas, pool
// limits, cordons, flags, versions) and the simulated clock, in the text exposition format
// 0.0.4. Names: `sandbox_<metric>{entity, kind}` and `sandbox_<metric>_baseline{...}`, a metric
// in milliseconds in seconds (`sandbox_latency_p99_seconds`), as Prometheus names go.

#include <fmt/format.h>

#include <map>

#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox::detail {

namespace {

std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// The families being written, in name order: help text and sample lines of each.
class families {
 public:
  void add(const std::string& name, std::string help, const std::string& labels, double v) {
    auto& f = by_name_[name];
    if (f.help.empty())
      f.help = std::move(help);
    f.lines += labels.empty() ? fmt::format("{} {}\n", name, v)
                              : fmt::format("{}{{{}}} {}\n", name, labels, v);
  }
  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& [name, f] : by_name_)
      out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}", name, f.help, name, f.lines);
    return out;
  }

 private:
  struct family {
    std::string help, lines;
  };
  std::map<std::string, family> by_name_;
};

std::string labels_of(std::string_view entity, std::string_view kind) {
  return fmt::format("entity=\"{}\",kind=\"{}\"", label_value(entity), label_value(kind));
}

void add_metrics(families& out, const std::string& labels, const metric_map& now,
                 const metric_map& baseline) {
  for (const auto& [m, v] : now) {
    // Prometheus names carry base units: latency_p99_ms is exported in seconds.
    const bool ms = m.size() > 3 && m.compare(m.size() - 3, 3, "_ms") == 0;
    const auto name = "sandbox_" + (ms ? m.substr(0, m.size() - 3) + "_seconds" : m);
    const double scale = ms ? 1e-3 : 1;
    out.add(name, fmt::format("The simulated {} of each entity now.", m), labels, v * scale);
    if (auto b = baseline.find(m); b != baseline.end())
      out.add(name + "_baseline", fmt::format("The usual {} of each entity (its baseline).", m),
              labels, b->second * scale);
  }
}

} // namespace

std::string exposition(const world& w) {
  auto lock = world_access::lock(w);
  const auto& st = world_access::state(w);
  const auto live = st.live_at(st.now);
  const auto fr = st.frame_at(st.now);
  const auto& model = st.spec->world;
  families out;
  auto metrics_of = [&fr](const std::string& name) -> const metric_map& {
    static const metric_map none;
    auto i = fr.metrics.find(name);
    return i == fr.metrics.end() ? none : i->second;
  };
  for (const auto& s : model.services) {
    const auto labels = labels_of(s.name, to_string(s.kind));
    add_metrics(out, labels, metrics_of(s.name), s.baseline);
    if (auto l = live.services.find(s.name); l != live.services.end()) {
      out.add("sandbox_replicas", "Replicas of each service.", labels, l->second.replicas);
      out.add("sandbox_callers", "Services that call each service (0: an entry point).", labels,
              static_cast<double>(model.callers_of(s.name).size()));
      if (s.kind == service_kind::database)
        out.add("sandbox_max_connections", "The connection pool limit of each database.", labels,
                l->second.max_connections);
      out.add("sandbox_version_info", "The version each service runs (always 1).",
              labels + fmt::format(",version=\"{}\"", label_value(l->second.version)), 1);
    }
  }
  for (const auto& h : model.hosts) {
    const auto labels = labels_of(h.name, h.kind == host_kind::gpu ? "gpu_node" : "host");
    add_metrics(out, labels, metrics_of(h.name), h.baseline);
    if (auto l = live.hosts.find(h.name); l != live.hosts.end()) {
      out.add("sandbox_cordoned", "1 when the host takes no new work.", labels,
              l->second.cordoned ? 1 : 0);
      out.add("sandbox_drained", "1 when the host's work was moved off it.", labels,
              l->second.drained ? 1 : 0);
    }
    if (h.gpus > 0)
      out.add("sandbox_gpus", "GPUs of each GPU node.", labels, h.gpus);
  }
  for (const auto& j : model.jobs)
    add_metrics(out, labels_of(j.name, "job"), metrics_of(j.name), j.baseline);
  for (const auto& [name, initial] : model.flags) {
    bool value = initial;
    if (auto l = live.flags.find(name); l != live.flags.end())
      value = l->second.value;
    out.add("sandbox_flag_enabled", "1 when the feature flag is on.",
            fmt::format("flag=\"{}\"", label_value(name)), value ? 1 : 0);
  }
  out.add("sandbox_simulated_time_seconds", "The sandbox's simulated clock (Unix seconds).", "",
          static_cast<double>(st.now));
  return out.text();
}

} // namespace sreh::plugins::sandbox::detail
