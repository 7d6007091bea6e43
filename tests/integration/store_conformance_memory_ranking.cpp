// Does the right past incident come first? A generated corpus of 500 incidents (25 services ×
// 20 kinds of fault, each told in its own words) and 40 queries phrased as an on-call engineer
// would type them — other words, other inflections, filler — each naming one service and one
// fault. Run against every store (SREH_TEST_STORE): the full-text engine finds, memory::rank
// orders. At least 95 % must rank the right incident first.
#define CAF_SUITE store_conformance_memory_ranking
#include <fmt/format.h>

#include "core/memory/search.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;

namespace {

constexpr timestamp_us t0 = 1'700'000'000'000'000;

const std::vector<std::string> services{
  "payments", "checkout", "search",  "inventory", "shipping", "catalog",   "billing",
  "accounts", "ledger",   "pricing", "gateway",   "auth",     "profile",   "orders",
  "invoices", "coupons",  "reviews", "media",     "notifier", "scheduler", "ranking",
  "wallet",   "fraud",    "loyalty", "returns"};

struct fault {
  const char* name;
  const char* story; // {s}: the service
  const char* queries[2];
};

const std::vector<fault> faults{
  {"bad-deploy",
   "HTTP 5xx errors on {s} rose right after release v2.3 went out; rolling back "
   "the deploy to v2.2 brought the error rate down",
   {"{s} throwing 500s since the latest deployment", "{s} errors after we released, rollback?"}},
  {"pool-exhaustion",
   "{s} requests timed out waiting for a database connection: the connection "
   "pool was exhausted under load; raised the pool size",
   {"{s} db connections exhausted, requests hang", "{s} waiting on pooled connections"}},
  {"disk-full",
   "The disk of the {s} host filled up; writes failed with ENOSPC until old logs "
   "were rotated and space freed",
   {"{s} out of disk space", "{s} writes failing no space left on disks"}},
  {"cert-expired",
   "The TLS certificate of {s} expired; clients failed the handshake until the "
   "certificate was renewed",
   {"{s} certificates expiring handshake failures", "{s} tls handshake errors from clients"}},
  {"oom",
   "{s} pods were OOMKilled repeatedly: a memory leak grew the heap until the kernel "
   "killed them; restarted and fixed the leak",
   {"{s} getting oomkilled", "{s} leaking memory, pods killed"}},
  {"dns",
   "Name resolution failed for {s}: the DNS resolver timed out and lookups of upstream "
   "hosts returned SERVFAIL",
   {"{s} cannot resolve hostnames dns", "{s} servfail on lookups"}},
  {"cache-eviction",
   "The redis cache of {s} hit maxmemory and evicted hot keys; the hit ratio "
   "collapsed and latency rose",
   {"{s} cache evictions hit ratio dropped", "{s} redis maxmemory evicting keys"}},
  {"consumer-lag",
   "Kafka consumer lag on {s} grew for hours: the consumers were stuck on a "
   "poison message; skipped it and the backlog drained",
   {"{s} consumers lagging backlog growing", "{s} kafka lag stuck consumer"}},
  {"throttled",
   "{s} calls to the upstream API were throttled with 429 Too Many Requests after "
   "the quota was lowered",
   {"{s} getting 429 throttling from upstream", "{s} rate limited by the api quota"}},
  {"feature-flag",
   "Enabling the feature flag new-pricing on {s} caused null pointer exceptions; "
   "turning the flag off stopped them",
   {"{s} exceptions after flag flip", "{s} nullpointerexception feature toggle enabled"}},
  {"cpu-throttling",
   "{s} latency spiked because its containers were CPU throttled by a too low "
   "cgroup limit; raised the CPU limit",
   {"{s} cpu throttled containers slow", "{s} cgroup limits throttling cpu"}},
  {"gc-pauses",
   "Long garbage collection pauses on the {s} JVM stalled requests for seconds; "
   "tuned the heap and the collector",
   {"{s} jvm gc pause stalls", "{s} garbage collector pausing"}},
  {"replication-lag",
   "The read replica of {s} fell behind the primary: replication lag reached "
   "minutes and reads returned stale data",
   {"{s} replica lagging stale reads", "{s} replication behind primary"}},
  {"deadlock",
   "Transactions of {s} deadlocked on the orders table; the database aborted them "
   "and retries piled up",
   {"{s} deadlocks in transactions", "{s} deadlocked rows retries"}},
  {"secret-rotation",
   "After the credentials were rotated {s} kept the old password and "
   "authentication to the database failed",
   {"{s} auth failing after rotating secrets", "{s} old credentials after rotation"}},
  {"packet-loss",
   "Packet loss between zones broke {s}: retransmits and TCP resets made calls "
   "fail intermittently",
   {"{s} intermittent resets packets dropped", "{s} network loss retransmissions"}},
  {"clock-skew",
   "The clock of a {s} node drifted; NTP was down and tokens were rejected as "
   "not yet valid",
   {"{s} clock drift ntp tokens rejected", "{s} time skew invalid tokens"}},
  {"thread-starvation",
   "The worker thread pool of {s} was saturated by slow blocking calls; new "
   "requests queued until they timed out",
   {"{s} threads saturated queueing", "{s} blocked workers thread pool full"}},
  {"crashloop",
   "{s} went into CrashLoopBackOff: a missing environment variable made it exit at "
   "startup",
   {"{s} crashlooping on start", "{s} exits at startup env var missing"}},
  {"slow-query",
   "A dropped index made a {s} query scan the whole table; queries got slow until "
   "the index was recreated",
   {"{s} slow queries full table scans", "{s} missing index query slowness"}},
};

std::string fill(const char* text, const std::string& service) {
  return fmt::format(fmt::runtime(text), fmt::arg("s", service));
}

std::string id_of(std::size_t s, std::size_t f) {
  return fmt::format("mem_{:02d}{:02d}", s, f);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_memory_ranking_tests, test::fixture)

CAF_TEST(the right past incident ranks first for at least 95 percent of on call queries) {
  std::vector<write_batch> batches;
  for (std::size_t s = 0; s < services.size(); ++s)
    for (std::size_t f = 0; f < faults.size(); ++f) {
      auto e = memory::create(memory::draft{memory::kind::incident,
                                            fill(faults[f].story, services[s]),
                                            {{"service", services[s]}, {"fault", faults[f].name}},
                                            {},
                                            {}},
                              id_of(s, f), "generator", t0);
      CAF_REQUIRE(e.has_value());
      write_batch b;
      b.memories.push_back(std::move(*e));
      batches.push_back(std::move(b));
    }
  CAF_REQUIRE_EQUAL(batches.size(), 500u);
  commit_ok(std::move(batches));
  int queries = 0;
  int first = 0;
  for (std::size_t f = 0; f < faults.size(); ++f)
    for (int k = 0; k < 2; ++k) {
      const std::size_t s = (f * 7 + static_cast<std::size_t>(k) * 11) % services.size();
      memory::query q;
      q.text = fill(faults[f].queries[k], services[s]);
      q.limit = 5;
      auto found = st->search_memories(q);
      CAF_REQUIRE(found.has_value());
      auto hits = memory::rank(std::move(*found), q, t0);
      ++queries;
      if (!hits.empty() && hits.front().e.id == id_of(s, f))
        ++first;
      else
        CAF_MESSAGE("miss: '" << q.text << "' gave "
                              << (hits.empty() ? std::string{"nothing"}
                                               : hits.front().e.labels["service"] + "/" +
                                                   hits.front().e.labels["fault"]));
    }
  CAF_MESSAGE(first << " of " << queries << " queries rank the right incident first");
  CAF_CHECK_EQUAL(queries, 40);
  CAF_CHECK_GREATER_OR_EQUAL(first * 100, queries * 95);
}

CAF_TEST_FIXTURE_SCOPE_END()
