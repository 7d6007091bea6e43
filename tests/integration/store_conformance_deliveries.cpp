// The notifications' outbox (notify_store.hpp) on the backend named by SREH_TEST_STORE. Every
// test gets a fresh store.
#define CAF_SUITE store_conformance_deliveries
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;

namespace {

delivery make(std::string id, std::int64_t seq, timestamp_us next_at) {
  delivery d;
  d.id = std::move(id);
  d.event_seq = seq;
  d.event = "approval.requested";
  d.receiver = "oncall";
  d.subject = "run_1";
  d.group_key = "event=approval.requested";
  d.notice = R"({"event":"approval.requested","subject":"run_1"})";
  d.created_at = 100;
  d.next_at = next_at;
  return d;
}

/// The value of `e`, failing the test on an error.
template <class T>
T ok(expected<T> e) {
  if (!e)
    CAF_FAIL(e.error().message);
  return std::move(*e);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_deliveries_tests, sreh::test::fixture)

CAF_TEST(deliveries are enqueued once per id with the offset in one write) {
  CAF_REQUIRE_EQUAL(
    st->enqueue_deliveries({make("evt_a.oncall", 1, 10), make("evt_b.oncall", 2, 20)}, "notify", 3)
      .message,
    "");
  auto again = make("evt_a.oncall", 1, 999);
  again.last_error = "must not replace the stored row";
  CAF_REQUIRE_EQUAL(st->enqueue_deliveries({again}, "notify", 4).message, "");
  CAF_CHECK_EQUAL(ok(st->relay_offset("notify")), 4);
  auto a = st->get_delivery("evt_a.oncall");
  CAF_REQUIRE(a && *a);
  CAF_CHECK_EQUAL((*a)->next_at, 10);
  CAF_CHECK_EQUAL((*a)->last_error, "");
  CAF_CHECK_EQUAL((*a)->notice, R"({"event":"approval.requested","subject":"run_1"})");
  reopen();
  auto due = st->due_deliveries(15, 10);
  CAF_REQUIRE(due);
  CAF_REQUIRE_EQUAL(due->size(), 1u);
  CAF_CHECK_EQUAL(due->front().id, "evt_a.oncall");
  CAF_CHECK_EQUAL(ok(st->next_delivery_at()).value_or(-1), 10);
}

CAF_TEST(attempts are recorded and failed ones are listed by state) {
  CAF_REQUIRE_EQUAL(
    st->enqueue_deliveries({make("evt_a.oncall", 1, 10), make("evt_b.oncall", 2, 20)}, "notify", 3)
      .message,
    "");
  auto a = make("evt_a.oncall", 1, 10);
  a.state = delivery_state::failed;
  a.attempts = 12;
  a.done_at = 500;
  a.last_error = "receiver oncall: HTTP 500";
  CAF_REQUIRE_EQUAL(st->record_attempt(a).message, "");
  auto b = make("evt_b.oncall", 2, 20);
  b.state = delivery_state::delivered;
  b.attempts = 1;
  b.done_at = 400;
  CAF_REQUIRE_EQUAL(st->record_attempt(b).message, "");
  delivery_filter f;
  f.state = delivery_state::failed;
  auto failed = st->list_deliveries(f);
  CAF_REQUIRE(failed);
  CAF_REQUIRE_EQUAL(failed->deliveries.size(), 1u);
  CAF_CHECK_EQUAL(failed->deliveries[0].last_error, "receiver oncall: HTTP 500");
  CAF_CHECK_EQUAL(failed->deliveries[0].attempts, 12);
  CAF_CHECK(!ok(st->next_delivery_at()).has_value());
  CAF_CHECK(st->due_deliveries(1'000, 10)->empty());
  // Newest first, paged by id.
  delivery_filter all;
  all.limit = 1;
  auto first = st->list_deliveries(all);
  CAF_REQUIRE(first);
  CAF_REQUIRE_EQUAL(first->deliveries.size(), 1u);
  CAF_CHECK_EQUAL(first->deliveries[0].id, "evt_b.oncall");
  all.before_id = first->next_cursor;
  auto second = st->list_deliveries(all);
  CAF_REQUIRE(second);
  CAF_REQUIRE_EQUAL(second->deliveries.size(), 1u);
  CAF_CHECK_EQUAL(second->deliveries[0].id, "evt_a.oncall");
  CAF_CHECK_EQUAL(second->next_cursor, "");
}

CAF_TEST(the last delivery of a group leaves out the grouped ones) {
  auto grouped = make("evt_c.oncall", 3, 0);
  grouped.state = delivery_state::grouped;
  grouped.created_at = 900;
  CAF_REQUIRE_EQUAL(
    st->enqueue_deliveries({make("evt_a.oncall", 1, 10), grouped}, "notify", 4).message, "");
  CAF_CHECK_EQUAL(ok(st->last_in_group("oncall", "event=approval.requested")).value_or(-1), 100);
  CAF_CHECK(!ok(st->last_in_group("other", "event=approval.requested")).has_value());
}

CAF_TEST_FIXTURE_SCOPE_END()
