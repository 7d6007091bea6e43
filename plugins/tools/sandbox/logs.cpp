// Generated log lines: seeded INFO noise, the issues of active faults and herrings, and events
// (deploys, actions) — all a function of the minute, the entity and the seed.
#include <fmt/format.h>

#include <algorithm>

#include "core/base/text.hpp"
#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox {

const char* to_string(log_level l) {
  switch (l) {
  case log_level::info:
    return "INFO";
  case log_level::warn:
    return "WARN";
  case log_level::error:
    return "ERROR";
  }
  return "INFO";
}

namespace {

const std::vector<std::string>& templates(std::optional<entity_kind> k, const world_model& w,
                                          const std::string& entity) {
  static const std::vector<std::string> service{
    "GET /healthz 200 in {} ms", "request completed: 200 in {} ms",
    "config refresh finished in {} ms", "processed {} requests in the last minute"};
  static const std::vector<std::string> database{"checkpoint complete: wrote {} buffers",
                                                 "autovacuum: processing table \"public.t{}\"",
                                                 "connection authorized: user=app pid={}"};
  static const std::vector<std::string> cache{"evicted {} keys", "keyspace hits {}"};
  static const std::vector<std::string> queue{"consumer lag {} messages", "published {} messages"};
  static const std::vector<std::string> host{"systemd: Started Session {} of user ops.",
                                             "node-exporter: scrape ok in {} ms",
                                             "kernel: eth0: rx {} packets"};
  static const std::vector<std::string> training{"step {}: loss 1.873",
                                                 "checkpoint saved at step {}"};
  static const std::vector<std::string> inference{"served {} requests",
                                                  "batch size {} at p99 41 ms"};
  switch (k.value_or(entity_kind::service)) {
  case entity_kind::database:
    return database;
  case entity_kind::cache:
    return cache;
  case entity_kind::queue:
    return queue;
  case entity_kind::host:
    return host;
  case entity_kind::job:
    return w.find_job(entity)->kind == job_kind::inference ? inference : training;
  default:
    return service;
  }
}

std::string describe(const action_record& r) {
  const auto& a = r.act;
  switch (a.kind) {
  case action_kind::rollback:
    return fmt::format("rolled back to version {} by sreh", a.version);
  case action_kind::restart:
    return "restarting all replicas (requested by sreh)";
  case action_kind::scale:
    return fmt::format("scaled to {} replicas by sreh", a.number);
  case action_kind::set_pool_limit:
    return fmt::format("max_connections set to {}", a.number);
  case action_kind::cleanup_disk:
    return "removed rotated logs and temporary files";
  case action_kind::rotate_cert:
    return "TLS certificate rotated; new certificate loaded";
  case action_kind::set_flag:
    return fmt::format("flag {} set to {}", a.target, a.value);
  case action_kind::cordon:
    return "node cordoned: no new work scheduled";
  case action_kind::uncordon:
    return "node uncordoned";
  case action_kind::drain:
    return "node drained: workloads moved off";
  case action_kind::restart_job:
    return fmt::format("job {} restarted", a.target);
  }
  return "action";
}

} // namespace

std::vector<log_line> world::state::logs_at_minute(std::int64_t m,
                                                   const std::string& entity) const {
  const auto& w = spec->world;
  std::vector<log_line> out;
  // Noise: one or two ordinary lines a minute.
  const auto& tpl = templates(w.kind_of(entity), w, entity);
  auto h = mix(spec->seed, entity, m, "noise");
  for (int i = 0; i < 1 + static_cast<int>(h % 2); ++i) {
    auto hi = mix(spec->seed, entity, m + i, "line");
    out.push_back({m + static_cast<std::int64_t>(hi % 60), log_level::info, entity,
                   fmt::format(fmt::runtime(tpl[hi % tpl.size()]), 5 + (hi >> 8) % 400)});
  }
  // Issues of active faults and herrings.
  auto fr = frame_at(m);
  if (auto it = fr.issues.find(entity); it != fr.issues.end())
    for (const auto& is : it->second)
      for (int i = 0; i < is.per_minute; ++i) {
        auto jitter = static_cast<std::int64_t>(mix(spec->seed, is.message, m + i) % 10);
        out.push_back({m + i * 60 / is.per_minute + jitter, is.level, entity, is.message});
      }
  // Events of this minute.
  auto L = live_at(m + 59);
  for (const auto& d : L.deploys)
    if (d.service == entity && d.at >= m && d.at < m + 60)
      out.push_back(
        {d.at, log_level::info, entity,
         fmt::format("deployed version {} (previous {}) by {}", d.version, d.previous, d.by)});
  for (const auto& r : log)
    if (r.act.target == entity && r.at >= m && r.at < m + 60 && r.act.kind != action_kind::rollback)
      out.push_back({r.at, log_level::info, entity, describe(r)});
  return out;
}

expected<std::vector<log_line>> world::logs(const log_query& q) const {
  std::lock_guard<std::mutex> lock{mtx_};
  const auto& w = spec_->world;
  auto kind = w.kind_of(q.entity);
  if (!kind || *kind == entity_kind::flag)
    return sreh::error{errc::not_found, fmt::format("unknown service, host or job '{}'", q.entity)};
  auto now = state_->now;
  auto from = now - q.window;
  auto needle = ascii_lower(q.text);
  std::vector<log_line> out;
  for (auto m = from - from % 60; m <= now; m += 60)
    for (auto& line : state_->logs_at_minute(m, q.entity)) {
      if (line.at <= from || line.at > now)
        continue;
      if (q.min_level && static_cast<int>(line.level) < static_cast<int>(*q.min_level))
        continue;
      if (!needle.empty() && ascii_lower(line.message).find(needle) == std::string::npos)
        continue;
      out.push_back(std::move(line));
    }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.at > b.at; });
  return out;
}

} // namespace sreh::plugins::sandbox
