#define CAF_SUITE memory_service
#include "actors/memory/memory_service.hpp"

#include <string>

#include "core/base/json.hpp"
#include "persistence/store/in_memory_store.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;

namespace {

struct fixed_clock final : clock {
  timestamp_us now = 1'700'000'000'000'000;
  timestamp_us now_us() const override { return now; }
};

struct fixture {
  persistence::in_memory_store store;
  persistence::inline_commit_queue queue{store};
  fixed_clock clk;
  id_generator ids{clk};
  actors::memory_service memory{store, queue, clk, ids};

  memory::entry add(std::string text, std::map<std::string, std::string> labels = {}) {
    auto e = memory.add(
      memory::draft{memory::kind::incident, std::move(text), std::move(labels), {}, {}}, "alice");
    CAF_REQUIRE(e.has_value());
    return *e;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(memory_service_tests, fixture)

CAF_TEST(each change commits the next version with an audit event naming its author) {
  auto e = add("checkout 5xx: connection pool exhausted", {{"service", "checkout"}});
  CAF_CHECK(is_valid_id(e.id, "mem"));
  clk.now += 1'000'000;
  auto v2 =
    memory.edit(e.id, memory::patch{std::string{"checkout 5xx: pool too small"}, {}, {}}, "bob");
  CAF_REQUIRE(v2.has_value());
  auto v3 = memory.rollback(e.id, 1, "carol");
  CAF_REQUIRE(v3.has_value());
  CAF_CHECK_EQUAL(v3->text, "checkout 5xx: connection pool exhausted");
  auto v4 = memory.remove(e.id, "dave");
  CAF_REQUIRE(v4.has_value());
  CAF_REQUIRE_EQUAL(queue.committed.size(), 4u);
  const char* kinds[] = {"memory.created", "memory.edited", "memory.rolled_back", "memory.deleted"};
  const char* authors[] = {"alice", "bob", "carol", "dave"};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& ev = queue.committed[i];
    CAF_CHECK_EQUAL(ev.kind, kinds[i]);
    CAF_CHECK_EQUAL(ev.run_id, e.id);
    auto data = json::parse(ev.data);
    CAF_REQUIRE(data.has_value());
    CAF_CHECK_EQUAL(json::string_or(*data, "author"), authors[i]);
    CAF_CHECK_EQUAL(json::int_of(*data, "version").value_or(0), static_cast<int>(i) + 1);
  }
  auto versions = memory.versions(e.id);
  CAF_REQUIRE(versions.has_value());
  CAF_CHECK_EQUAL(versions->size(), 4u);
}

CAF_TEST(search ranks what the store finds and refuses a bad query) {
  add("payments 5xx after the release of v2.3", {{"service", "payments"}});
  add("search latency after the release", {{"service", "search"}});
  auto hits = memory.search(memory::query{"payments 5xx after the release", {}, {}, {}, {}, 5});
  CAF_REQUIRE(hits.has_value());
  CAF_REQUIRE(!hits->empty());
  CAF_CHECK_EQUAL(hits->front().e.labels.at("service"), "payments");
  auto bad = memory.search(memory::query{"x", {}, {}, {}, {}, 0});
  CAF_CHECK(bad.error().code == errc::invalid_argument);
}

CAF_TEST(bad changes are refused and commit nothing) {
  auto e = add("disk full");
  const auto before = queue.committed.size();
  CAF_CHECK(memory.get("mem_01HZZZZZZZZZZZZZZZZZZZZZZZ").error().code == errc::not_found);
  CAF_CHECK(memory.edit(e.id, memory::patch{}, "bob").error().code == errc::invalid_argument);
  CAF_CHECK(memory.rollback(e.id, 7, "bob").error().message.find("no version 7") !=
            std::string::npos);
  CAF_CHECK(memory.rollback(e.id, 1, "bob").error().code == errc::invalid_argument);
  CAF_CHECK(memory.add(memory::draft{memory::kind::note, "", {}, {}, {}}, "bob").error().code ==
            errc::invalid_argument);
  CAF_CHECK(
    memory
      .add(
        memory::draft{memory::kind::note, std::string(memory::max_text_bytes + 1, 'x'), {}, {}, {}},
        "bob")
      .error()
      .code == errc::too_large);
  CAF_CHECK_EQUAL(queue.committed.size(), before);
  auto gone = memory.remove(e.id, "bob");
  CAF_REQUIRE(gone.has_value());
  CAF_CHECK(memory.remove(e.id, "bob").error().code == errc::not_found);
}

CAF_TEST_FIXTURE_SCOPE_END()
