// Replaying the world's timeline (history, faults, herrings, actions) up to an instant.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox {

std::uint64_t mix(std::uint64_t seed, std::string_view a, std::int64_t b, std::string_view c) {
  std::uint64_t h = 1469598103934665603ULL ^ seed;
  auto feed = [&](std::string_view s) {
    for (unsigned char ch : s)
      h = (h ^ ch) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  feed(a);
  feed(c);
  h ^= static_cast<std::uint64_t>(b) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  // splitmix64 finalizer
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

double unit_noise(std::uint64_t h) {
  return static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
}

std::string guess_previous(const std::string& v) {
  // Decrement the last non-zero number: v2.4.1 → v2.4.0, v1.8.0 → v1.7.0.
  std::vector<std::pair<std::size_t, std::size_t>> numbers; // [begin, end)
  for (std::size_t i = 0; i < v.size();) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) {
      ++i;
      continue;
    }
    auto b = i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
      ++i;
    numbers.emplace_back(b, i);
  }
  for (auto it = numbers.rbegin(); it != numbers.rend(); ++it) {
    auto n = std::stoll(v.substr(it->first, it->second - it->first));
    if (n > 0)
      return v.substr(0, it->first) + std::to_string(n - 1) + v.substr(it->second);
  }
  return v + "-previous";
}

std::string rfc3339(std::int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

/// GPUs job `name` takes on each of its hosts: its GPUs spread over the hosts the world gives it,
/// or the whole host when the world does not say how many it needs.
int gpus_per_host(const world_model& w, const std::string& name, const host& h) {
  const auto* j = w.find_job(name);
  if (j == nullptr || j->gpus <= 0)
    return h.gpus;
  auto n = static_cast<int>(std::max<std::size_t>(1, w.hosts_of(name).size()));
  return (j->gpus + n - 1) / n;
}

/// GPUs of `h` that no service and no job other than `job` holds.
int free_gpus(const world_model& w, const live_state& L, const host& h, const std::string& job) {
  if (!h.services.empty())
    return 0; // a serving host is not capacity for jobs
  auto free = h.gpus;
  for (const auto& [name, other] : L.jobs) {
    const auto& on = other.hosts;
    if (name != job && std::find(on.begin(), on.end(), h.name) != on.end())
      free -= gpus_per_host(w, name, h);
  }
  return free;
}

/// Gives job `name` hosts that are not cordoned, not in `exclude` and not already used, keeping
/// the healthy ones it has; a new host must have the GPUs the job needs free. Without enough
/// spare capacity the job runs on fewer hosts (or none).
void reschedule(const world_model& w, live_state& L, const std::string& name,
                const std::vector<std::string>& exclude) {
  auto& j = L.jobs[name];
  auto bad = [&](const std::string& h) {
    return L.hosts[h].cordoned || std::find(exclude.begin(), exclude.end(), h) != exclude.end();
  };
  std::vector<std::string> out;
  for (const auto& h : j.hosts)
    if (!bad(h))
      out.push_back(h);
  auto missing = j.hosts.size() - out.size();
  for (const auto& h : w.hosts) {
    if (missing == 0)
      break;
    if (h.kind != host_kind::gpu || bad(h.name) ||
        std::find(out.begin(), out.end(), h.name) != out.end() ||
        std::find(j.hosts.begin(), j.hosts.end(), h.name) != j.hosts.end() ||
        free_gpus(w, L, h, name) < gpus_per_host(w, name, h))
      continue;
    out.push_back(h.name);
    --missing;
  }
  j.hosts = std::move(out);
}

void apply_action(const world_model& w, live_state& L, const action_record& rec) {
  const auto& a = rec.act;
  switch (a.kind) {
  case action_kind::rollback: {
    auto& s = L.services[a.target];
    L.deploys.push_back({a.target, a.version, s.version, "sreh", rec.at, true});
    s.version = a.version;
    break;
  }
  case action_kind::restart:
    L.services[a.target].restarted_at = rec.at;
    ++L.services[a.target].restarts;
    break;
  case action_kind::scale:
    L.services[a.target].replicas = a.number;
    break;
  case action_kind::set_pool_limit:
    L.services[a.target].max_connections = a.number;
    break;
  case action_kind::cleanup_disk:
    L.hosts[a.target].cleaned_at = rec.at;
    break;
  case action_kind::rotate_cert:
    L.services[a.target].cert_rotated_at = rec.at;
    break;
  case action_kind::set_flag:
    L.flags[a.target] = {a.value, rec.at, "sreh"};
    break;
  case action_kind::cordon:
    L.hosts[a.target].cordoned = true;
    break;
  case action_kind::uncordon:
    L.hosts[a.target].cordoned = false;
    break;
  case action_kind::drain: {
    auto& h = L.hosts[a.target];
    h.cordoned = h.drained = true;
    h.drained_at = rec.at;
    for (auto& [name, j] : L.jobs)
      if (std::find(j.hosts.begin(), j.hosts.end(), a.target) != j.hosts.end())
        reschedule(w, L, name, {});
    break;
  }
  case action_kind::restart_job: {
    reschedule(w, L, a.target, a.exclude_hosts);
    L.jobs[a.target].restarted_at = rec.at;
    break;
  }
  }
}

} // namespace

live_state world::state::live_at(std::int64_t t) const {
  const auto& w = spec->world;
  live_state L;
  for (const auto& s : w.services)
    L.services[s.name] = {s.replicas, s.version, s.max_connections};
  for (const auto& h : w.hosts)
    L.hosts[h.name] = {};
  for (const auto& j : w.jobs)
    L.jobs[j.name].hosts = w.hosts_of(j.name);
  for (const auto& [name, value] : w.flags)
    L.flags[name] = {value, never, ""};

  // History: informational, the world's versions already include it.
  auto history = w.deploys;
  std::stable_sort(history.begin(), history.end(),
                   [](const auto& a, const auto& b) { return a.at < b.at; });
  std::map<std::string, std::string> last;
  for (const auto& d : history) {
    auto prev = !d.previous.empty()     ? d.previous
                : last.count(d.service) ? last[d.service]
                                        : guess_previous(d.version);
    L.deploys.push_back({d.service, d.version, prev, d.by, start_of(d.at)});
    last[d.service] = d.version;
  }

  // Scenario events that change state, in time order; actions after them at equal times.
  struct event {
    std::int64_t at;
    const fault* f = nullptr;
    const herring* h = nullptr;
  };
  std::vector<event> events;
  for (const auto& f : spec->faults)
    if (f.kind == fault_kind::bad_deploy || f.kind == fault_kind::bad_flag)
      events.push_back({start_of(f.at), &f, nullptr});
  for (const auto& h : spec->herrings)
    if (h.kind == herring_kind::deploy)
      events.push_back({start_of(h.at), nullptr, &h});
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.at < b.at; });
  std::size_t next_action = 0;
  auto apply_actions_until = [&](std::int64_t until) {
    for (; next_action < log.size() && log[next_action].at <= until; ++next_action)
      apply_action(w, L, log[next_action]);
  };
  for (const auto& e : events) {
    if (e.at > t)
      break;
    apply_actions_until(e.at - 1);
    if (e.f && e.f->kind == fault_kind::bad_flag) {
      auto& fl = L.flags[e.f->target];
      fl = {!w.flags.find(e.f->target)->second, e.at, "console"};
      continue;
    }
    const auto& service = e.f ? e.f->target : e.h->target;
    const auto& version = e.f ? e.f->version : e.h->version;
    auto& s = L.services[service];
    L.deploys.push_back({service, version, s.version, "ci", e.at});
    s.version = version;
  }
  apply_actions_until(t);
  return L;
}

} // namespace sreh::plugins::sandbox
