// The store contract for long-term memory (memory_store.hpp), run against the backend named by
// SREH_TEST_STORE (store_factory.hpp): SQLite FTS5, PostgreSQL tsvector, and the in-memory
// stand-in. Search, its ranking inputs, versions, rollback, tombstones and conflicts.
#define CAF_SUITE store_conformance_memory
#include "core/memory/search.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;

namespace {

constexpr timestamp_us t0 = 1'700'000'000'000'000;

memory::entry make_memory(std::string id, std::string text,
                          std::map<std::string, std::string> labels = {},
                          memory::kind k = memory::kind::incident, timestamp_us at = t0) {
  auto e = memory::create(memory::draft{k, std::move(text), std::move(labels), {}, {}},
                          std::move(id), "alice", at);
  CAF_REQUIRE(e.has_value());
  return *e;
}

write_batch memory_batch(const memory::entry& e) {
  static int batches = 0; // event ids are unique, as the node's are
  write_batch b;
  b.memories.push_back(e);
  event ev;
  ev.id = "evt_" + e.id + "_" + std::to_string(e.version) + "_" + std::to_string(++batches);
  ev.run_id = e.id;
  ev.run_seq = e.version;
  ev.kind = "memory.changed";
  ev.at = e.updated_at;
  ev.data = "{}";
  b.events.push_back(std::move(ev));
  return b;
}

struct memory_fixture : test::fixture {
  void add(const memory::entry& e) { commit_one(memory_batch(e)); }

  std::vector<std::string> search_ids(memory::query q) {
    auto found = st->search_memories(q);
    CAF_REQUIRE(found.has_value());
    std::vector<std::string> ids;
    for (const auto& h : memory::rank(std::move(*found), q, t0))
      ids.push_back(h.e.id);
    return ids;
  }

  std::vector<std::string> search_ids(std::string text) {
    memory::query q;
    q.text = std::move(text);
    return search_ids(std::move(q));
  }

  memory::entry current(const std::string& id) {
    auto e = st->get_memory(id);
    CAF_REQUIRE(e.has_value());
    if (!e->has_value())
      CAF_FAIL("no memory " << id);
    return **e;
  }
};

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_memory_tests, memory_fixture)

CAF_TEST(an entry round trips every field and survives a reopen) {
  auto e = make_memory("mem_01", "payments \"5xx\" ✓ after release v2.3\nrolled back",
                       {{"service", "payments"}, {"alert", "HighErrorRate"}});
  e.entities = {"payments", "payments-db"};
  e.from = {"run_1", "wrk_1"};
  add(e);
  reopen();
  auto got = current("mem_01");
  CAF_CHECK_EQUAL(got.text, e.text);
  CAF_CHECK_EQUAL(got.labels, e.labels);
  CAF_CHECK_EQUAL(got.entities, e.entities);
  CAF_CHECK_EQUAL(got.from.run_id, "run_1");
  CAF_CHECK_EQUAL(got.from.work_id, "wrk_1");
  CAF_CHECK_EQUAL(got.author, "alice");
  CAF_CHECK_EQUAL(got.version, 1);
  CAF_CHECK(got.kind == memory::kind::incident);
  CAF_CHECK(got.made_by == memory::change::create);
  CAF_CHECK_EQUAL(got.created_at, t0);
  auto none = st->get_memory("mem_missing");
  CAF_REQUIRE(none.has_value());
  CAF_CHECK(!none->has_value());
}

CAF_TEST(a query matches any of its stemmed terms and the ranking not an all terms filter decides) {
  add(make_memory("mem_pool", "The checkout service restarted repeatedly: connection pool "
                              "exhausted on the orders database"));
  add(make_memory("mem_disk", "Disk full on the logging host; rotated the logs"));
  add(make_memory("mem_cert", "TLS certificate expired on the edge proxy"));
  // "restarts" meets "restarted" (stemmed); "pools" meets "pool"; no entry has every term.
  auto ids = search_ids("why does checkout keep restarts with pools? kubernetes");
  CAF_REQUIRE(!ids.empty());
  CAF_CHECK_EQUAL(ids.front(), "mem_pool");
  CAF_CHECK(!contains(ids, "mem_cert"));
  // One term is enough.
  CAF_CHECK_EQUAL(search_ids("certificates"), std::vector<std::string>{"mem_cert"});
  // Nothing matches: nothing found, no error.
  CAF_CHECK(search_ids("zebra").empty());
}

CAF_TEST(text that looks like query syntax is searched as words) {
  add(make_memory("mem_a", "error rate NEAR the limit OR above it"));
  for (const char* q : {"\"unbalanced", "NEAR(", "a AND OR NOT", "col:value", "*", "^start", "(((",
                        "'; DROP TABLE memories; --", "a & b | !c", "rate:*"}) {
    auto found = st->search_memories(memory::query{q, {}, {}, {}, {}, 10});
    if (!found)
      CAF_FAIL("query '" << std::string{q} << "': " << found.error().message);
  }
  CAF_CHECK_EQUAL(search_ids("rate:*"), std::vector<std::string>{"mem_a"});
}

CAF_TEST(labels and tags are searched and a label filter and kind restrict) {
  add(make_memory("mem_pay", "5xx after the release", {{"service", "payments"}}));
  add(make_memory("mem_search", "5xx after the release", {{"service", "search"}}));
  add(make_memory("mem_note", "5xx runbook for payments", {{"service", "payments"}},
                  memory::kind::runbook));
  // A label value is searched like text.
  auto ids = search_ids("payments");
  CAF_CHECK(contains(ids, "mem_pay"));
  CAF_CHECK(contains(ids, "mem_note"));
  CAF_CHECK(!contains(ids, "mem_search"));
  memory::query q;
  q.text = "5xx";
  q.filter = {{"service", "payments"}};
  ids = search_ids(q);
  CAF_CHECK_EQUAL(ids.size(), 2u);
  CAF_CHECK(!contains(ids, "mem_search"));
  q.kind = memory::kind::runbook;
  CAF_CHECK_EQUAL(search_ids(q), std::vector<std::string>{"mem_note"});
  // No text: the newest entries that pass the filters.
  memory::query all;
  all.filter = {{"service", "payments"}};
  ids = search_ids(all);
  CAF_CHECK_EQUAL(ids.size(), 2u);
  // The query's labels lift the entry of the same service.
  memory::query ranked;
  ranked.text = "5xx after the release";
  ranked.labels = {{"service", "search"}};
  const auto top = search_ids(ranked);
  CAF_REQUIRE(!top.empty());
  CAF_CHECK_EQUAL(top.front(), "mem_search");
}

CAF_TEST(text relevance orders the candidates) {
  add(make_memory("mem_once", "latency rose on the api gateway"));
  add(make_memory("mem_twice", "latency latency spikes: gateway latency after deploy"));
  auto found = st->search_memories(memory::query{"latency", {}, {}, {}, {}, 10});
  CAF_REQUIRE(found.has_value());
  CAF_REQUIRE_EQUAL(found->size(), 2u);
  CAF_CHECK(found->at(0).relevance > 0);
  CAF_CHECK(found->at(0).relevance >= found->at(1).relevance);
}

CAF_TEST(an edit is a new version and a stale one is a conflict that applies nothing) {
  auto v1 = make_memory("mem_v", "disk full on host-1");
  add(v1);
  auto v2 = memory::edit(v1, memory::patch{std::string{"inode exhaustion on host-1"}, {}, {}},
                         "bob", t0 + 1);
  CAF_REQUIRE(v2.has_value());
  add(*v2);
  CAF_CHECK_EQUAL(current("mem_v").version, 2);
  CAF_CHECK_EQUAL(current("mem_v").text, "inode exhaustion on host-1");
  // The old text is found no more, the new one is.
  CAF_CHECK(search_ids("disk").empty());
  CAF_CHECK_EQUAL(search_ids("inode"), std::vector<std::string>{"mem_v"});
  // A second edit of version 1 (someone else's stale view) conflicts.
  auto stale = memory::edit(v1, memory::patch{std::string{"stale"}, {}, {}}, "carol", t0 + 2);
  CAF_REQUIRE(stale.has_value());
  std::vector<write_batch> bs{memory_batch(*stale)};
  auto rs = st->commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 1u);
  CAF_CHECK(rs[0].err.code == errc::conflict);
  CAF_CHECK(rs[0].err.message.find("mem_v") != std::string::npos);
  CAF_CHECK_EQUAL(current("mem_v").text, "inode exhaustion on host-1");
  CAF_CHECK_EQUAL(all_events("mem_v").size(), 2u); // the conflicting batch's event is not in
  // Creating an existing id conflicts too.
  std::vector<write_batch> again{memory_batch(make_memory("mem_v", "dup"))};
  CAF_CHECK(st->commit(again)[0].err.code == errc::conflict);
}

CAF_TEST(versions are kept a rollback restores old text and a delete is a tombstone) {
  auto v1 = make_memory("mem_r", "restart the consumer");
  add(v1);
  auto v2 =
    memory::edit(v1, memory::patch{std::string{"scale the consumer group"}, {}, {}}, "bob", t0 + 1);
  add(*v2);
  auto old = st->memory_version("mem_r", 1);
  CAF_REQUIRE(old.has_value() && old->has_value());
  auto v3 = memory::rollback(*v2, **old, "carol", t0 + 2);
  CAF_REQUIRE(v3.has_value());
  add(*v3);
  CAF_CHECK_EQUAL(current("mem_r").text, "restart the consumer");
  CAF_CHECK_EQUAL(current("mem_r").restored_from, 1);
  auto v4 = memory::remove(current("mem_r"), "dave", t0 + 3);
  CAF_REQUIRE(v4.has_value());
  add(*v4);
  // A tombstone: get shows it deleted, search finds it no more, its versions stay.
  CAF_CHECK(current("mem_r").deleted);
  CAF_CHECK(search_ids("consumer").empty());
  memory::query all;
  CAF_CHECK(!contains(search_ids(all), "mem_r"));
  auto versions = st->memory_versions("mem_r");
  CAF_REQUIRE(versions.has_value());
  CAF_REQUIRE_EQUAL(versions->size(), 4u);
  CAF_CHECK_EQUAL(versions->at(0).version, 4); // newest first
  CAF_CHECK(versions->at(0).made_by == memory::change::remove);
  CAF_CHECK_EQUAL(versions->at(1).author, "carol");
  CAF_CHECK_EQUAL(versions->at(3).text, "restart the consumer");
  // A rollback of the tombstone restores the entry, and search finds it again.
  auto v5 = memory::rollback(current("mem_r"), versions->at(2), "erin", t0 + 4);
  CAF_REQUIRE(v5.has_value());
  add(*v5);
  CAF_CHECK_EQUAL(search_ids("consumer"), std::vector<std::string>{"mem_r"});
}

CAF_TEST(a failed batch takes its memory versions back with it) {
  auto v1 = make_memory("mem_x", "queue backlog");
  std::vector<write_batch> bs{memory_batch(v1), memory_batch(v1)}; // the second conflicts
  auto rs = st->commit(bs);
  CAF_CHECK(rs[0].err.code == errc::conflict);
  auto none = st->get_memory("mem_x");
  CAF_REQUIRE(none.has_value());
  CAF_CHECK(!none->has_value());
  CAF_CHECK(search_ids("backlog").empty());
}

CAF_TEST_FIXTURE_SCOPE_END()
