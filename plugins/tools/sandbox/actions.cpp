// Mutating actions: validation, the action log (idempotency by key), results and compensation.
#include <fmt/format.h>

#include <algorithm>

#include "core/base/json.hpp"
#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox {

namespace {

/// Fails unless `name` is an entity of kind `want` ("service" accepts every service kind).
sreh::error need(const world_model& w, const std::string& name, std::string_view want) {
  auto k = w.kind_of(name);
  bool ok =
    k && (want == "service" ? *k <= entity_kind::queue : std::string_view{to_string(*k)} == want);
  if (ok)
    return {};
  if (!k)
    return {errc::not_found, fmt::format("unknown {} '{}'", want, name)};
  return {errc::invalid_argument,
          fmt::format("unknown {} '{}' ('{}' is a {})", want, name, name, to_string(*k))};
}

/// Checks `a` against the world and fills in what it leaves implicit (the rollback version).
sreh::error resolve(const world_model& w, const live_state& L, action& a) {
  switch (a.kind) {
  case action_kind::rollback: {
    if (auto e = need(w, a.target, "service"))
      return e;
    const auto& current = L.services.at(a.target).version;
    if (a.version.empty()) {
      // The release before the one running. When a rollback put the running version there,
      // nothing was released since: rolling back again would redeploy what was rolled back.
      a.version = guess_previous(current);
      const version_change* last = nullptr;
      for (const auto& d : L.deploys)
        if (d.service == a.target && d.version == current)
          last = &d;
      if (last && last->rollback)
        return {errc::conflict,
                fmt::format("service '{}' already runs {}, restored by a rollback from {}: there "
                            "is no newer release to roll back (name to_version to deploy another)",
                            a.target, current, last->previous)};
      if (last)
        a.version = last->previous;
    }
    if (a.version == current)
      return {errc::conflict, fmt::format("service '{}' already runs {}", a.target, current)};
    return {};
  }
  case action_kind::set_pool_limit:
    if (auto e = need(w, a.target, "database"))
      return e;
    if (a.number < 1 || a.number > 100'000)
      return {errc::invalid_argument, fmt::format("limit {} out of range 1..100000", a.number)};
    return {};
  case action_kind::scale:
    if (a.number < 1 || a.number > 100)
      return {errc::invalid_argument, fmt::format("replicas {} out of range 1..100", a.number)};
    return need(w, a.target, "service");
  case action_kind::restart:
  case action_kind::rotate_cert:
    return need(w, a.target, "service");
  case action_kind::set_flag:
    return need(w, a.target, "flag");
  case action_kind::restart_job:
    if (auto e = need(w, a.target, "job"))
      return e;
    for (const auto& h : a.exclude_hosts)
      if (auto e = need(w, h, "host"))
        return {e.code, "exclude_hosts: " + e.message};
    return {};
  default:
    return need(w, a.target, "host");
  }
}

void write_names(json::writer& out, const std::vector<std::string>& xs) {
  out.StartArray();
  for (const auto& x : xs)
    out.String(x.c_str());
  out.EndArray();
}

/// The part of the state `a` changes, as an object.
void write_state(json::writer& out, const action& a, const live_state& L, const frame& fr) {
  out.StartObject();
  switch (a.kind) {
  case action_kind::rollback:
    out.Key("version");
    out.String(L.services.at(a.target).version.c_str());
    break;
  case action_kind::restart:
    out.Key("restarts");
    out.Int(L.services.at(a.target).restarts);
    out.Key("memory");
    out.Double(fr.metrics.at(a.target).at("memory"));
    break;
  case action_kind::scale:
    out.Key("replicas");
    out.Int(L.services.at(a.target).replicas);
    break;
  case action_kind::set_pool_limit:
    out.Key("max_connections");
    out.Int(L.services.at(a.target).max_connections);
    break;
  case action_kind::cleanup_disk:
    out.Key("disk_used");
    out.Double(fr.metrics.at(a.target).at("disk_used"));
    break;
  case action_kind::rotate_cert: {
    auto at = L.services.at(a.target).cert_rotated_at;
    out.Key("certificate_rotated_at");
    at == never ? out.Null() : out.String(rfc3339(at).c_str());
    break;
  }
  case action_kind::set_flag:
    out.Key("value");
    out.Bool(L.flags.at(a.target).value);
    break;
  case action_kind::cordon:
  case action_kind::uncordon:
  case action_kind::drain: {
    const auto& h = L.hosts.at(a.target);
    out.Key("cordoned");
    out.Bool(h.cordoned);
    out.Key("drained");
    out.Bool(h.drained);
    std::vector<std::string> jobs;
    for (const auto& [name, j] : L.jobs)
      if (std::find(j.hosts.begin(), j.hosts.end(), a.target) != j.hosts.end())
        jobs.push_back(name);
    out.Key("jobs");
    write_names(out, jobs);
    break;
  }
  case action_kind::restart_job:
    out.Key("hosts");
    write_names(out, L.jobs.at(a.target).hosts);
    out.Key("stalled");
    out.Bool(fr.metrics.at(a.target).at("stalled") > 0);
    break;
  }
  out.EndObject();
}

/// What undoes `a`, given the state just before it; nullopt when nothing can.
std::optional<action> compensation_of(const action& a, const live_state& before) {
  action c = a;
  switch (a.kind) {
  case action_kind::rollback:
  case action_kind::scale:
  case action_kind::set_pool_limit: { // the service setting it changed, as it was
    const auto& svc = before.services.at(a.target);
    if (a.kind == action_kind::rollback)
      c.version = svc.version;
    else
      c.number = a.kind == action_kind::scale ? svc.replicas : svc.max_connections;
    return c;
  }
  case action_kind::set_flag:
    c.value = before.flags.at(a.target).value;
    return c;
  case action_kind::cordon:
    if (before.hosts.at(a.target).cordoned)
      return std::nullopt; // it was cordoned already: nothing to give back
    c.kind = action_kind::uncordon;
    return c;
  case action_kind::uncordon:
    c.kind = action_kind::cordon;
    return c;
  default:
    return std::nullopt;
  }
}

expected<std::string> apply_locked(world::state& st, std::string_view key, action a) {
  if (key.empty())
    return sreh::error{errc::invalid_argument, "an idempotency key is required"};
  for (const auto& r : st.log)
    if (r.key == key)
      return r.result; // applied before: apply once, answer the same
  if (auto f = st.forgotten.find(key); f != st.forgotten.end())
    return f->second; // applied before a reset
  auto before = st.live_at(st.now);
  if (auto e = resolve(st.spec->world, before, a))
    return e;
  auto fr_before = st.frame_at(st.now);
  action_record rec{std::string{key}, a, st.now, "{}", "", compensation_of(a, before)};
  st.log.push_back(rec);
  auto after = st.live_at(st.now);
  auto fr_after = st.frame_at(st.now);
  rapidjson::StringBuffer buf;
  json::writer out{buf};
  out.StartObject();
  out.Key("ok");
  out.Bool(true);
  out.Key("action");
  out.String(tool_name(a.kind));
  out.Key("target");
  out.String(a.target.c_str());
  out.Key("at");
  out.String(rfc3339(st.now).c_str());
  out.Key("before");
  write_state(out, a, before, fr_before);
  out.Key("after");
  write_state(out, a, after, fr_after);
  out.EndObject();
  st.log.back().result = buf.GetString();
  return st.log.back().result;
}

} // namespace

expected<std::string> world::apply(std::string_view key, const action& a) {
  std::lock_guard<std::mutex> lock{mtx_};
  return apply_locked(*state_, key, a);
}

expected<std::string> world::undo(std::string_view key) {
  std::lock_guard<std::mutex> lock{mtx_};
  auto it = std::find_if(state_->log.begin(), state_->log.end(),
                         [&](const auto& r) { return r.key == key; });
  if (it == state_->log.end())
    return sreh::error{errc::not_found, fmt::format("no action with key '{}'", key)};
  if (!it->compensation)
    return sreh::error{errc::conflict, fmt::format("{} on '{}' cannot be undone",
                                                   tool_name(it->act.kind), it->act.target)};
  if (!it->undone_by.empty())
    return sreh::error{errc::conflict,
                       fmt::format("action '{}' was already undone by '{}'", key, it->undone_by)};
  auto undo_key = "undo:" + std::string{key};
  auto index = it - state_->log.begin();
  auto comp = *it->compensation;
  auto res = apply_locked(*state_, undo_key, comp);
  if (res)
    state_->log[static_cast<std::size_t>(index)].undone_by = undo_key;
  return res;
}

} // namespace sreh::plugins::sandbox
