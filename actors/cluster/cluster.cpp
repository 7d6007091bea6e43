#include "actors/cluster/cluster.hpp"

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "config/node/node_config.hpp"
#include "core/base/logger.hpp"

namespace sreh::actors {

namespace {

constexpr int claim_batch = 32; // runs per claim statement
constexpr int claim_rounds = 4; // statements per heartbeat at most

std::string join_roles(const std::vector<std::string>& roles) {
  std::string out;
  for (const auto& r : roles)
    out.append(out.empty() ? "" : ",").append(r);
  return out;
}

} // namespace

void add_cluster_message_types(caf::actor_system_config& cfg, const config::topology& topo,
                               const std::string& node_id) {
  add_peer_message_types(cfg);
  cfg.load<caf::io::middleman>();
  if (const auto& tls = topo.tls) {
    // Every link is TLS; a peer without a certificate the cluster CA signed is refused in the
    // handshake, on both the listening and the connecting side.
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = config::cluster_tls::for_node(tls->cert_file, node_id);
    cfg.openssl_key = config::cluster_tls::for_node(tls->key_file, node_id);
    cfg.openssl_cafile = config::cluster_tls::for_node(tls->ca_file, node_id);
  }
  // Without these a hung (stopped) peer is never detected and connects block forever.
  cfg.set("middleman.heartbeat-interval",
          caf::timespan{std::chrono::milliseconds{topo.heartbeat_ms}});
  cfg.set("middleman.connection-timeout",
          caf::timespan{std::chrono::milliseconds{topo.connection_timeout_ms}});
}

cluster_member::cluster_member(caf::actor_system& sys, const config::topology& topo, runtime_ptr rt,
                               persistence::cluster_store& store)
  : sys_(sys), topo_(topo), rt_(std::move(rt)), store_(store) {
  if (const auto* me = topo_.find(rt_->cfg.node_id))
    self_ = *me;
  for (const auto& m : topo_.nodes) {
    member_state s;
    s.conf = m;
    s.info.id = m.id;
    s.info.http = m.http;
    s.info.cluster = m.cluster;
    s.info.roles = m.roles;
    s.info.self = m.id == self_.id;
    s.info.connected = s.info.self;
    members_.emplace(m.id, std::move(s));
  }
  started_at_ = rt_->clock.now_us();
}

cluster_member::~cluster_member() {
  leave();
}

persistence::node_heartbeat cluster_member::my_heartbeat() const {
  persistence::node_heartbeat hb;
  hb.node_id = self_.id;
  hb.http = self_.http;
  hb.cluster = self_.cluster;
  hb.roles = join_roles(self_.roles);
  hb.active_runs = rt_->counters.active.load();
  hb.parked_runs = rt_->counters.parked.load();
  hb.started_at = started_at_;
  return hb;
}

sreh::error cluster_member::enter() {
  if (self_.id.empty())
    return {errc::invalid_argument,
            fmt::format("cluster: node '{}' is not in the topology", rt_->cfg.node_id)};
  // Before any recovery: this waits while a survivor claims this node's runs, so the kernel
  // then resumes only what is still ours.
  const auto deadline =
    std::chrono::steady_clock::now() + std::chrono::milliseconds{topo_.lease_ttl_ms};
  while (!beat(false)) {
    if (std::chrono::steady_clock::now() >= deadline)
      return {errc::unavailable, "cluster: cannot heartbeat to the store (see the log above)"};
    std::this_thread::sleep_for(std::chrono::milliseconds{topo_.heartbeat_ms});
  }
  return {};
}

sreh::error cluster_member::open(kernel_actor sup) {
  auto log = logger("cluster");
  sup_ = sup;
  std::string host;
  std::uint16_t port = 0;
  if (auto err = config::parse_listen(self_.cluster, "cluster", host, port))
    return err;
  std::vector<config::cluster_member> others;
  for (const auto& m : topo_.nodes)
    if (m.id != self_.id)
      others.push_back(m);
  peer_actor_ = spawn_peer(sys_, this, rt_, sup, std::move(others),
                           std::chrono::milliseconds{topo_.heartbeat_ms},
                           std::chrono::milliseconds{topo_.connection_timeout_ms});
  auto published = topo_.tls ? caf::openssl::publish(peer_actor_, port, host.c_str(), true)
                             : sys_.middleman().publish(peer_actor_, port, host.c_str(), true);
  if (!published)
    return {errc::unavailable,
            fmt::format("cluster: cannot listen on {} (node {}): {}", self_.cluster, self_.id,
                        sys_.render(published.error()))};
  thread_ = std::thread{[this] { heartbeat_loop(); }};
  log->info("cluster '{}': node {} joined (middleman on {}{}, heartbeat {} ms, lease {} ms, "
            "{} members)",
            topo_.name, self_.id, self_.cluster, topo_.tls ? ", mutual TLS" : "",
            topo_.heartbeat_ms, topo_.lease_ttl_ms, topo_.nodes.size());
  return {};
}

void cluster_member::leave() {
  {
    std::lock_guard lk{stop_mtx_};
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  if (peer_actor_) {
    caf::anon_send_exit(peer_actor_, caf::exit_reason::user_shutdown);
    peer_actor_ = nullptr;
  }
  std::lock_guard lk{mtx_};
  for (auto& [id, m] : members_)
    m.peer = nullptr;
  sup_ = nullptr;
}

void cluster_member::heartbeat_loop() {
  const auto every = std::chrono::milliseconds{topo_.heartbeat_ms};
  const auto ttl = std::chrono::milliseconds{topo_.lease_ttl_ms};
  // Claims wait until this node has heartbeated without a failure for a whole lease: after an
  // outage of the store every member gets the time to renew its lease before anyone claims.
  auto healthy_since = std::chrono::steady_clock::now();
  bool healthy = true;
  const bool worker = self_.has_role("worker");
  for (;;) {
    {
      std::unique_lock lk{stop_mtx_};
      if (stop_cv_.wait_for(lk, every, [this] { return stopping_; }))
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    const bool ok = beat(worker && healthy && now - healthy_since >= ttl);
    if (!ok) {
      healthy = false;
    } else if (!healthy) {
      healthy = true;
      healthy_since = now;
      logger("cluster")->info("cluster: heartbeats reach the store again; claims resume after "
                              "one lease ({} ms)",
                              topo_.lease_ttl_ms);
    }
  }
}

bool cluster_member::beat(bool claim) {
  auto log = logger("cluster");
  const auto sent = std::chrono::steady_clock::now();
  auto res = store_.heartbeat(my_heartbeat(), std::chrono::milliseconds{topo_.lease_ttl_ms});
  if (res)
    rt_->lease.renewed(sent, std::chrono::milliseconds{topo_.lease_ttl_ms});
  if (!res) {
    {
      std::lock_guard lk{mtx_};
      store_reachable_ = false;
    }
    store_errors_.log(*log, spdlog::level::warn,
                      "cluster: heartbeat failed: {}; this node cannot renew its lease while the "
                      "store is away (claims paused)",
                      res.error().message);
    return false;
  }
  if (res->lease_was_expired)
    log->warn("cluster: this node's lease had expired (no heartbeat for over {} ms): "
              "survivors may have claimed some of its runs; its copies of them stop at their "
              "next write",
              topo_.lease_ttl_ms);
  seen(res->nodes);
  if (!claim)
    return true;
  if (resync_) {
    // A claim whose commit outcome was unknown may have made runs ours that no actor runs:
    // offer every unfinished run we own to the kernel (it skips the ones it has).
    auto mine = rt_->store.unfinished_runs(self_.id);
    if (!mine)
      return true;
    for (const auto& r : *mine)
      if (r.state != run_state::waiting)
        caf::anon_send(sup_, adopt_atom::value, r.id);
    resync_ = false;
  }
  std::size_t total = 0;
  for (int round = 0; round < claim_rounds; ++round) {
    auto runs = store_.claim_orphans(self_.id, claim_batch);
    if (!runs) {
      log->warn("cluster: claiming the runs of dead members failed: {}", runs.error().message);
      resync_ = true;
      break;
    }
    for (const auto& r : *runs)
      caf::anon_send(sup_, adopt_atom::value, r.id);
    total += runs->size();
    if (static_cast<int>(runs->size()) < claim_batch)
      break;
  }
  if (total > 0) {
    log->info("cluster: node {} claimed {} runs of members whose lease expired; resuming them "
              "from their checkpoints",
              self_.id, total);
    // The view counts them as this node's now, not one heartbeat later.
    if (auto rows = store_.members())
      seen(*rows);
  }
  claim_works();
  return true;
}

/// What the store says of every member: its state, its lease's age and the runs it owns.
void cluster_member::seen(const std::vector<persistence::node_row>& rows) {
  std::lock_guard lk{mtx_};
  store_reachable_ = true;
  for (const auto& row : rows) {
    auto i = members_.find(row.node.node_id);
    if (i == members_.end())
      continue; // an old member no longer in the topology
    auto& info = i->second.info;
    info.state = row.alive ? "alive" : "dead";
    info.heartbeat_age_ms = row.heartbeat_age_ms;
    info.owned_runs = row.owned_runs;
    info.started_at = row.node.started_at;
    if (!i->second.peer || info.self) { // a linked peer pushes fresher figures
      info.active_runs = row.node.active_runs;
      info.parked_runs = row.node.parked_runs;
      i->second.placed = 0;
    }
  }
}

void cluster_member::claim_works() {
  std::function<void(const std::string&)> adopt;
  {
    std::lock_guard lk{mtx_};
    adopt = adopt_work_;
  }
  if (!adopt)
    return;
  std::size_t total = 0;
  for (int round = 0; round < claim_rounds; ++round) {
    auto ids = store_.claim_orphan_works(self_.id, claim_batch);
    if (!ids) {
      // Claimed Works not handed over are this node's: its orchestrator finds them at start.
      logger("cluster")->warn("cluster: claiming the works of dead members failed: {}",
                              ids.error().message);
      break;
    }
    for (const auto& id : *ids)
      adopt(id);
    total += ids->size();
    if (static_cast<int>(ids->size()) < claim_batch)
      break;
  }
  if (total > 0)
    logger("cluster")->info("cluster: node {} took over {} open works of members whose lease "
                            "expired",
                            self_.id, total);
}

void cluster_member::adopt_works(std::function<void(const std::string&)> adopt) {
  std::lock_guard lk{mtx_};
  adopt_work_ = std::move(adopt);
}

void cluster_member::serve_works(std::function<caf::actor()> target) {
  std::lock_guard lk{mtx_};
  works_target_ = std::move(target);
}

caf::actor cluster_member::works_target() const {
  std::function<caf::actor()> target;
  {
    std::lock_guard lk{mtx_};
    target = works_target_;
  }
  return target ? target() : caf::actor{};
}

expected<std::vector<std::string>> cluster_member::claim_orphan_works() {
  return store_.claim_orphan_works(self_.id, claim_batch);
}

void cluster_member::linked(const std::string& id, peer_actor a) {
  {
    std::lock_guard lk{mtx_};
    auto i = members_.find(id);
    if (i == members_.end())
      return;
    i->second.peer = std::move(a);
    i->second.info.connected = true;
    i->second.info.link_error.clear();
  }
  logger("cluster")->info("cluster: linked to {}", id);
}

void cluster_member::unlinked(const std::string& id, const std::string& why) {
  bool was_linked = false;
  {
    std::lock_guard lk{mtx_};
    auto i = members_.find(id);
    if (i == members_.end())
      return;
    was_linked = i->second.info.connected;
    const bool repeat = !was_linked && i->second.info.link_error == why;
    i->second.peer = nullptr;
    i->second.info.connected = false;
    i->second.info.link_error = why;
    if (repeat)
      return; // said once already
  }
  auto log = logger("cluster");
  const auto* m = topo_.find(id);
  if (was_linked)
    log->warn("cluster: lost the link to {} ({}): {}", id, m ? m->cluster : "?", why);
  else
    log->warn("cluster: peer {} at {} is unreachable: {}; retrying every {} ms", id,
              m ? m->cluster : "?", why, topo_.heartbeat_ms);
}

void cluster_member::reported(const std::string& id, std::int64_t active, std::int64_t parked) {
  std::lock_guard lk{mtx_};
  auto i = members_.find(id);
  if (i == members_.end())
    return;
  i->second.info.active_runs = active;
  i->second.info.parked_runs = parked;
  i->second.placed = 0;
}

std::string cluster_member::place() {
  std::lock_guard lk{mtx_};
  const bool self_worker = self_.has_role("worker");
  std::string best = self_worker ? self_.id : std::string{};
  // Load: the unfinished runs a node holds, running or parked on a decision (a parked run
  // comes back to life on that node).
  std::int64_t best_load =
    self_worker ? rt_->counters.active.load() + rt_->counters.parked.load() : INT64_MAX;
  for (const auto& m : topo_.nodes) { // topology order: ties go to the earlier member
    if (m.id == self_.id || !m.has_role("worker"))
      continue;
    const auto& s = members_.at(m.id);
    if (!s.peer || s.info.state != "alive")
      continue;
    const auto load = s.info.active_runs + s.info.parked_runs + s.placed;
    if (load < best_load) {
      best = m.id;
      best_load = load;
    }
  }
  if (!best.empty() && best != self_.id)
    ++members_.at(best).placed;
  return best;
}

peer_actor cluster_member::peer(const std::string& id) const {
  std::lock_guard lk{mtx_};
  auto i = members_.find(id);
  return i == members_.end() ? peer_actor{} : i->second.peer;
}

bool cluster_member::alive(const std::string& id) const {
  std::lock_guard lk{mtx_};
  auto i = members_.find(id);
  return i != members_.end() && i->second.info.state == "alive";
}

cluster_view cluster_member::view() const {
  cluster_view v;
  v.clustered = true;
  v.name = topo_.name;
  v.self_id = self_.id;
  v.heartbeat_ms = topo_.heartbeat_ms;
  v.lease_ttl_ms = topo_.lease_ttl_ms;
  std::lock_guard lk{mtx_};
  v.store_reachable = store_reachable_;
  for (const auto& m : topo_.nodes) {
    auto info = members_.at(m.id).info;
    if (info.self) {
      info.active_runs = rt_->counters.active.load();
      info.parked_runs = rt_->counters.parked.load();
    } else if (info.state != "alive") {
      // Its last report is history: a member whose lease expired holds nothing (its runs are
      // claimed, and its copies fenced); what the store still gives it is `owned_runs`.
      info.active_runs = 0;
      info.parked_runs = 0;
    }
    v.nodes.push_back(std::move(info));
  }
  return v;
}

} // namespace sreh::actors
