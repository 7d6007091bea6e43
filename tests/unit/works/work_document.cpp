#define CAF_SUITE work_document
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/works/work.hpp"

using namespace sreh;
using namespace sreh::works;

namespace {

work every_member_set() {
  work w;
  w.id = "wrk_01HZDOCUMENT";
  w.template_name = "service-degraded";
  w.template_version = "v-1a2b";
  w.kind = "incident";
  w.title = "p99 \"latency\" ✓\nhigh";
  w.severity = "sev1";
  w.state = work_state::monitoring;
  w.fields = R"({"service":"checkout","n":3,"nested":{"a":[1,2.5,null]}})";
  w.labels = R"({"team":"pay\"ments","ü":"✓"})";
  w.creator = "alertmanager";
  w.idempotency_key = "fp-1";
  w.node_id = "n1";
  w.created_at = 1'700'000'000'000'001;
  w.updated_at = 1'700'000'000'000'002;
  w.marks = {1'700'000'000'000'001, 1'700'000'000'000'003, 1'700'000'000'000'004, 0};
  w.runs = {"run_a", "run_b"};
  w.active_run = "run_b";
  w.queued = 1;
  w.triggers = 2;
  w.sla_breached = 6;
  w.holds_since = 11;
  w.world_at = 12;
  w.next_check = 13;
  w.seq = 9;
  return w;
}

std::string error_of(std::string_view doc) {
  auto w = work_from_document(doc);
  if (w)
    return "no error";
  CAF_CHECK_EQUAL(to_string(w.error().code), to_string(errc::internal));
  return w.error().message;
}

bool mentions(const std::string& message, std::string_view part) {
  return message.find(part) != std::string::npos;
}

} // namespace

CAF_TEST(a work document round trips every member) {
  const auto w = every_member_set();
  const auto doc = to_document(w);
  auto back = work_from_document(doc);
  CAF_REQUIRE(back.has_value());
  CAF_CHECK_EQUAL(back->id, w.id);
  CAF_CHECK_EQUAL(back->template_name, w.template_name);
  CAF_CHECK_EQUAL(back->template_version, w.template_version);
  CAF_CHECK_EQUAL(back->kind, w.kind);
  CAF_CHECK_EQUAL(back->title, w.title);
  CAF_CHECK_EQUAL(back->severity, w.severity);
  CAF_CHECK_EQUAL(std::string{to_string(back->state)}, "monitoring");
  CAF_CHECK_EQUAL(back->fields, w.fields);
  CAF_CHECK_EQUAL(back->labels, w.labels);
  CAF_CHECK_EQUAL(back->creator, w.creator);
  CAF_CHECK_EQUAL(back->idempotency_key, w.idempotency_key);
  CAF_CHECK_EQUAL(back->node_id, w.node_id);
  CAF_CHECK_EQUAL(back->created_at, w.created_at);
  CAF_CHECK_EQUAL(back->updated_at, w.updated_at);
  CAF_CHECK_EQUAL(back->marks.created_at, w.marks.created_at);
  CAF_CHECK_EQUAL(back->marks.acknowledged_at, w.marks.acknowledged_at);
  CAF_CHECK_EQUAL(back->marks.mitigated_at, w.marks.mitigated_at);
  CAF_CHECK_EQUAL(back->marks.resolved_at, w.marks.resolved_at);
  CAF_CHECK_EQUAL(back->runs, w.runs);
  CAF_CHECK_EQUAL(back->active_run, w.active_run);
  CAF_CHECK_EQUAL(back->queued, w.queued);
  CAF_CHECK_EQUAL(back->triggers, w.triggers);
  CAF_CHECK_EQUAL(back->sla_breached, w.sla_breached);
  CAF_CHECK_EQUAL(back->holds_since, w.holds_since);
  CAF_CHECK_EQUAL(back->world_at, w.world_at);
  CAF_CHECK_EQUAL(back->next_check, w.next_check);
  CAF_CHECK_EQUAL(back->seq, w.seq);
  // The document is the same text again (a stored row rewritten unchanged stays unchanged).
  CAF_CHECK_EQUAL(to_document(*back), doc);
  // The shapes the brief names: marks an object, runs an array, the state by name.
  CAF_CHECK(mentions(doc, R"("marks":{"created_at":)"));
  CAF_CHECK(mentions(doc, R"("runs":["run_a","run_b"])"));
  CAF_CHECK(mentions(doc, R"("state":"monitoring")"));
}

CAF_TEST(a default work round trips with empty objects and no runs) {
  work w;
  w.id = "wrk_empty";
  auto back = work_from_document(to_document(w));
  CAF_REQUIRE(back.has_value());
  CAF_CHECK_EQUAL(back->fields, "{}");
  CAF_CHECK_EQUAL(back->labels, "{}");
  CAF_CHECK(back->runs.empty());
  CAF_CHECK_EQUAL(std::string{to_string(back->state)}, "open");
}

CAF_TEST(a bad document is internal and names the member) {
  const auto good = to_document(every_member_set());
  auto with = [&](std::string_view member, std::string_view value) {
    // Replaces the value of `member` (up to the next top-level comma) in the good document.
    auto doc = good;
    const auto key = "\"" + std::string{member} + "\":";
    const auto at = doc.find(key);
    CAF_REQUIRE(at != std::string::npos);
    const auto from = at + key.size();
    auto to = from;
    int depth = 0;
    for (; to < doc.size(); ++to) {
      const char c = doc[to];
      if (c == '{' || c == '[')
        ++depth;
      else if (c == '}' || c == ']') {
        if (depth == 0)
          break;
        --depth;
      } else if (c == ',' && depth == 0)
        break;
    }
    return doc.substr(0, from) + std::string{value} + doc.substr(to);
  };
  CAF_CHECK(mentions(error_of(with("state", R"("sleeping")")), "'state'"));
  CAF_CHECK(mentions(error_of(with("state", "3")), "'state'"));
  CAF_CHECK(mentions(error_of(with("queued", R"("1")")), "'queued'"));
  CAF_CHECK(mentions(error_of(with("title", "7")), "'title'"));
  CAF_CHECK(mentions(error_of(with("runs", R"({"a":1})")), "'runs'"));
  CAF_CHECK(mentions(error_of(with("runs", R"(["a",2])")), "'runs'"));
  CAF_CHECK(mentions(error_of(with("marks", "[]")), "'marks'"));
  CAF_CHECK(mentions(error_of(with("marks", R"({"created_at":"x"})")), "marks.created_at"));
  CAF_CHECK(mentions(error_of(with("fields", R"("text")")), "'fields'"));
  CAF_CHECK(mentions(error_of(with("labels", "[]")), "'labels'"));
  CAF_CHECK(mentions(error_of(R"({"kind":"incident"})"), "'id'"));
  CAF_CHECK(mentions(error_of("[1,2]"), "work document"));
  CAF_CHECK(mentions(error_of("{\"id\":"), "work document"));
}
