#define CAF_SUITE cluster_peer
#include <caf/io/all.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "actors/cluster/peer.hpp"
#include "tests/support/caf_test.hpp"

// Two actor systems in one process, linked through the middleman on loopback like two members:
// every message of the peer interface crosses the wire and arrives whole.

using namespace sreh;
using namespace sreh::actors;

namespace {

constexpr auto patience = std::chrono::seconds(10); // a bound on failure, never a wait

/// One member's actor system: the middleman, with the peer's message types or without them.
struct member_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  explicit member_system(bool registered) {
    if (registered)
      add_peer_message_types(cfg);
    cfg.load<caf::io::middleman>();
    cfg.set("logger.verbosity", caf::atom("quiet"));
    cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{200}});
    cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::seconds{2}});
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

/// A stand-in for a member's peer: answers each request with what it was sent, and hands each
/// pushed load to `sink`.
peer_actor::behavior_type echo_peer(caf::actor sink) {
  return {
    [](submit_atom, const goal_request& g) {
      kernel_reply r;
      r.run_id = g.idempotency_key + "|" + g.goal + "|" + g.submitter + "|" + g.labels + "|" +
                 std::to_string(g.budget.max_steps) + "/" + std::to_string(g.budget.deadline_us);
      r.created = true;
      r.state = run_state::running;
      return r;
    },
    [](cancel_atom, const std::string& run_id, const std::string& by) {
      kernel_reply r;
      r.err = {errc::conflict, run_id + " not cancelled by " + by}; // errors travel as values
      return r;
    },
    [](decide_atom, const std::string& approval_id, const approval_vote& v) {
      kernel_reply r;
      r.decided.id = approval_id;
      r.decided.state = approval_state::approved;
      r.decided.votes.push_back(v);
      return r;
    },
    [](say_atom, const conversation::message& m) {
      kernel_reply r;
      r.said = m;
      r.said.seq = 7;
      r.created = true;
      return r;
    },
    [](forward_atom, const std::string& work_id, std::int32_t c, const std::string& by,
       const std::string& text) {
      return forwarded_reply{
        {errc::conflict, work_id + "/" + std::to_string(c) + "/" + by + "/" + text}};
    },
    [=](load_atom, const peer_load& load) { caf::anon_send(sink, load_atom::value, load); },
  };
}

/// An echo peer published in `home` on a free loopback port; stops when this goes.
struct published_echo {
  peer_actor peer;
  std::uint16_t port = 0;

  published_echo(member_system& home, caf::actor sink)
    : peer(home.sys->spawn(echo_peer, std::move(sink))) {
    auto p = home.sys->middleman().publish(peer, 0, "127.0.0.1", true);
    CAF_REQUIRE(static_cast<bool>(p));
    port = *p;
  }
  ~published_echo() { caf::anon_send_exit(peer, caf::exit_reason::user_shutdown); }
};

/// The reply of `peer` to one request, or the error rendered as a message.
template <class... Ts>
kernel_reply ask(member_system& from, const peer_actor& peer, Ts&&... xs) {
  caf::scoped_actor self{*from.sys};
  kernel_reply out;
  self->request(peer, patience, std::forward<Ts>(xs)...)
    .receive([&](const kernel_reply& r) { out = r; },
             [&](const caf::error& err) {
               out.err = {errc::unavailable, "error: " + from.sys->render(err)};
             });
  return out;
}

} // namespace

CAF_TEST(every request and the load push cross the middleman whole) {
  member_system a{true};
  member_system b{true};
  {
    caf::scoped_actor sink{*a.sys};
    published_echo echo{a, sink};
    auto peer = b.sys->middleman().remote_actor<peer_actor>("127.0.0.1", echo.port);
    CAF_REQUIRE(static_cast<bool>(peer));

    goal_request g;
    g.goal = "checkout errors";
    g.idempotency_key = "placement-7";
    g.submitter = "alice";
    g.labels = R"({"team":"pay"})";
    g.budget.max_steps = 9;
    g.budget.deadline_us = 1234;
    auto sub = ask(b, *peer, submit_atom::value, g);
    CAF_CHECK(!sub.err);
    CAF_CHECK_EQUAL(sub.run_id,
                    std::string{R"(placement-7|checkout errors|alice|{"team":"pay"}|9/1234)"});
    CAF_CHECK(sub.created);
    CAF_CHECK(sub.state == run_state::running);

    auto can = ask(b, *peer, cancel_atom::value, std::string{"run_1"}, std::string{"bob"});
    CAF_CHECK(can.err.code == errc::conflict);
    CAF_CHECK_EQUAL(can.err.message, std::string{"run_1 not cancelled by bob"});

    approval_vote v{"carol", "approver", true, "looks right", 42};
    auto dec = ask(b, *peer, decide_atom::value, std::string{"apr_1"}, v);
    CAF_CHECK(!dec.err);
    CAF_CHECK_EQUAL(dec.decided.id, std::string{"apr_1"});
    CAF_CHECK(dec.decided.state == approval_state::approved);
    CAF_REQUIRE_EQUAL(dec.decided.votes.size(), 1u);
    CAF_CHECK_EQUAL(dec.decided.votes[0].by, std::string{"carol"});
    CAF_CHECK_EQUAL(dec.decided.votes[0].role, std::string{"approver"});
    CAF_CHECK(dec.decided.votes[0].approve);
    CAF_CHECK_EQUAL(dec.decided.votes[0].comment, std::string{"looks right"});
    CAF_CHECK_EQUAL(dec.decided.votes[0].at, 42);

    conversation::message m;
    m.run_id = "run_1";
    m.author = "dana";
    m.text = "leave payments-db alone ✓";
    m.idempotency_key = "k-1";
    auto said = ask(b, *peer, say_atom::value, m);
    CAF_CHECK(!said.err && said.created);
    CAF_CHECK_EQUAL(said.said.run_id, std::string{"run_1"});
    CAF_CHECK_EQUAL(said.said.text, m.text);
    CAF_CHECK_EQUAL(said.said.idempotency_key, std::string{"k-1"});
    CAF_CHECK_EQUAL(said.said.seq, 7);

    // A Works command forwarded to its owner: the owner's error comes back whole.
    caf::scoped_actor self{*b.sys};
    self
      ->request(*peer, patience, forward_atom::value, std::string{"work_1"}, std::int32_t{4},
                std::string{"erin"}, std::string{"graphs ✓"})
      .receive(
        [&](const forwarded_reply& r) {
          CAF_CHECK(r.err.code == errc::conflict);
          CAF_CHECK_EQUAL(r.err.message, std::string{"work_1/4/erin/graphs ✓"});
        },
        [&](const caf::error& err) { CAF_FAIL("forward: " << b.sys->render(err)); });

    caf::anon_send(*peer, load_atom::value, peer_load{"node-b", 3, 1});
    bool got = false;
    sink->receive(
      [&](load_atom, const peer_load& load) {
        got = true;
        CAF_CHECK_EQUAL(load.node_id, std::string{"node-b"});
        CAF_CHECK_EQUAL(load.active_runs, 3);
        CAF_CHECK_EQUAL(load.parked_runs, 1);
      },
      caf::after(patience) >> [] {});
    CAF_CHECK(got);
  }
}

CAF_TEST(a member that has not registered the peer messages cannot link) {
  member_system a{true};
  member_system stranger{false};
  {
    caf::scoped_actor sink{*a.sys};
    published_echo echo{a, sink};
    auto peer = stranger.sys->middleman().remote_actor<peer_actor>("127.0.0.1", echo.port);
    CAF_CHECK(!peer);
  }
}
