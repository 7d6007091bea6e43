#define CAF_SUITE sandbox_faults
#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;
using sb::action;
using sb::action_kind;

namespace {

action make(action_kind k, std::string target, int number = 0) {
  action a;
  a.kind = k;
  a.target = std::move(target);
  a.number = number;
  return a;
}

} // namespace

CAF_TEST(no fault keeps every metric near its baseline) {
  auto w = make_world("  - {kind: none}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_LESS(m(*w, "web", "error_rate"), 0.01);
  CAF_CHECK_LESS(m(*w, "web", "latency_p99_ms"), 110);
  CAF_CHECK_GREATER(m(*w, "web", "latency_p99_ms"), 90);
  CAF_CHECK_EQUAL(m(*w, "db", "connections") < 30, true);
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 0);
  CAF_CHECK_LESS(m(*w, "vm2", "disk_used"), 0.5);
}

CAF_TEST(bad deploy raises errors that propagate to callers; rollback fixes it) {
  auto w = make_world("  - {kind: bad_deploy, target: api, version: v1.3.0, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.2);
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.1);
  CAF_CHECK_LESS(m(*w, "web", "error_rate"), m(*w, "api", "error_rate")); // attenuated
  CAF_CHECK(logged(*w, "api", "unhandled exception in"));
  CAF_CHECK(logged(*w, "api", "(version v1.3.0)"));
  CAF_CHECK(act(*w, make(action_kind::restart, "api"))); // wrong remedy
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.2);
  CAF_CHECK(act(*w, make(action_kind::rollback, "api")));
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK_LESS(m(*w, "web", "error_rate"), 0.01);
  CAF_CHECK(w->evaluate("api.error_rate < 0.01 and web.error_rate < 0.01").value());
}

CAF_TEST(memory leak climbs and OOMs - restart helps for a while and rollback for good) {
  auto w = make_world("  - {kind: memory_leak, target: api, at: -40m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "api", "memory"), 0.85);
  CAF_CHECK_GREATER(m(*w, "api", "restarts"), 0);
  CAF_CHECK_GREATER(m(*w, "api", "latency_p99_ms"), 150);
  CAF_CHECK_GREATER(m(*w, "web", "latency_p99_ms"), 130); // propagated
  CAF_CHECK(logged(*w, "api", "heap usage at"));
  CAF_CHECK(logged(*w, "api", "OOMKilled"));
  CAF_CHECK(act(*w, make(action_kind::restart, "web"))); // wrong service
  CAF_CHECK_GREATER(m(*w, "api", "memory"), 0.85);
  CAF_CHECK(act(*w, make(action_kind::restart, "api")));
  CAF_CHECK_LESS(m(*w, "api", "memory"), 0.5);
  w->advance(30 * 60);
  CAF_CHECK_GREATER(m(*w, "api", "memory"), 0.85); // grew back
  CAF_CHECK(act(*w, make(action_kind::rollback, "api")));
  w->advance(60 * 60);
  CAF_CHECK_LESS(m(*w, "api", "memory"), 0.5);
}

CAF_TEST(pool exhaustion : callers time out; restarting the database is no fix) {
  auto w =
    make_world("  - {kind: connection_pool_exhaustion, target: db, cause: worker, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_EQUAL(m(*w, "db", "connections"), 100);
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.1);
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.05);
  CAF_CHECK(logged(*w, "api", "timeout acquiring connection from pool for db"));
  CAF_CHECK(logged(*w, "worker", "connection pool for db: 100 of 100 in use"));
  CAF_CHECK(act(*w, make(action_kind::restart, "db")));
  CAF_CHECK_LESS(m(*w, "db", "connections"), 100); // briefly
  w->advance(180);
  CAF_CHECK_EQUAL(m(*w, "db", "connections"), 100); // the cause took them again
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.1);
  CAF_CHECK(act(*w, make(action_kind::restart, "api"))); // a victim, not the cause
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.1);
  CAF_CHECK(act(*w, make(action_kind::restart, "worker")));
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK_LESS(m(*w, "db", "connections"), 100);
}

CAF_TEST(pool exhaustion : scaling the cause or raising the limit also works) {
  auto faults = "  - {kind: connection_pool_exhaustion, target: db, cause: worker, at: -10m}\n";
  auto w = make_world(faults);
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK(act(*w, make(action_kind::scale, "worker", 2)));
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  w = make_world(faults);
  CAF_CHECK(act(*w, make(action_kind::set_pool_limit, "db", 110))); // not enough headroom
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.1);
  CAF_CHECK(act(*w, make(action_kind::set_pool_limit, "db", 200)));
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
}

CAF_TEST(dependency slowdown : callers slow with normal cpu; scaling the target fixes it) {
  auto w = make_world("  - {kind: dependency_slowdown, target: api, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "api", "latency_p99_ms"), 500);
  CAF_CHECK_GREATER(m(*w, "web", "latency_p99_ms"), 300);
  CAF_CHECK_LESS(m(*w, "web", "cpu"), 0.35);
  CAF_CHECK_LESS(m(*w, "api", "cpu"), 0.35);
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK(logged(*w, "web", "upstream api slow: p99"));
  CAF_CHECK(act(*w, make(action_kind::restart, "api")));
  CAF_CHECK_GREATER(m(*w, "api", "latency_p99_ms"), 500);
  CAF_CHECK(act(*w, make(action_kind::scale, "web", 4))); // the caller: no use
  CAF_CHECK_GREATER(m(*w, "web", "latency_p99_ms"), 300);
  CAF_CHECK(act(*w, make(action_kind::scale, "api", 4)));
  CAF_CHECK_LESS(m(*w, "api", "latency_p99_ms"), 110);
  CAF_CHECK_LESS(m(*w, "web", "latency_p99_ms"), 110);
}

CAF_TEST(traffic spike saturates the target until it is scaled out) {
  auto w = make_world("  - {kind: traffic_spike, target: web, at: -5m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "web", "rps"), 350);
  CAF_CHECK_GREATER(m(*w, "web", "cpu"), 0.9);
  CAF_CHECK_GREATER(m(*w, "web", "latency_p99_ms"), 300);
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.05);
  CAF_CHECK(logged(*w, "web", "shedding load"));
  CAF_CHECK(act(*w, make(action_kind::restart, "web")));
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.05);
  CAF_CHECK(act(*w, make(action_kind::scale, "web", 3))); // not enough
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.02);
  CAF_CHECK(act(*w, make(action_kind::scale, "web", 4)));
  CAF_CHECK_LESS(m(*w, "web", "error_rate"), 0.01);
  CAF_CHECK_LESS(m(*w, "web", "latency_p99_ms"), 110);
}

CAF_TEST(disk full fails writes of the hosted services - cleanup of that host fixes it) {
  auto w = make_world("  - {kind: disk_full, target: vm1, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER_OR_EQUAL(m(*w, "vm1", "disk_used"), 0.98);
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.1);
  CAF_CHECK(logged(*w, "api", "No space left on device (vm1)"));
  CAF_CHECK(act(*w, make(action_kind::cleanup_disk, "vm2")));
  CAF_CHECK_GREATER_OR_EQUAL(m(*w, "vm1", "disk_used"), 0.98);
  CAF_CHECK(act(*w, make(action_kind::cleanup_disk, "vm1")));
  CAF_CHECK_LESS(m(*w, "vm1", "disk_used"), 0.5);
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
}

CAF_TEST(expired certificate fails the callers; rotation fixes it) {
  auto w = make_world("  - {kind: cert_expired, target: api, at: -5m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.2);
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK(logged(*w, "web", "TLS handshake with api failed: certificate has expired"));
  CAF_CHECK(act(*w, make(action_kind::restart, "api")));
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.2);
  CAF_CHECK(act(*w, make(action_kind::rotate_cert, "api")));
  CAF_CHECK_LESS(m(*w, "web", "error_rate"), 0.01);
}

CAF_TEST(bad flag breaks its service until set back) {
  auto w = make_world("  - {kind: bad_flag, target: beta, service: api, at: -5m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.15);
  CAF_CHECK_GREATER(m(*w, "web", "error_rate"), 0.1);
  CAF_CHECK(logged(*w, "api", "feature flag beta enabled"));
  CAF_CHECK(act(*w, make(action_kind::rollback, "api"))); // a rollback does not turn it off
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.15);
  auto off = make(action_kind::set_flag, "beta");
  off.value = false;
  CAF_CHECK(act(*w, off));
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
}

CAF_TEST(gpu xid stalls jobs on the host until they run elsewhere) {
  auto faults = "  - {kind: gpu_xid, target: g1, at: -10m}\n";
  auto w = make_world(faults);
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "g1", "xid_errors"), 0);
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 1);
  CAF_CHECK_LESS(m(*w, "train", "throughput"), 0.1);
  CAF_CHECK(logged(*w, "g1", "NVRM: Xid 79 on g1"));
  CAF_CHECK(logged(*w, "train", "job train stalled: no progress for"));
  CAF_CHECK(act(*w, make(action_kind::restart_job, "train"))); // lands on g1 again
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 1);
  CAF_CHECK(act(*w, make(action_kind::cordon, "g1")));
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 1); // cordon alone moves nothing
  CAF_CHECK(act(*w, make(action_kind::restart_job, "train")));
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 0);
  CAF_CHECK_GREATER(m(*w, "train", "throughput"), 0.9);
  // Other remedies: restart excluding the host, or drain it.
  w = make_world(faults);
  auto a = make(action_kind::restart_job, "train");
  a.exclude_hosts = {"g1"};
  CAF_CHECK(act(*w, a));
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 0);
  w = make_world(faults);
  CAF_CHECK(act(*w, make(action_kind::drain, "g1")));
  CAF_CHECK_EQUAL(m(*w, "train", "stalled"), 0);
}

CAF_TEST(herrings stay harmless and off the path) {
  auto w = make_world("  - {kind: none}\n", 1,
                      "  - {kind: slow, target: other, at: -30m}\n"
                      "  - {kind: log, target: web, text: \"ERROR harmless noise\", at: -5m}\n"
                      "  - {kind: deploy, target: api, version: v1.2.4, at: -20m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_GREATER(m(*w, "other", "latency_p99_ms"), 150);
  CAF_CHECK_LESS(m(*w, "web", "latency_p99_ms"), 110);
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK(logged(*w, "web", "harmless noise"));
}
