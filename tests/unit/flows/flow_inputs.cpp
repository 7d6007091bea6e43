#define CAF_SUITE flow_inputs
#include <caf/test/unit_test.hpp>

#include <string>

#include "config/flows/flow_file.hpp"
#include "core/flows/inputs.hpp"

using namespace sreh;
using namespace sreh::flows;

namespace {

flow load() {
  auto f = config::load_flow_string(R"(flow: f
inputs:
  host: {type: string}
  below: {type: number, default: 0.8}
  force: {type: bool, default: false}
  settle: {type: duration, default: 5m}
  exclude: {type: list, default: [g2]}
steps:
  - {id: w, wait: 1m}
)",
                                    "f.yaml");
  if (!f)
    CAF_FAIL(f.error().message);
  return std::move(*f);
}

std::string resolved(const std::string& json) {
  auto r = resolve_inputs(load(), json);
  if (!r)
    return r.error().message;
  std::string out;
  for (const auto& [k, v] : *r)
    out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

} // namespace

CAF_TEST(inputs get their defaults and keep their types) {
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1"})"),
                  R"(below=0.8 exclude=["g2"] force=false host="g1" settle=300)");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "below": 0.5, "force": true, "settle": "90s",
                              "exclude": ["a", "b"]})"),
                  R"(below=0.5 exclude=["a","b"] force=true host="g1" settle=90)");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "settle": 120})"),
                  R"(below=0.8 exclude=["g2"] force=false host="g1" settle=120)");
}

CAF_TEST(bad inputs name the input) {
  CAF_CHECK_EQUAL(resolved("{}"), "inputs.host: missing (flow 'f' requires it)");
  CAF_CHECK_EQUAL(resolved(R"({"host": 3})"), "inputs.host: expected a string, got number");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "below": "low"})"),
                  "inputs.below: expected a number, got string");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "force": "yes"})"),
                  "inputs.force: expected true or false, got string");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "settle": "soon"})"),
                  "inputs.settle: expected a duration like 30s, 15m, 1h or 2d, got 'soon'");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "settle": 1.5})"),
                  "inputs.settle: expected a duration (\"5m\" or whole seconds), got number");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "exclude": ["a", 1]})"),
                  "inputs.exclude: expected a list of strings, got an item of type number");
  CAF_CHECK_EQUAL(resolved(R"({"host": "g1", "hots": 1})"),
                  "inputs.hots: flow 'f' has no such input (its inputs: host, below, force, "
                  "settle, exclude)");
  CAF_CHECK_EQUAL(resolved("[1]"), "inputs: expected a JSON object, got array");
}

CAF_TEST(resolved inputs read as placeholder text and expression values) {
  CAF_CHECK_EQUAL(placeholder_text(R"("g1")"), "g1");
  CAF_CHECK_EQUAL(placeholder_text(R"(["a","b"])"), "a,b");
  CAF_CHECK_EQUAL(placeholder_text("0.8"), "0.8");
  CAF_CHECK(std::get<double>(*expression_value("300")) == 300);
  CAF_CHECK(std::get<std::string>(*expression_value(R"("g1")")) == "g1");
  CAF_CHECK(std::get<bool>(*expression_value("true")));
  auto list = expression_value(R"(["a"])");
  CAF_REQUIRE(!list);
  CAF_CHECK_EQUAL(list.error().message, "array cannot be compared");
}
