#include "actors/cluster/peer.hpp"

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <fmt/format.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "actors/cluster/cluster.hpp"
#include "core/base/logger.hpp"

namespace sreh::actors {

namespace {

// -- the peer actor -------------------------------------------------------------------------------

/// Published on the node's middleman port (as a `peer_actor`). Links to the other members
/// (reconnecting every heartbeat while a link is down), pushes this node's load to them, and
/// serves the requests other members forward to this node's kernel.
struct peer_state {
  cluster_member* member = nullptr;
  runtime_ptr rt;
  kernel_actor sup;
  std::vector<config::cluster_member> others;
  std::chrono::milliseconds every{500};
  std::chrono::milliseconds timeout{2000};
  std::unordered_map<std::string, peer_actor> links;
  std::unordered_map<caf::actor_addr, std::string> ids;
  std::unordered_set<std::string> connecting;
  /// Over TLS only the member with the smaller id dials (two TLS connections dialled at once
  /// between one pair make CAF drop both, again and again); the other adopts the link from the
  /// first load report it receives.
  bool dial_up_only = false;
  std::string self_id;
  /// Members whose TLS handshake failed are dialled again only after this: each failed
  /// handshake makes CAF 0.17's OpenSSL module drop this node's other links for a moment
  /// (docs/security.md), so a member with a bad certificate is not retried every heartbeat.
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> not_before;
  static inline const char* name = "sreh.cluster";
};

/// The peer's own interface: the public one and its heartbeat timer.
using peer_impl_actor = peer_actor::extend<caf::reacts_to<tick_atom>>;
using peer_self = peer_impl_actor::stateful_pointer<peer_state>;

/// Keeps `a` as the link to member `id` (monitored: its loss unlinks it).
void adopt(peer_self self, const std::string& id, peer_actor a) {
  auto& s = self->state;
  self->monitor(a);
  s.ids[a.address()] = id;
  s.links[id] = a;
  s.member->linked(id, a);
}

void connect_to(peer_self self, const config::cluster_member& m) {
  auto& st = self->state;
  std::string host;
  std::uint16_t port = 0;
  if (auto err = config::parse_listen(m.cluster, "cluster", host, port))
    return st.member->unlinked(m.id, err.message);
  st.connecting.insert(m.id);
  auto id = m.id;
  // Over TLS when the cluster has it (CAF's OpenSSL module is loaded then).
  const auto& mm = self->system().has_openssl_manager()
                     ? self->system().openssl_manager().actor_handle()
                     : self->system().middleman().actor_handle();
  self->request(mm, st.timeout, caf::connect_atom::value, std::move(host), port)
    .then(
      [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
        auto& s = self->state;
        s.connecting.erase(id);
        if (!ptr)
          return s.member->unlinked(id, "nothing is published on its cluster port");
        if (!self->system().assignable<peer_actor>(ifs))
          return s.member->unlinked(id, "its cluster port serves another interface than "
                                        "this node's peer (a different sreh version?)");
        adopt(self, id, caf::actor_cast<peer_actor>(ptr));
      },
      [=](caf::error& err) {
        auto& s = self->state;
        s.connecting.erase(id);
        auto why = self->system().render(err);
        if (s.dial_up_only && why.find("handshake") != std::string::npos)
          s.not_before[id] = std::chrono::steady_clock::now() + std::chrono::seconds{30};
        s.member->unlinked(id, why);
      });
}

peer_impl_actor::behavior_type peer_behavior(peer_self self, cluster_member* member, runtime_ptr rt,
                                             kernel_actor sup,
                                             std::vector<config::cluster_member> others,
                                             std::chrono::milliseconds every,
                                             std::chrono::milliseconds timeout) {
  auto& st = self->state;
  st.member = member;
  st.rt = std::move(rt);
  st.sup = std::move(sup);
  st.others = std::move(others);
  st.every = every;
  st.timeout = timeout;
  st.self_id = member->self_id();
  st.dial_up_only = st.rt->cfg.cluster.topo && st.rt->cfg.cluster.topo->tls.has_value();
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& s = self->state;
    auto i = s.ids.find(msg.source);
    if (i == s.ids.end())
      return;
    auto id = i->second;
    s.ids.erase(i);
    s.links.erase(id);
    s.member->unlinked(id, "link lost: " + self->system().render(msg.reason));
  });
  self->send(self, tick_atom::value);
  return {
    [=](tick_atom) {
      auto& s = self->state;
      const auto now = std::chrono::steady_clock::now();
      for (const auto& m : s.others) {
        auto wait = s.not_before.find(m.id);
        if (s.links.count(m.id) == 0 && s.connecting.count(m.id) == 0 &&
            (!s.dial_up_only || s.self_id < m.id) &&
            (wait == s.not_before.end() || wait->second <= now))
          connect_to(self, m);
      }
      const auto active = s.rt->counters.active.load();
      const auto parked = s.rt->counters.parked.load();
      const peer_load load{s.member->self_id(), active, parked};
      for (const auto& [id, a] : s.links)
        self->send(a, load_atom::value, load);
      self->delayed_send(self, s.every, tick_atom::value);
    },
    [=](load_atom, const peer_load& load) {
      auto& s = self->state;
      if (s.dial_up_only && s.links.count(load.node_id) == 0)
        if (auto from = caf::actor_cast<peer_actor>(self->current_sender()))
          adopt(self, load.node_id, from); // a member with a smaller id dialled this one
      s.member->reported(load.node_id, load.active_runs, load.parked_runs);
    },
    [=](submit_atom a, goal_request& req) -> caf::result<kernel_reply> {
      return self->delegate(self->state.sup, a, std::move(req));
    },
    [=](cancel_atom a, std::string& id, std::string& by) -> caf::result<kernel_reply> {
      return self->delegate(self->state.sup, a, std::move(id), std::move(by));
    },
    [=](decide_atom a, std::string& id, approval_vote& vote) -> caf::result<kernel_reply> {
      return self->delegate(self->state.sup, a, std::move(id), std::move(vote));
    },
    [=](say_atom a, conversation::message& m) -> caf::result<kernel_reply> {
      return self->delegate(self->state.sup, a, std::move(m));
    },
    [=](forward_atom a, std::string& id, std::int32_t c, std::string& by,
        std::string& text) -> caf::result<forwarded_reply> {
      auto works = self->state.member->works_target();
      if (!works)
        return forwarded_reply{
          {errc::unavailable, fmt::format("node '{}' has no Works orchestrator running; retry "
                                          "shortly",
                                          self->state.self_id)}};
      auto rp = self->make_response_promise<forwarded_reply>();
      self->request(works, caf::infinite, a, std::move(id), c, std::move(by), std::move(text))
        .then([rp](forwarded_reply& r) mutable { rp.deliver(std::move(r)); },
              [self, rp](caf::error& err) mutable {
                rp.deliver(
                  forwarded_reply{{errc::unavailable, "the owner's orchestrator did not answer: " +
                                                        self->system().render(err)}});
              });
      return rp;
    },
  };
}

} // namespace

peer_actor spawn_peer(caf::actor_system& sys, cluster_member* member, runtime_ptr rt,
                      kernel_actor sup, std::vector<config::cluster_member> others,
                      std::chrono::milliseconds every, std::chrono::milliseconds timeout) {
  return sys.spawn(peer_behavior, member, std::move(rt), std::move(sup), std::move(others), every,
                   timeout);
}

void add_peer_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<run_budget>("sreh::run_budget");           // inside goal_request
  cfg.add_message_type<opening_message>("sreh::opening_message"); // inside goal_request
  cfg.add_message_type<goal_request>("sreh::goal_request");
  cfg.add_message_type<approval_vote>("sreh::approval_vote");
  cfg.add_message_type<kernel_reply>("sreh::kernel_reply");
  cfg.add_message_type<conversation::message>("sreh::conversation::message");
  cfg.add_message_type<peer_load>("sreh::peer_load");
  cfg.add_message_type<forwarded_reply>("sreh::forwarded_reply");
}

} // namespace sreh::actors
