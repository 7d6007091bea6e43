#define CAF_SUITE llm_answer
#include <caf/test/unit_test.hpp>

// A model's final answer: prose an SRE reads, and the structured result it may end with, which
// sreh eval and the quality score read as they read the builtin reasoner's.

#include <string>

#include "core/base/json.hpp"
#include "core/llm/answer.hpp"

using namespace sreh;

CAF_TEST(a fenced json block becomes the result and leaves the prose) {
  auto a = llm::split_final_answer(
    "Cause: checkout v2.4.1. Rolled it back.\n\n```json\n"
    R"({"detected": true, "diagnoses": [{"target": "checkout", "kind": "bad_deploy", )"
    R"("evidence": [3, {"step": 4}]}]})"
    "\n```\n");
  CAF_CHECK_EQUAL(a.text, "Cause: checkout v2.4.1. Rolled it back.");
  auto doc = json::parse_object(a.result);
  CAF_REQUIRE(doc.has_value());
  const auto& d = (*doc)["diagnoses"][0];
  CAF_CHECK_EQUAL(std::string{d["kind"].GetString()}, "bad_deploy");
  CAF_CHECK_EQUAL(d["evidence"][0]["step"].GetInt64(), 3); // a bare number, normalized
  CAF_CHECK_EQUAL(d["evidence"][1]["step"].GetInt64(), 4);
}

CAF_TEST(an object that closes the answer counts without a fence) {
  auto a = llm::split_final_answer(R"(Nothing is wrong: all healthy. {"detected": false})");
  CAF_CHECK_EQUAL(a.text, "Nothing is wrong: all healthy.");
  CAF_CHECK_EQUAL(a.result, R"({"detected":false})");
}

CAF_TEST(prose and objects that are not a result stay text) {
  for (std::string answer : {
         std::string{"checkout's deploy broke it; rolled back."},
         std::string{R"(The config was {"replicas": 3}.)"},                   // no result keys
         std::string{"```json\n{\"detected\": \"yes\"}\n```"},                // wrong type
         std::string{"```json\n{\"diagnoses\": [{\"target\": \"a\"}]}\n```"}, // no kind
         std::string{"```json\n{\"detected\": true,\n```"},                   // broken JSON
       }) {
    auto a = llm::split_final_answer(answer);
    CAF_CHECK(a.result.empty());
    CAF_CHECK_EQUAL(a.text, answer);
  }
}
