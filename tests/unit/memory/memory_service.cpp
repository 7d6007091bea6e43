#define CAF_SUITE memory_service
#include "actors/memory/memory_service.hpp"

#include <string>

#include "actors/memory/memory_tool.hpp"
#include "core/base/json.hpp"
#include "core/base/json_schema.hpp"
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

CAF_TEST(memory search as a tool returns cases a reasoner reads back as past cases) {
  auto link = std::make_shared<actors::memory_link>();
  auto tool = actors::make_memory_tool(link);
  CAF_CHECK_EQUAL(tool->name(), "memory.search");
  CAF_CHECK(tool->risk() == actors::risk_class::read_only);
  CAF_CHECK(tool->idempotent());
  // Before the node is up, a call fails naming why.
  auto early = tool->execute({"run_1", R"({"query":"payments"})", "run_1:1", {}});
  CAF_CHECK(!early.ok);
  CAF_CHECK(early.error.find("not up") != std::string::npos);
  link->service = &memory;
  auto e = add("payments 5xx after the release of v2.3; rolled back",
               {{"service", "payments"}, {"fault", "bad_deploy"}});
  add(std::string(5000, 'x') + " payments", {{"service", "ledger"}});
  const std::string args =
    R"({"query":"payments errors after a release","near":{"service":"payments"},"limit":5})";
  CAF_CHECK_EQUAL(json::validate(tool->schema(), args).message, "");
  auto res = tool->execute({"run_1", args, "run_1:1", {}});
  CAF_REQUIRE(res.ok);
  auto seen = tool->observe(args, res.result);
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  const auto* found = std::get_if<obs::past_cases>(&seen.front());
  CAF_REQUIRE(found != nullptr);
  CAF_REQUIRE_EQUAL(found->cases.size(), 2u);
  const auto& best = found->cases.front();
  CAF_CHECK_EQUAL(best.id, e.id);
  CAF_CHECK_EQUAL(best.version, 1);
  CAF_CHECK_EQUAL(best.kind, "incident");
  CAF_CHECK_EQUAL(best.labels.at("fault"), "bad_deploy");
  CAF_CHECK(best.score > 0 && best.score <= 1);
  CAF_CHECK(!best.truncated);
  // A long text is cut, and says so.
  const auto& cut = found->cases.back();
  CAF_CHECK(cut.truncated);
  CAF_CHECK_EQUAL(cut.text.size(), actors::recalled_text_bytes);
  // Arguments outside the schema are refused before the call; a bad kind by the call.
  CAF_CHECK(json::validate(tool->schema(), R"({"query":"x","limit":50})").message.find("limit") !=
            std::string::npos);
  CAF_CHECK(json::validate(tool->schema(), R"({"query":"x","sql":"DROP"})").message.find("sql") !=
            std::string::npos);
  auto bad = tool->execute({"run_1", R"({"query":"x","kind":"gossip"})", "run_1:2", {}});
  CAF_CHECK(!bad.ok);
  CAF_CHECK(bad.error.find("gossip") != std::string::npos);
  // A result that is not the tool's shape is a failed call, not an empty memory.
  auto odd = tool->observe(args, R"({"rows":[]})");
  CAF_REQUIRE_EQUAL(odd.size(), 1u);
  CAF_CHECK(std::holds_alternative<obs::call_failed>(odd.front()));
}

CAF_TEST_FIXTURE_SCOPE_END()
