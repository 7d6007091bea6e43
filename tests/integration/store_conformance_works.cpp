// The store contract for Works, template versions and world state (work_store.hpp), run against
// the backend named by SREH_TEST_STORE (see store_factory.hpp). Every test gets a fresh store.
#define CAF_SUITE store_conformance_works
#include <cmath>

#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::create_batch;
using sreh::test::make_event;
using sreh::test::pad;

namespace {

constexpr timestamp_us t0 = 1'700'000'000'000'000;

works::work make_work(std::string id, std::string key = {}) {
  works::work w;
  w.id = std::move(id);
  w.template_name = "service-degraded";
  w.template_version = "v-1a2b3c";
  w.kind = "incident";
  w.title = "checkout is degraded";
  w.severity = "sev2";
  w.fields = R"({"service":"checkout","severity":"sev2"})";
  w.labels = R"({"service":"checkout","team":"payments"})";
  w.creator = "alertmanager";
  w.idempotency_key = std::move(key);
  w.node_id = "n1";
  w.created_at = t0;
  w.updated_at = t0;
  w.marks.created_at = t0;
  return w;
}

write_batch work_batch(const works::work& w, bool create = true) {
  write_batch b;
  (create ? b.create_work : b.update_work) = w;
  b.events.push_back(
    make_event("evt_" + w.id + "_" + std::to_string(w.seq + 1), w.id, w.seq + 1, "work.created"));
  return b;
}

world::entity make_entity(std::string id, std::int64_t version, double error_rate = 0.01) {
  world::entity e;
  e.id = std::move(id);
  e.kind = "service";
  e.version = version;
  e.metrics = {{"error_rate", error_rate}, {"latency_p99_ms", 212.5}};
  e.props = {{"tier", "1"}, {"version", "v2.3 ✓"}};
  e.depends_on = {"db-main", "redis"};
  e.source = world::change_source::observation;
  e.changed_by = "sandbox";
  e.observed_at = t0 + version;
  e.updated_at = t0 + 10 * version;
  return e;
}

void check_same_work(const works::work& a, const works::work& b) {
  CAF_CHECK_EQUAL(a.id, b.id);
  CAF_CHECK_EQUAL(a.template_name, b.template_name);
  CAF_CHECK_EQUAL(a.template_version, b.template_version);
  CAF_CHECK_EQUAL(a.kind, b.kind);
  CAF_CHECK_EQUAL(a.title, b.title);
  CAF_CHECK_EQUAL(a.severity, b.severity);
  CAF_CHECK_EQUAL(to_string(a.state), to_string(b.state));
  CAF_CHECK_EQUAL(a.fields, b.fields);
  CAF_CHECK_EQUAL(a.labels, b.labels);
  CAF_CHECK_EQUAL(a.creator, b.creator);
  CAF_CHECK_EQUAL(a.idempotency_key, b.idempotency_key);
  CAF_CHECK_EQUAL(a.node_id, b.node_id);
  CAF_CHECK_EQUAL(a.created_at, b.created_at);
  CAF_CHECK_EQUAL(a.updated_at, b.updated_at);
  CAF_CHECK_EQUAL(a.marks.created_at, b.marks.created_at);
  CAF_CHECK_EQUAL(a.marks.acknowledged_at, b.marks.acknowledged_at);
  CAF_CHECK_EQUAL(a.marks.mitigated_at, b.marks.mitigated_at);
  CAF_CHECK_EQUAL(a.marks.resolved_at, b.marks.resolved_at);
  CAF_CHECK_EQUAL(a.runs, b.runs);
  CAF_CHECK_EQUAL(a.active_run, b.active_run);
  CAF_CHECK_EQUAL(a.queued, b.queued);
  CAF_CHECK_EQUAL(a.triggers, b.triggers);
  CAF_CHECK_EQUAL(a.sla_breached, b.sla_breached);
  CAF_CHECK_EQUAL(a.holds_since, b.holds_since);
  CAF_CHECK_EQUAL(a.world_at, b.world_at);
  CAF_CHECK_EQUAL(a.next_check, b.next_check);
  CAF_CHECK_EQUAL(a.seq, b.seq);
}

void check_same_entity(const world::entity& a, const world::entity& b) {
  CAF_CHECK_EQUAL(a.id, b.id);
  CAF_CHECK_EQUAL(a.kind, b.kind);
  CAF_CHECK_EQUAL(a.version, b.version);
  CAF_CHECK(a.metrics == b.metrics);
  CAF_CHECK(a.props == b.props);
  CAF_CHECK_EQUAL(a.depends_on, b.depends_on);
  CAF_CHECK_EQUAL(to_string(a.source), to_string(b.source));
  CAF_CHECK_EQUAL(a.changed_by, b.changed_by);
  CAF_CHECK_EQUAL(a.observed_at, b.observed_at);
  CAF_CHECK_EQUAL(a.updated_at, b.updated_at);
}

std::vector<std::string> ids_of(const std::vector<works::work>& ws) {
  std::vector<std::string> out;
  for (const auto& w : ws)
    out.push_back(w.id);
  return out;
}

struct works_fixture : sreh::test::fixture {
  works::work get_work(const std::string& id) {
    auto w = st->get_work(id);
    CAF_REQUIRE(w.has_value());
    if (!w->has_value())
      CAF_FAIL("no work " << id);
    return **w;
  }

  bool has_work(const std::string& id) {
    auto w = st->get_work(id);
    CAF_REQUIRE(w.has_value());
    return w->has_value();
  }

  /// The ids of every page of `f` (newest first), following the cursor.
  std::vector<std::string> work_ids(work_filter f) {
    std::vector<std::string> ids;
    for (;;) {
      auto page = st->list_works(f);
      CAF_REQUIRE(page.has_value());
      CAF_REQUIRE(page->works.size() <= static_cast<std::size_t>(f.limit));
      for (auto& w : page->works)
        ids.push_back(w.id);
      if (page->next_cursor.empty())
        return ids;
      CAF_REQUIRE_EQUAL(page->works.size(), static_cast<std::size_t>(f.limit));
      CAF_REQUIRE_EQUAL(page->next_cursor, page->works.back().id);
      f.before_id = page->next_cursor;
    }
  }

  /// Commits `bs` and requires every result to fail with `internal`.
  void commit_fails(std::vector<write_batch> bs) {
    auto rs = st->commit(bs);
    CAF_REQUIRE_EQUAL(rs.size(), bs.size());
    for (auto& r : rs)
      CAF_CHECK_EQUAL(to_string(r.err.code), to_string(errc::internal));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_works_tests, works_fixture)

// -- Works ---------------------------------------------------------------------------------------

CAF_TEST(a work and its events round trip every field and survive a reopen) {
  auto w = make_work("wrk_01HZROUNDTRIP", "alert-fp-1");
  w.title = "p99 \"latency\" ✓ high\nsecond line";
  w.state = works::work_state::monitoring;
  w.fields = R"({"service":"checkout","note":"ü \"q\" \\ /","n":3,"nested":{"a":[1,2]}})";
  w.labels = R"({"service":"checkout","quote":"a\"b\\c","ü":"✓"})";
  w.node_id = "node-7";
  w.updated_at = t0 + 999;
  w.marks = {t0, t0 + 1, t0 + 2, 0};
  w.runs = {"run_01", "run_02"};
  w.active_run = "run_02";
  w.queued = 2;
  w.triggers = 3;
  w.sla_breached = 5;
  w.holds_since = t0 + 5;
  w.world_at = t0 + 6;
  w.next_check = t0 + 7;
  w.seq = 4;
  write_batch b;
  b.create_work = w;
  for (int i = 1; i <= 3; ++i)
    b.events.push_back(make_event("evt_w" + std::to_string(i), w.id, i,
                                  i == 1 ? "work.created" : "work.transition"));
  b.events.push_back(make_event("evt_other", "run_zz", 1));
  auto res = commit_one(std::move(b));
  CAF_CHECK_EQUAL(res.existing_work_id, "");
  CAF_REQUIRE_EQUAL(res.events.size(), 4u);
  check_same_work(get_work(w.id), w);
  auto timeline = all_events(w.id);
  CAF_REQUIRE_EQUAL(timeline.size(), 3u);
  CAF_CHECK_EQUAL(timeline[0].kind, "work.created");
  CAF_CHECK_EQUAL(timeline[2].run_seq, 3);
  reopen();
  check_same_work(get_work(w.id), w);
  CAF_CHECK(!has_work("wrk_nope"));
  auto by_key = st->work_by_idempotency_key("alert-fp-1");
  CAF_REQUIRE(by_key.has_value());
  CAF_CHECK_EQUAL(by_key->value_or(""), w.id);
  CAF_CHECK(!st->work_by_idempotency_key("alert-fp-2")->has_value());
  CAF_CHECK(!st->work_by_idempotency_key("")->has_value());
}

CAF_TEST(a held idempotency key names the existing work and applies nothing of the batch) {
  commit_one(work_batch(make_work("wrk_a", "key-1")));
  auto b = work_batch(make_work("wrk_b", "key-1"));
  b.create = sreh::test::make_run("run_b");
  b.templates.push_back({"service-degraded", "v-other", "incident", "text", t0});
  b.entities.push_back(make_entity("checkout", 1));
  auto res = commit_one(std::move(b));
  CAF_CHECK_EQUAL(res.existing_work_id, "wrk_a");
  CAF_CHECK(res.events.empty());
  CAF_CHECK(!has_work("wrk_b"));
  CAF_CHECK(!st->get_run("run_b")->has_value());
  CAF_CHECK(!st->get_template("service-degraded", "v-other")->has_value());
  CAF_CHECK(!st->world_entity("checkout")->has_value());
  CAF_CHECK_EQUAL(stats().events, 1);
  // Twice in one commit: the second names the first; an empty key never conflicts.
  std::vector<write_batch> bs;
  bs.push_back(work_batch(make_work("wrk_x", "key-9")));
  bs.push_back(work_batch(make_work("wrk_y", "key-9")));
  bs.push_back(work_batch(make_work("wrk_z")));
  bs.push_back(work_batch(make_work("wrk_w")));
  auto rs = commit_ok(std::move(bs));
  CAF_CHECK_EQUAL(rs[0].existing_work_id, "");
  CAF_CHECK_EQUAL(rs[1].existing_work_id, "wrk_x");
  CAF_CHECK_EQUAL(rs[2].existing_work_id, "");
  CAF_CHECK_EQUAL(rs[3].existing_work_id, "");
  CAF_CHECK(rs[1].events.empty());
  CAF_REQUIRE_EQUAL(rs[2].events.size(), 1u);
  CAF_CHECK_EQUAL(rs[2].events[0].seq, 3); // the skipped batch takes no seq
  CAF_CHECK(!has_work("wrk_y"));
  CAF_CHECK_EQUAL(stats().events, 4);
}

CAF_TEST(an update replaces the work and a missing work fails the whole commit) {
  auto w = make_work("wrk_a");
  commit_one(work_batch(w));
  w.state = works::work_state::acknowledged;
  w.marks.acknowledged_at = t0 + 50;
  w.labels = R"({"service":"checkout","owner":"bob"})";
  w.title = "checkout is degraded (bob)";
  w.updated_at = t0 + 50;
  w.seq = 1;
  commit_one(work_batch(w, false));
  check_same_work(get_work("wrk_a"), w);
  CAF_CHECK_EQUAL(all_events("wrk_a").size(), 2u);
  // An update of a Work that does not exist: nothing of the commit is applied.
  std::vector<write_batch> bs;
  bs.push_back(create_batch("run_a"));
  auto bad = work_batch(make_work("wrk_missing"), false);
  bad.templates.push_back({"t", "v1", "incident", "text", t0});
  bs.push_back(std::move(bad));
  commit_fails(std::move(bs));
  CAF_CHECK(!has_work("wrk_missing"));
  CAF_CHECK(!st->get_run("run_a")->has_value());
  CAF_CHECK(!st->get_template("t", "v1")->has_value());
  CAF_CHECK_EQUAL(stats().events, 2);
  check_same_work(get_work("wrk_a"), w);
  // The store works on afterwards.
  commit_one(create_batch("run_a"));
  CAF_CHECK_EQUAL(stats().last_event_seq, 3);
}

CAF_TEST(list works pages newest first and filters by state kind severity label and text) {
  const works::work_state states[] = {works::work_state::open, works::work_state::mitigating,
                                      works::work_state::resolved};
  std::vector<write_batch> bs;
  for (int i = 0; i < 90; ++i) {
    auto w = make_work("wrk_" + pad(i));
    w.state = states[i % 3];
    w.kind = i % 2 == 0 ? "incident" : "change";
    w.severity = i % 5 == 0 ? "sev1" : "sev3";
    w.title = i % 7 == 0 ? "Checkout LATENCY is high" : "disk full on host-" + std::to_string(i);
    // A label to find (with JSON escapes), and rows where the same text is not that label: in
    // a nested object, or under another key.
    if (i % 9 == 0)
      w.labels = R"({"env":"pr\"od\\1","team":"payments"})";
    else if (i % 9 == 1)
      w.labels = R"({"meta":{"env":"pr\"od\\1"}})";
    else
      w.labels = R"({"team":"pr\"od\\1"})";
    write_batch b;
    b.create_work = w;
    bs.push_back(std::move(b));
  }
  commit_ok(std::move(bs));
  auto ids_where = [](auto keep) {
    std::vector<std::string> ids;
    for (int i = 89; i >= 0; --i)
      if (keep(i))
        ids.push_back("wrk_" + pad(i));
    return ids;
  };
  work_filter f;
  f.limit = 40;
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int) { return true; }));
  auto first = st->list_works(f);
  CAF_REQUIRE(first.has_value());
  CAF_CHECK_EQUAL(first->works.size(), 40u);
  CAF_CHECK_EQUAL(first->next_cursor, "wrk_" + pad(50));
  // A full last page has no cursor.
  f.limit = 45;
  f.before_id = "wrk_" + pad(45);
  auto last = st->list_works(f);
  CAF_REQUIRE(last.has_value());
  CAF_CHECK_EQUAL(last->works.size(), 45u);
  CAF_CHECK_EQUAL(last->next_cursor, "");
  f = work_filter{};
  f.limit = 7;
  f.state = works::work_state::mitigating;
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int i) { return i % 3 == 1; }));
  f.kind = "change";
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int i) { return i % 3 == 1 && i % 2 == 1; }));
  f = work_filter{};
  f.limit = 4;
  f.severity = "sev1";
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int i) { return i % 5 == 0; }));
  f = work_filter{};
  f.limit = 3;
  f.label_key = "env";
  f.label_value = "pr\"od\\1";
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int i) { return i % 9 == 0; }));
  f.label_value = "pr\"od";
  CAF_CHECK(work_ids(f).empty());
  f = work_filter{};
  f.limit = 2;
  f.text = "checkout latency";
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int i) { return i % 7 == 0; }));
  f.text = "LATENCY IS";
  f.severity = "sev1";
  CAF_CHECK_EQUAL(work_ids(f), ids_where([](int i) { return i % 7 == 0 && i % 5 == 0; }));
  f = work_filter{};
  f.kind = "nothing";
  auto none = st->list_works(f);
  CAF_REQUIRE(none.has_value());
  CAF_CHECK(none->works.empty());
  CAF_CHECK_EQUAL(none->next_cursor, "");
}

CAF_TEST(open works are those of the node not resolved nor cancelled by creation time) {
  std::vector<write_batch> bs;
  auto add = [&](std::string id, timestamp_us created, works::work_state s, std::string node) {
    auto w = make_work(std::move(id));
    w.created_at = created;
    w.state = s;
    w.node_id = std::move(node);
    write_batch b;
    b.create_work = w;
    bs.push_back(std::move(b));
  };
  using S = works::work_state;
  add("wrk_1", t0 + 30, S::open, "n1");
  add("wrk_2", t0 + 10, S::mitigating, "n1");
  add("wrk_3", t0 + 20, S::resolved, "n1");
  add("wrk_4", t0 + 20, S::monitoring, "n1");
  add("wrk_5", t0 + 10, S::acknowledged, "n1");
  add("wrk_6", t0 + 5, S::cancelled, "n1");
  add("wrk_7", t0 + 1, S::open, "n2");
  commit_ok(std::move(bs));
  auto open = st->open_works("n1");
  CAF_REQUIRE(open.has_value());
  CAF_CHECK_EQUAL(ids_of(*open), (std::vector<std::string>{"wrk_2", "wrk_5", "wrk_4", "wrk_1"}));
  CAF_CHECK_EQUAL(ids_of(*st->open_works("n2")), (std::vector<std::string>{"wrk_7"}));
  CAF_CHECK(st->open_works("n3")->empty());
}

// -- template versions ---------------------------------------------------------------------------

CAF_TEST(a template version is inserted once and read back) {
  works::stored_template t{"service-degraded", "v-1a2b3c", "incident",
                           "kind: incident\ntitle: \"{{service}} ✓\"\n", t0};
  write_batch b;
  b.templates.push_back(t);
  b.templates.push_back({"service-degraded", "v-2", "incident", "kind: incident\n", t0 + 1});
  commit_one(std::move(b));
  write_batch again;
  again.templates.push_back({"service-degraded", "v-1a2b3c", "change", "other text", t0 + 9});
  commit_one(std::move(again));
  auto got = st->get_template("service-degraded", "v-1a2b3c");
  CAF_REQUIRE(got.has_value() && got->has_value());
  CAF_CHECK_EQUAL((*got)->name, t.name);
  CAF_CHECK_EQUAL((*got)->version, t.version);
  CAF_CHECK_EQUAL((*got)->kind, t.kind);
  CAF_CHECK_EQUAL((*got)->text, t.text);
  CAF_CHECK_EQUAL((*got)->first_seen, t.first_seen);
  auto v2 = st->get_template("service-degraded", "v-2");
  CAF_REQUIRE(v2.has_value() && v2->has_value());
  CAF_CHECK_EQUAL((*v2)->first_seen, t0 + 1);
  CAF_CHECK(!st->get_template("service-degraded", "v-3")->has_value());
  CAF_CHECK(!st->get_template("other", "v-1a2b3c")->has_value());
}

// -- world state ---------------------------------------------------------------------------------

CAF_TEST(entities are upserted and their history is kept newest first) {
  write_batch b;
  b.entities = {make_entity("checkout", 1), make_entity("db-main", 1)};
  b.entities[1].kind = "database";
  b.entities[1].depends_on.clear();
  b.entities[1].metrics.clear();
  b.entities[1].props.clear();
  commit_one(std::move(b));
  for (std::int64_t v = 2; v <= 4; ++v) {
    write_batch next;
    auto e = make_entity("checkout", v, 0.01 * static_cast<double>(v));
    e.source = v == 3 ? world::change_source::action : world::change_source::sync;
    e.changed_by = v == 3 ? "run_01/4" : "sync";
    next.entities.push_back(e);
    commit_one(std::move(next));
  }
  auto all = st->world_entities();
  CAF_REQUIRE(all.has_value());
  CAF_REQUIRE_EQUAL(all->size(), 2u);
  auto current = make_entity("checkout", 4, 0.04);
  current.source = world::change_source::sync;
  current.changed_by = "sync";
  check_same_entity((*all)[0], current);
  CAF_CHECK_EQUAL((*all)[1].id, "db-main");
  CAF_CHECK_EQUAL((*all)[1].kind, "database");
  CAF_CHECK((*all)[1].depends_on.empty());
  CAF_CHECK((*all)[1].metrics.empty());
  check_same_entity(st->world_entity("checkout")->value(), current);
  CAF_CHECK(!st->world_entity("nope")->has_value());
  auto history = st->entity_history("checkout", 10);
  CAF_REQUIRE(history.has_value());
  CAF_REQUIRE_EQUAL(history->size(), 4u);
  for (std::size_t i = 0; i < 4; ++i)
    CAF_CHECK_EQUAL((*history)[i].version, static_cast<std::int64_t>(4 - i));
  CAF_CHECK_EQUAL((*history)[1].changed_by, "run_01/4");
  CAF_CHECK_EQUAL(std::string{to_string((*history)[1].source)}, "action");
  check_same_entity((*history)[3], make_entity("checkout", 1));
  auto two = st->entity_history("checkout", 2);
  CAF_REQUIRE(two.has_value());
  CAF_CHECK_EQUAL(two->size(), 2u);
  CAF_CHECK_EQUAL(st->entity_history("checkout", 0)->size(), 1u); // clamped to 1
  CAF_CHECK(st->entity_history("nope", 10)->empty());
  reopen();
  check_same_entity(st->world_entity("checkout")->value(), current);
  CAF_CHECK_EQUAL(st->entity_history("db-main", 10)->size(), 1u);
}

CAF_TEST(a version already in the history fails the commit and applies nothing) {
  write_batch b;
  b.entities.push_back(make_entity("checkout", 1));
  commit_one(std::move(b));
  std::vector<write_batch> bs;
  bs.push_back(create_batch("run_a"));
  write_batch dup;
  dup.entities = {make_entity("redis", 1), make_entity("checkout", 1, 0.9)};
  dup.create_work = make_work("wrk_a");
  dup.events.push_back(make_event("evt_dup", "wrk_a", 1, "work.created"));
  bs.push_back(std::move(dup));
  commit_fails(std::move(bs));
  check_same_entity(st->world_entity("checkout")->value(), make_entity("checkout", 1));
  CAF_CHECK(!st->world_entity("redis")->has_value());
  CAF_CHECK_EQUAL(st->entity_history("checkout", 10)->size(), 1u);
  CAF_CHECK(!has_work("wrk_a"));
  CAF_CHECK(!st->get_run("run_a")->has_value());
  CAF_CHECK_EQUAL(stats().events, 0);
  CAF_CHECK_EQUAL(stats().runs, 0);
}

CAF_TEST(a work commits with a run and its step in one batch) {
  auto b = create_batch("run_a");
  step s;
  s.run_id = "run_a";
  s.n = 1;
  b.steps.push_back(s);
  auto w = make_work("wrk_a");
  w.runs = {"run_a"};
  w.active_run = "run_a";
  b.create_work = w;
  b.templates.push_back({"service-degraded", "v-1a2b3c", "incident", "text", t0});
  b.entities.push_back(make_entity("checkout", 1));
  b.events.push_back(make_event("evt_w1", "wrk_a", 1, "work.created"));
  auto res = commit_one(std::move(b));
  CAF_CHECK_EQUAL(res.events.size(), 2u);
  check_same_work(get_work("wrk_a"), w);
  CAF_CHECK(st->get_run("run_a")->has_value());
  CAF_CHECK_EQUAL(st->get_steps("run_a")->size(), 1u);
  CAF_CHECK(st->get_template("service-degraded", "v-1a2b3c")->has_value());
  CAF_CHECK_EQUAL(all_events("wrk_a").size(), 1u);
}

CAF_TEST_FIXTURE_SCOPE_END()
