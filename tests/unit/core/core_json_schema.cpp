#define CAF_SUITE core_json_schema
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/base/json_schema.hpp"

using namespace sreh;

namespace {

const char* schema = R"({
  "type": "object",
  "properties": {
    "service": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
    "mode": {"enum": ["fast", "safe"]},
    "ratio": {"type": ["number", "null"], "multipleOf": 0.5},
    "targets": {"type": "array", "minItems": 1, "maxItems": 2,
                "items": {"type": "object", "required": ["name"],
                          "properties": {"name": {"type": "string"}}}},
    "choice": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
  },
  "required": ["service"],
  "additionalProperties": false
})";

std::string err(std::string_view args) {
  auto e = json::validate(schema, args);
  return e ? e.message : std::string{"(valid)"};
}

} // namespace

CAF_TEST(valid arguments pass) {
  CAF_CHECK_EQUAL(err(R"({"service":"api"})"), "(valid)");
  CAF_CHECK_EQUAL(err(R"({"service":"api","replicas":3,"mode":"safe","ratio":null,)"
                      R"("targets":[{"name":"a"}],"choice":7})"),
                  "(valid)");
}

CAF_TEST(each keyword names the value by path and pointer) {
  CAF_CHECK_EQUAL(err("[]"),
                  R"(arguments: expected object, got array (keyword 'type' at pointer ""))");
  CAF_CHECK_EQUAL(err("{}"),
                  R"(field 'service': is required (keyword 'required' at pointer "/service"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","bogus":1})"),
                  R"(field 'bogus': is not a known argument (keyword 'additionalProperties' at )"
                  R"(pointer "/bogus"))");
  CAF_CHECK_EQUAL(err(R"({"service":7})"),
                  R"(field 'service': expected string, got integer (keyword 'type' at pointer )"
                  R"("/service"))");
  CAF_CHECK_EQUAL(err(R"({"service":"a"})"),
                  R"(field 'service': must be at least 2 characters (keyword 'minLength' at )"
                  R"(pointer "/service"))");
  CAF_CHECK_EQUAL(err(R"({"service":"abcdefghij"})"),
                  R"(field 'service': must be at most 8 characters (keyword 'maxLength' at )"
                  R"(pointer "/service"))");
  CAF_CHECK_EQUAL(err(R"({"service":"API"})"),
                  R"(field 'service': must match the pattern "^[a-z]+$", got "API" (keyword )"
                  R"('pattern' at pointer "/service"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","replicas":0})"),
                  R"(field 'replicas': must be >= 1, got 0 (keyword 'minimum' at pointer )"
                  R"("/replicas"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","replicas":11})"),
                  R"(field 'replicas': must be <= 10, got 11 (keyword 'maximum' at pointer )"
                  R"("/replicas"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","replicas":1.5})"),
                  R"(field 'replicas': expected integer, got number (keyword 'type' at )"
                  R"(pointer "/replicas"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","mode":"slow"})"),
                  R"(field 'mode': must be one of "fast", "safe", got "slow" (keyword 'enum' at )"
                  R"(pointer "/mode"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","ratio":"x"})"),
                  R"(field 'ratio': expected number or null, got string (keyword 'type' at )"
                  R"(pointer "/ratio"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","ratio":0.7})"),
                  R"(field 'ratio': must be a multiple of 0.5, got 0.7 (keyword 'multipleOf' )"
                  R"(at pointer "/ratio"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","targets":[]})"),
                  R"(field 'targets': needs at least 1 items (keyword 'minItems' at pointer )"
                  R"("/targets"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","targets":[{"name":"a"},{"name":"b"},{"name":"c"}]})"),
                  R"(field 'targets': takes at most 2 items (keyword 'maxItems' at pointer )"
                  R"("/targets"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","targets":[{"name":"a"},{}]})"),
                  R"(field 'targets[1].name': is required (keyword 'required' at pointer )"
                  R"("/targets/1/name"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","targets":[{"name":3}]})"),
                  R"(field 'targets[0].name': expected string, got integer (keyword 'type' at )"
                  R"(pointer "/targets/0/name"))");
  CAF_CHECK_EQUAL(err(R"({"service":"api","choice":true})"),
                  R"(field 'choice': does not satisfy 'oneOf' of its schema, got true (keyword )"
                  R"('oneOf' at pointer "/choice"))");
}

CAF_TEST(bad texts and schemas that are not objects) {
  auto bad_schema = json::validate("{", "{}");
  CAF_CHECK(bad_schema.code == errc::internal);
  auto bad_args = json::validate(R"({"type":"object"})", "{");
  CAF_CHECK(bad_args.code == errc::invalid_argument);
  CAF_CHECK_EQUAL(bad_args.message.rfind("arguments: ", 0), 0u);
  CAF_CHECK(!json::validate("true", "[1]")); // no constraints
  CAF_CHECK(!json::validate("{}", "[1]"));
}
