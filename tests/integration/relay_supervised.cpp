// The relay as a child of the node's supervision tree: its thread dies mid-stream (an exception
// after a page was published, before its offset was stored), the service supervisor restarts it,
// and it resumes from the stored offset: every event reaches JetStream once, in seq order.
#define CAF_SUITE relay_supervised
#include "actors/runtime/service_supervisor.hpp"
#include "core/base/fault.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/relay_fixture.hpp"

using namespace sreh;
using namespace std::chrono_literals;

namespace {

struct supervised_relay_fixture : test::relay_fixture {
  struct quiet {
    caf::actor_system_config cfg;
    quiet() { cfg.set("logger.verbosity", caf::atom("quiet")); }
  } q;
  caf::actor_system sys{q.cfg};
  actors::supervision_table table;
  actors::service_supervisor_actor sup = actors::spawn_service_supervisor(sys, table);

  ~supervised_relay_fixture() {
    if (sup)
      actors::stop_services(sys, sup);
    sup = nullptr;
  }

  actors::child_info relay_row() {
    for (auto& c : table.children())
      if (c.name == "relay")
        return c;
    return {};
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(relay_supervised_tests, supervised_relay_fixture)

CAF_TEST(a relay thread killed mid - stream is restarted and loses or doubles nothing) {
  auto o = options();
  o.page_size = 100;
  auto r = std::make_shared<net::relay>(*st, *st, &hub, o);
  actors::restart_policy policy;
  policy.min_backoff = 10ms;
  CAF_REQUIRE_EQUAL(actors::supervise(sup, r, policy).message, "");
  std::thread writers{[&] { write(4, 200, 2, 200us); }}; // 1,600 events
  CAF_REQUIRE(wait_offset(*r, 300, 30s));
  arm_fault("relay.round", 1); // the next page published dies before its offset is stored
  CAF_REQUIRE(test::eventually(
    [&] {
      auto row = relay_row();
      return row.restarts == 1 && row.state == actors::child_state::running;
    },
    30s));
  const auto restarted = relay_row();
  CAF_CHECK_EQUAL(restarted.last_error, "the relay thread died: fault injected at relay.round");
  writers.join();
  const auto last = last_seq();
  CAF_CHECK_EQUAL(last, 1'600);
  CAF_REQUIRE(wait_offset(*r, last, 60s));
  // The page the dead thread had published was published again, and JetStream dropped it.
  const auto s = r->stats();
  CAF_MESSAGE("published " << s.published << ", acked " << s.acked << ", duplicates "
                           << s.duplicates << ", errors " << s.errors);
  CAF_CHECK_GREATER(s.duplicates, 0u);
  actors::stop_services(sys, sup);
  sup = nullptr;
  check_stream();
}

CAF_TEST_FIXTURE_SCOPE_END()
