#define CAF_SUITE core_evolve
// core/evolve: a candidate's wire shape (what the store keeps) and the versions a run spec pins.
#include <string>

#include "core/evolve/candidate.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace ev = sreh::evolve;

namespace {

ev::candidate sample() {
  ev::candidate c;
  c.id = "cnd_01";
  c.revision = 3;
  c.state = ev::candidate_state::awaiting_approval;
  c.proposer = "alice";
  c.reason = "fewer steps";
  c.body = "version: 1\n";
  c.sha256 = "ab";
  c.base = "cnd_00";
  c.report = R"({"totals":{"regressions":0}})";
  c.regressions = {"scenario x: fails"};
  approval a;
  a.id = "apr_1";
  a.run_id = c.id;
  a.requester = "alice";
  a.required = 2;
  a.roles = {"approver"};
  a.votes.push_back({"bob", "approver", true, "ok", 1'700'000'000'000'000});
  c.promotion = a;
  c.created_at = 1'700'000'000'000'000;
  return c;
}

} // namespace

CAF_TEST(a candidate reads back as it was written) {
  auto c = sample();
  auto back = ev::candidate_from_json(ev::to_json(c));
  CAF_REQUIRE(static_cast<bool>(back));
  CAF_CHECK_EQUAL(back->id, c.id);
  CAF_CHECK_EQUAL(back->revision, 3);
  CAF_CHECK(back->state == ev::candidate_state::awaiting_approval);
  CAF_CHECK_EQUAL(back->body, c.body);
  CAF_CHECK_EQUAL(back->base, "cnd_00");
  CAF_CHECK_EQUAL(back->report, c.report);
  CAF_REQUIRE_EQUAL(back->regressions.size(), 1u);
  CAF_REQUIRE(back->promotion.has_value());
  CAF_CHECK_EQUAL(back->promotion->required, 2);
  CAF_REQUIRE_EQUAL(back->promotion->votes.size(), 1u);
  CAF_CHECK_EQUAL(back->promotion->votes.front().by, "bob");
  CAF_CHECK_EQUAL(back->created_at, c.created_at);
}

CAF_TEST(a document of the wrong shape is an error naming the field) {
  auto bad = ev::candidate_from_json(R"({"id":"cnd_1","state":"sleeping"})");
  CAF_REQUIRE(!bad);
  CAF_CHECK(bad.error().message.find("state") != std::string::npos);
  CAF_CHECK(!ev::candidate_from_json("[1]"));
}

CAF_TEST(a spec pins a version and reads it back; no pin is the config) {
  constexpr auto kb = ev::artefact::knowledge_base;
  CAF_CHECK_EQUAL(ev::pinned_version("{}", kb), "config");
  CAF_CHECK_EQUAL(ev::pinned_version("not json", kb), "config");
  CAF_CHECK_EQUAL(ev::pin_version("{}", kb, "config"), "{}");
  auto pinned = ev::pin_version(R"({"forked_from":{"run":"run_1","step":2}})", kb, "cnd_9");
  CAF_CHECK_EQUAL(ev::pinned_version(pinned, kb), "cnd_9");
  CAF_CHECK(pinned.find("forked_from") != std::string::npos);
  auto again = ev::pin_version(pinned, kb, "cnd_10"); // a new pin replaces the old
  CAF_CHECK_EQUAL(ev::pinned_version(again, kb), "cnd_10");
  CAF_CHECK_EQUAL(again.find("cnd_9"), std::string::npos);
}

CAF_TEST(the current version is the one promoted candidate) {
  std::vector<ev::candidate> all(3, sample());
  all[0].id = "cnd_a";
  all[0].state = ev::candidate_state::superseded;
  all[1].id = "cnd_b";
  all[1].state = ev::candidate_state::promoted;
  all[2].id = "cnd_c";
  CAF_REQUIRE(ev::current_of(all, ev::artefact::knowledge_base) != nullptr);
  CAF_CHECK_EQUAL(ev::current_of(all, ev::artefact::knowledge_base)->id, "cnd_b");
  all[1].state = ev::candidate_state::rolled_back;
  CAF_CHECK(ev::current_of(all, ev::artefact::knowledge_base) == nullptr);
}

CAF_TEST(each kind is pinned on its own) {
  constexpr auto kb = ev::artefact::knowledge_base;
  constexpr auto pol = ev::artefact::policy;
  auto both = ev::pin_version(ev::pin_version("{}", kb, "cnd_k"), pol, "cnd_p");
  CAF_CHECK_EQUAL(ev::pinned_version(both, kb), "cnd_k");
  CAF_CHECK_EQUAL(ev::pinned_version(both, pol), "cnd_p");
  CAF_CHECK_EQUAL(ev::pinned_version(ev::pin_version("{}", kb, "cnd_k"), pol), "config");
  // Pinning the config's version removes the pin (a fork back on the config's knowledge base).
  auto unpinned = ev::pin_version(both, kb, "config");
  CAF_CHECK_EQUAL(ev::pinned_version(unpinned, kb), "config");
  CAF_CHECK_EQUAL(ev::pinned_version(unpinned, pol), "cnd_p");
  CAF_CHECK(ev::parse_artefact("policy") == pol);
  CAF_CHECK(ev::parse_artefact("prompt") == ev::artefact::prompt);
  CAF_CHECK(ev::parse_artefact("model_route") == ev::artefact::model_route);
  CAF_CHECK(!ev::parse_artefact("model"));
  CAF_CHECK(ev::reasoning(ev::artefact::model_route) && !ev::reasoning(pol));
}
