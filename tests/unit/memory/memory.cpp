#define CAF_SUITE core_memory
#include "core/memory/memory.hpp"

#include <string>

#include "core/base/json_object.hpp"
#include "core/memory/search.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::memory;

namespace {

constexpr timestamp_us day = 86'400'000'000;

entry make_entry(std::string id, std::string text, std::map<std::string, std::string> labels = {},
                 timestamp_us at = 100 * day) {
  auto e = create(draft{kind::incident, std::move(text), std::move(labels), {}, {}}, std::move(id),
                  "alice", at);
  CAF_REQUIRE(e.has_value());
  return *e;
}

expected<draft> draft_of(std::string_view body) {
  auto doc = json::parse(body);
  CAF_REQUIRE(doc.has_value());
  return read_draft(*doc);
}

} // namespace

CAF_TEST(an edit a rollback and a delete each make the next version) {
  auto v1 = make_entry("mem_1", "payments 5xx after release v2.3; rollback fixed it",
                       {{"service", "payments"}});
  CAF_CHECK_EQUAL(v1.version, 1);
  CAF_CHECK(v1.made_by == change::create);
  auto v2 = edit(v1, patch{std::string{"payments 5xx: the new pool size was too small"}, {}, {}},
                 "bob", 101 * day);
  CAF_REQUIRE(v2.has_value());
  CAF_CHECK_EQUAL(v2->version, 2);
  CAF_CHECK_EQUAL(v2->author, "bob");
  CAF_CHECK_EQUAL(v2->labels.at("service"), "payments"); // kept: the patch had no labels
  CAF_CHECK_EQUAL(v2->created_at, 100 * day);
  auto v3 = rollback(*v2, v1, "carol", 102 * day);
  CAF_REQUIRE(v3.has_value());
  CAF_CHECK_EQUAL(v3->version, 3);
  CAF_CHECK_EQUAL(v3->text, v1.text);
  CAF_CHECK_EQUAL(v3->restored_from, 1);
  auto v4 = remove(*v3, "dave", 103 * day);
  CAF_REQUIRE(v4.has_value());
  CAF_CHECK(v4->deleted);
  CAF_CHECK_EQUAL(v4->version, 4);
  // A deleted entry cannot be edited or deleted again; a rollback restores it.
  CAF_CHECK(edit(*v4, patch{std::string{"x"}, {}, {}}, "bob", 104 * day).error().code ==
            errc::not_found);
  CAF_CHECK(remove(*v4, "bob", 104 * day).error().code == errc::not_found);
  auto v5 = rollback(*v4, *v2, "erin", 105 * day);
  CAF_REQUIRE(v5.has_value());
  CAF_CHECK(!v5->deleted);
  CAF_CHECK_EQUAL(v5->text, v2->text);
  // Not to itself, a later version, or a tombstone.
  CAF_CHECK(rollback(*v5, *v5, "x", 106 * day).error().code == errc::invalid_argument);
  CAF_CHECK(rollback(*v5, *v4, "x", 106 * day).error().code == errc::invalid_argument);
}

CAF_TEST(entries over a limit or empty are refused naming the field) {
  auto empty = create(draft{kind::note, "  \n", {}, {}, {}}, "mem_1", "a", 1);
  CAF_CHECK(empty.error().code == errc::invalid_argument);
  CAF_CHECK(empty.error().message.find("text is empty") != std::string::npos);
  auto big =
    create(draft{kind::note, std::string(max_text_bytes + 1, 'x'), {}, {}, {}}, "mem_1", "a", 1);
  CAF_CHECK(big.error().code == errc::too_large);
  CAF_CHECK(big.error().message.find("text is 65537 bytes") != std::string::npos);
  auto long_value =
    create(draft{kind::note, "t", {{"service", std::string(300, 'v')}}, {}, {}}, "mem_1", "a", 1);
  CAF_CHECK(long_value.error().message.find("labels.service") != std::string::npos);
  auto v1 = make_entry("mem_1", "text");
  CAF_CHECK(edit(v1, patch{}, "a", 2).error().code == errc::invalid_argument);
}

CAF_TEST(a request body is read with errors naming the member) {
  auto ok = draft_of(R"({"kind":"note","text":"restart the pool","labels":{"service":"db"},)"
                     R"("entities":["db","db","api"]})");
  CAF_REQUIRE(ok.has_value());
  CAF_CHECK(ok->kind == kind::note);
  CAF_CHECK_EQUAL(ok->labels.at("service"), "db");
  auto e = create(*ok, "mem_1", "a", 1);
  CAF_REQUIRE(e.has_value());
  CAF_CHECK_EQUAL(e->entities.size(), 2u); // sorted, unique
  CAF_CHECK(draft_of(R"({"kind":"memo","text":"x"})").error().message.find("unknown kind 'memo'") !=
            std::string::npos);
  CAF_CHECK(draft_of(R"({"kind":"note"})").error().message.find("text is required") !=
            std::string::npos);
  CAF_CHECK(draft_of(R"({"kind":"note","text":5})").error().message.find("text must be a string") !=
            std::string::npos);
  CAF_CHECK(draft_of(R"({"kind":"note","text":"x","labels":{"a":1}})")
              .error()
              .message.find("labels.a must be a string") != std::string::npos);
  CAF_CHECK(draft_of(R"({"kind":"note","text":"x","colour":"red"})")
              .error()
              .message.find("unknown member 'colour'") != std::string::npos);
}

CAF_TEST(search terms are the words of a query without syntax or filler) {
  auto terms = search_terms(R"(Payments 5xx AFTER the release "v2.3" OR NEAR(x) payments*)");
  const std::vector<std::string> expected{"payments", "5xx", "release", "v2", "3", "near", "x"};
  CAF_CHECK_EQUAL(terms, expected);
  CAF_CHECK(search_terms("the and of").empty());
  CAF_CHECK(search_terms("").empty());
  CAF_CHECK_EQUAL(search_terms("zählerstand überlauf").size(), 2u); // UTF-8 letters kept whole
  CAF_CHECK(validate(query{std::string(max_query_bytes + 1, 'a'), {}, {}, {}, {}, 10}).code ==
            errc::invalid_argument);
  CAF_CHECK(validate(query{"x", {}, {}, {}, {}, 0}).code == errc::invalid_argument);
  CAF_CHECK(validate(query{"x", {}, {}, {}, {}, 101}).code == errc::invalid_argument);
}

CAF_TEST(labels entities and recency lift an entry the text ranks alike) {
  const timestamp_us now = 200 * day;
  auto same_service = make_entry("mem_a", "5xx after a release", {{"service", "payments"}}, now);
  auto other_service = make_entry("mem_b", "5xx after a release", {{"service", "search"}}, now);
  auto older = make_entry("mem_c", "5xx after a release", {{"service", "search"}}, now - 90 * day);
  auto weak_text = make_entry("mem_d", "a release", {{"service", "payments"}}, now);
  query q;
  q.text = "payments 5xx after the release";
  q.labels = {{"service", "payments"}};
  auto hits =
    rank({{older, 4.0}, {other_service, 4.0}, {same_service, 4.0}, {weak_text, 1.0}}, q, now);
  CAF_REQUIRE_EQUAL(hits.size(), 4u);
  CAF_CHECK_EQUAL(hits[0].e.id, "mem_a"); // text and labels
  CAF_CHECK_EQUAL(hits[1].e.id, "mem_b"); // text, newer
  CAF_CHECK_EQUAL(hits[2].e.id, "mem_c"); // text, 90 days old
  CAF_CHECK_EQUAL(hits[3].e.id, "mem_d"); // labels without the text
  CAF_CHECK(hits[0].score > hits[1].score);
  CAF_CHECK_EQUAL(hits[0].parts.size(), 4u);
  // Same entity first.
  auto on_entity = make_entry("mem_e", "5xx after a release", {}, now);
  on_entity.entities = {"payments-db"};
  query qe;
  qe.text = "5xx";
  qe.entities = {"payments-db"};
  qe.limit = 1;
  auto top = rank({{other_service, 4.0}, {on_entity, 4.0}}, qe, now);
  CAF_REQUIRE_EQUAL(top.size(), 1u);
  CAF_CHECK_EQUAL(top[0].e.id, "mem_e");
}

CAF_TEST(an entry and a hit are written in their wire shape) {
  auto e = make_entry("mem_1", "pool exhausted", {{"service", "db"}});
  auto text = json::build([&](json::writer& w) { write_json(w, hit{e, 0.8765, {{"text", 1}}}); });
  auto doc = json::parse(text);
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL(json::string_or(*doc, "id"), "mem_1");
  CAF_CHECK_EQUAL(json::string_or(*doc, "kind"), "incident");
  CAF_CHECK_EQUAL((*doc)["score"].GetDouble(), 0.877);
  CAF_CHECK_EQUAL(json::string_or((*doc)["labels"], "service"), "db");
  CAF_CHECK_EQUAL(json::int_of(*doc, "version").value_or(0), 1);
  auto labels = read_labels(labels_json(e.labels));
  CAF_REQUIRE(labels.has_value());
  CAF_CHECK_EQUAL(labels->at("service"), "db");
}
