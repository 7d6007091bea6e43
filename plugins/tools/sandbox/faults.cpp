// The symptoms of each fault kind and the remedies that clear them (SCENARIOS.md, "Fault kinds").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plugins/tools/sandbox/effects.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox {

namespace {

constexpr std::int64_t leak_ramp = 1200;        // seconds from a fresh start to 92% memory
constexpr std::int64_t oom_period = 300;        // then an OOM kill every five minutes
constexpr std::int64_t db_restart_relief = 120; // a restarted database refills in two minutes
constexpr double spike_factor = 4.0;
constexpr double saturation = 0.75; // utilization above which a service queues and sheds

struct context {
  const world::state& st;
  const world_model& w;
  const live_state& L;
  const live_state& at_start; // the state when the fault began
  std::int64_t t;
  std::int64_t begin;
  effects& out;
};

/// Services on `host` that still run there (a drained host runs nothing).
std::vector<std::string> hosted(const context& c, const std::string& host) {
  if (c.L.hosts.at(host).drained)
    return {};
  return c.w.find_host(host)->services;
}

void bad_deploy(const context& c, const fault& f) {
  if (c.L.services.at(f.target).version != f.version)
    return; // rolled back
  c.out.services[f.target].error += 0.25;
  c.out.say(f.target, log_level::error,
            fmt::format("unhandled exception in /api/{}/v1/handle (version {}): "
                        "NullPointerException at RequestHandler.process",
                        f.target, f.version),
            6);
  for (const auto& caller : c.w.callers_of(f.target))
    c.out.say(caller, log_level::error, fmt::format("call to {} failed: HTTP 500", f.target), 2);
}

void memory_leak(const context& c, const fault& f) {
  const auto& s = c.L.services.at(f.target);
  if (s.version != c.at_start.services.at(f.target).version)
    return; // rolled back to a version without the leak
  auto since = std::max(c.begin, s.restarted_at);
  auto e = c.t - since;
  auto base = c.w.find_service(f.target)->baseline.at("memory");
  auto& fx = c.out.services[f.target];
  double mem = 0;
  if (e < leak_ramp) {
    mem = base + (0.92 - base) * static_cast<double>(e) / leak_ramp;
  } else {
    auto into = (e - leak_ramp) % oom_period;
    fx.oom_restarts = static_cast<int>((e - leak_ramp) / oom_period) + 1;
    mem = 0.92 + 0.06 * static_cast<double>(into) / oom_period;
    fx.error += 0.02;
    c.out.say(f.target, log_level::error, "OOMKilled: container restarted", 1);
  }
  fx.memory = mem;
  fx.cpu_mult *= 1.2;
  if (mem > 0.85)
    fx.latency_mult *= 1 + 3 * (mem - 0.85) / 0.1;
  if (mem > 0.7)
    c.out.say(f.target, log_level::warn,
              fmt::format("heap usage at {}%", static_cast<int>(std::lround(mem * 100))), 3);
}

void pool_exhaustion(const context& c, const fault& f) {
  const auto& db = c.L.services.at(f.target);
  const auto& cause = c.L.services.at(f.cause);
  auto held = c.at_start.services.at(f.target).max_connections;
  if (cause.restarted_at >= c.begin || cause.replicas != c.at_start.services.at(f.cause).replicas)
    return; // the cause let go of its connections
  if (db.restarted_at >= c.begin && c.t - db.restarted_at < db_restart_relief)
    return; // freshly restarted database: empty until the cause grabs the pool again
  auto& fx = c.out.services[f.target];
  fx.connections = held;
  if (db.max_connections >= held * 5 / 4)
    return; // enough headroom: the others get connections again
  fx.slow_queries += 40;
  fx.latency_mult *= 2.5;
  c.out.say(f.target, log_level::warn,
            fmt::format("remaining connection slots are reserved ({} of {} used)", held,
                        db.max_connections),
            2);
  for (const auto& caller : c.w.callers_of(f.target)) {
    auto& cx = c.out.services[caller];
    cx.error += 0.2;
    cx.latency_add += 2000;
    c.out.say(caller, log_level::error,
              fmt::format("timeout acquiring connection from pool for {} after 2000 ms", f.target),
              4);
  }
  c.out.say(f.cause, log_level::warn,
            fmt::format("connection pool for {}: {} of {} in use", f.target, held, held), 2);
}

void dependency_slowdown(const context& c, const fault& f) {
  if (c.L.services.at(f.target).replicas > c.at_start.services.at(f.target).replicas)
    return; // scaled out
  c.out.services[f.target].latency_mult *= 8;
  auto p99 = static_cast<int>(c.w.find_service(f.target)->baseline.at("latency_p99_ms") * 8);
  c.out.say(f.target, log_level::warn,
            fmt::format("request latency p99 {} ms above objective", p99), 2);
  for (const auto& caller : c.w.callers_of(f.target))
    c.out.say(caller, log_level::warn, fmt::format("upstream {} slow: p99 {} ms", f.target, p99),
              3);
}

void traffic_spike(const context& c, const fault& f) {
  const auto& model = *c.w.find_service(f.target);
  auto& fx = c.out.services[f.target];
  fx.rps_mult *= spike_factor;
  fx.cpu_mult *= spike_factor;
  auto u =
    model.baseline.at("cpu") * spike_factor * model.replicas / c.L.services.at(f.target).replicas;
  if (u <= saturation)
    return; // enough replicas
  fx.latency_mult *= 1 + (u - saturation) * 10;
  fx.error += std::min(0.3, (u - saturation) * 0.8);
  c.out.say(f.target, log_level::warn,
            fmt::format("request queue depth {}, shedding load",
                        static_cast<int>(50 + (u - saturation) * 2000)),
            3);
}

void disk_full(const context& c, const fault& f) {
  if (c.L.hosts.at(f.target).cleaned_at >= c.begin)
    return;
  c.out.hosts[f.target].disk_full = true;
  auto line = fmt::format("write failed: No space left on device ({})", f.target);
  c.out.say(f.target, log_level::error, line, 2);
  c.out.say(f.target, log_level::warn, "filesystem / is 99% full", 1);
  for (const auto& s : hosted(c, f.target)) {
    c.out.services[s].error += 0.15;
    c.out.say(s, log_level::error, line, 3);
  }
}

void cert_expired(const context& c, const fault& f) {
  if (c.L.services.at(f.target).cert_rotated_at >= c.begin)
    return;
  c.out.services[f.target].rps_mult *= 0.4;
  for (const auto& caller : c.w.callers_of(f.target)) {
    c.out.services[caller].error += 0.35;
    c.out.say(caller, log_level::error,
              fmt::format("TLS handshake with {} failed: certificate has expired", f.target), 4);
  }
}

void bad_flag(const context& c, const fault& f) {
  auto value = c.L.flags.at(f.target).value;
  if (value == c.w.flags.find(f.target)->second)
    return; // set back
  c.out.services[f.service].error += 0.2;
  c.out.say(f.service, log_level::error,
            fmt::format("feature flag {} {}: code path raised IllegalStateException", f.target,
                        value ? "enabled" : "disabled"),
            4);
}

void gpu_xid(const context& c, const fault& f) {
  auto& hx = c.out.hosts[f.target];
  auto elapsed = c.t - c.begin;
  hx.gpu_broken = true;
  hx.xid_errors = 1 + static_cast<double>(elapsed / 120);
  hx.ecc_errors = 2 + static_cast<double>(elapsed / 300);
  auto xid = fmt::format("NVRM: Xid 79 on {}: GPU has fallen off the bus", f.target);
  c.out.say(f.target, log_level::error, xid, 2);
  for (const auto& [name, j] : c.L.jobs) {
    if (!contains(j.hosts, f.target))
      continue;
    c.out.jobs[name].stalled = true;
    auto stuck = c.t - std::max(c.begin, j.restarted_at);
    c.out.say(name, log_level::error, xid, 1);
    c.out.say(name, log_level::warn,
              fmt::format("job {} stalled: no progress for {} s", name, stuck), 2);
  }
  for (const auto& s : hosted(c, f.target)) {
    c.out.services[s].error += 0.25;
    c.out.say(s, log_level::error,
              fmt::format("CUDA error: unspecified launch failure on {}", f.target), 3);
  }
}

void herrings(const world::state& st, std::int64_t t, effects& out) {
  for (const auto& h : st.spec->herrings) {
    if (t < start_of(h.at))
      continue;
    if (h.kind == herring_kind::slow) {
      out.services[h.target].local_latency *= 1.8;
      out.say(h.target, log_level::info, "request latency above objective on batch endpoint", 1);
    } else if (h.kind == herring_kind::log) {
      auto text = h.text;
      auto level = log_level::warn;
      for (auto [prefix, l] :
           {std::pair{"ERROR ", log_level::error}, std::pair{"WARN ", log_level::warn},
            std::pair{"INFO ", log_level::info}})
        if (text.rfind(prefix, 0) == 0) {
          level = l;
          text = text.substr(std::string_view{prefix}.size());
        }
      out.say(h.target, level, text, 1);
    }
  }
}

} // namespace

void apply_faults(const world::state& st, const live_state& L, std::int64_t t, effects& out) {
  const auto& faults = st.spec->faults;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const auto& f = faults[i];
    auto begin = start_of(f.at);
    if (f.kind == fault_kind::none || t < begin)
      continue;
    context c{st, st.spec->world, L, st.at_fault[i], t, begin, out};
    switch (f.kind) {
    case fault_kind::bad_deploy:
      bad_deploy(c, f);
      break;
    case fault_kind::memory_leak:
      memory_leak(c, f);
      break;
    case fault_kind::connection_pool_exhaustion:
      pool_exhaustion(c, f);
      break;
    case fault_kind::dependency_slowdown:
      dependency_slowdown(c, f);
      break;
    case fault_kind::traffic_spike:
      traffic_spike(c, f);
      break;
    case fault_kind::disk_full:
      disk_full(c, f);
      break;
    case fault_kind::cert_expired:
      cert_expired(c, f);
      break;
    case fault_kind::bad_flag:
      bad_flag(c, f);
      break;
    case fault_kind::gpu_xid:
      gpu_xid(c, f);
      break;
    case fault_kind::none:
      break;
    }
  }
  herrings(st, t, out);
}

} // namespace sreh::plugins::sandbox
