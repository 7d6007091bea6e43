#define CAF_SUITE core_json
#include <caf/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/model/json_codecs.hpp"

using namespace sreh;

namespace {

std::string parse_error(std::string_view text, int depth = 64) {
  auto doc = json::parse(text, depth);
  return doc ? std::string{"(parsed)"} : doc.error().message;
}

run sample_run() {
  run r;
  r.id = "run_01HF7YAT00ABCDEFGHJKMNPQRS";
  r.goal = "checkout p99 is high \"quoted\" \n and ünïcode";
  r.state = run_state::waiting;
  r.waiting_for = wait_reason::approval;
  r.submitter = "alice";
  r.idempotency_key = "key-1";
  r.node_id = "node-2";
  r.created_at = 1'700'000'000'123'456;
  r.updated_at = 1'700'000'100'000'001;
  r.steps = 7;
  r.tokens = 12'345;
  r.budget = {10, 5000, 1'700'000'900'000'000, 1024};
  r.checkpoint = R"({"hypotheses":[{"cause":"deploy","score":0.75}],"n":3})";
  r.conclusion = "";
  r.error = "boom";
  r.labels = R"({"service":"checkout","env":"prod"})";
  r.quality = R"({"total":80,"parts":[]})";
  return r;
}

} // namespace

CAF_TEST(run round trip) {
  auto r = sample_run();
  auto text = json::to_json(r);
  auto back = json::run_from_json(text);
  CAF_CHECK(back.has_value());
  if (!back)
    return;
  CAF_CHECK_EQUAL(json::to_json(*back), text);
  CAF_CHECK_EQUAL(back->id, r.id);
  CAF_CHECK_EQUAL(back->goal, r.goal);
  CAF_CHECK(back->state == r.state);
  CAF_CHECK(back->waiting_for == r.waiting_for);
  CAF_CHECK_EQUAL(back->created_at, r.created_at);
  CAF_CHECK_EQUAL(back->updated_at, r.updated_at);
  CAF_CHECK_EQUAL(back->budget.deadline_us, r.budget.deadline_us);
  CAF_CHECK_EQUAL(back->budget.max_result_bytes, 1024);
  CAF_CHECK_EQUAL(back->checkpoint, r.checkpoint);
  CAF_CHECK_EQUAL(back->labels, r.labels);
  CAF_CHECK_EQUAL(back->error, r.error);
  CAF_CHECK_EQUAL(back->conclusion, std::string{});
  CAF_CHECK_EQUAL(back->quality, r.quality);
}

CAF_TEST(run wire shape uses null for empty fields) {
  run r;
  r.id = "run_x";
  r.created_at = 1'700'000'000'000'000;
  r.updated_at = r.created_at;
  auto text = json::to_json(r);
  CAF_CHECK_EQUAL(
    text,
    std::string{
      R"({"id":"run_x","goal":"","state":"pending","waiting_for":null,)"
      R"("submitter":"","idempotency_key":null,"node_id":"",)"
      R"("created_at":"2023-11-14T22:13:20.000000Z",)"
      R"("updated_at":"2023-11-14T22:13:20.000000Z","steps":0,"tokens":0,)"
      R"("budget":{"max_steps":50,"max_tokens":200000,"deadline":null,)"
      R"("max_result_bytes":65536},"checkpoint":{},"conclusion":null,)"
      R"("error":null,"outcome":null,"quality":null,"labels":{},"kind":"goal","parent":null,)"
      R"("versions":{"knowledge_base":"config","policy":"config","prompt":"config","model_route":"config"}})"});
  auto back = json::run_from_json(text);
  CAF_CHECK(back.has_value());
  if (back) {
    CAF_CHECK(back->waiting_for == wait_reason::none);
    CAF_CHECK_EQUAL(back->idempotency_key, std::string{});
    CAF_CHECK_EQUAL(back->budget.deadline_us, 0);
  }
}

CAF_TEST(step round trip) {
  step s;
  s.run_id = "run_a";
  s.n = 3;
  s.kind = step_kind::tool;
  s.state = step_state::in_doubt;
  s.tool = "sandbox.restart";
  s.args = R"({"service":"checkout"})";
  s.idempotency_key = "run_a:3";
  s.decision = R"({"thought":"restart it"})";
  s.result = R"([1,2,{"x":null}])";
  s.error = "tool timed out";
  s.result_truncated = true;
  s.started_at = 1'700'000'000'000'001;
  s.finished_at = 1'700'000'000'500'002;
  s.attempts = 2;
  auto text = json::to_json(s);
  CAF_CHECK(text.find(R"("state":"in_doubt")") != std::string::npos);
  auto back = json::step_from_json(text);
  CAF_CHECK(back.has_value());
  if (!back)
    return;
  CAF_CHECK_EQUAL(json::to_json(*back), text);
  CAF_CHECK_EQUAL(back->result, s.result);
  CAF_CHECK_EQUAL(back->finished_at, s.finished_at);
  CAF_CHECK_EQUAL(back->attempts, 2);
  CAF_CHECK(back->result_truncated);
}

CAF_TEST(step intent has null outcome fields) {
  step s;
  s.run_id = "run_a";
  s.n = 1;
  s.kind = step_kind::reason;
  s.started_at = 1'700'000'000'000'000;
  auto text = json::to_json(s);
  CAF_CHECK(text.find(R"("tool":null)") != std::string::npos);
  CAF_CHECK(text.find(R"("result":null)") != std::string::npos);
  CAF_CHECK(text.find(R"("finished_at":null)") != std::string::npos);
  auto back = json::step_from_json(text);
  CAF_CHECK(back.has_value());
  if (back) {
    CAF_CHECK_EQUAL(back->result, std::string{});
    CAF_CHECK_EQUAL(back->finished_at, 0);
    CAF_CHECK(back->kind == step_kind::reason);
  }
}

CAF_TEST(event round trip) {
  event e{42, "evt_1", "run_a", 7, "step.outcome", 1'700'000'000'000'777, R"({"n":3})"};
  auto text = json::to_json(e);
  CAF_CHECK_EQUAL(text, std::string{R"({"seq":42,"id":"evt_1","run_id":"run_a","run_seq":7,)"
                                    R"("kind":"step.outcome","at":"2023-11-14T22:13:20.000777Z",)"
                                    R"("data":{"n":3}})"});
  auto back = json::event_from_json(text);
  CAF_CHECK(back.has_value());
  if (back) {
    CAF_CHECK_EQUAL(back->seq, 42);
    CAF_CHECK_EQUAL(back->at, e.at);
    CAF_CHECK_EQUAL(back->data, e.data);
  }
}

CAF_TEST(event decoder reads every field of what the relay publishes) {
  // What other nodes' event feeds decode: to_json of a stored event, also without a run or a
  // time, and with nested, escaped and non-ASCII data.
  event e{9'000'000'001,
          "evt_01J",
          "",
          0,
          "node.config",
          0,
          R"({"a":[1,{"b":"x\"y\\z"}],"n":null,"t":"caf)"
          "\xc3\xa9 \xe2\x9c\x93"
          R"(","f":1.5})"};
  auto text = json::to_json(e);
  CAF_CHECK(text.find(R"("run_id":"")") != std::string::npos);
  CAF_CHECK(text.find(R"("at":null)") != std::string::npos);
  auto back = json::event_from_json(text);
  CAF_REQUIRE(back.has_value());
  CAF_CHECK_EQUAL(back->seq, e.seq);
  CAF_CHECK_EQUAL(back->id, e.id);
  CAF_CHECK_EQUAL(back->run_id, std::string{});
  CAF_CHECK_EQUAL(back->run_seq, 0);
  CAF_CHECK_EQUAL(back->kind, e.kind);
  CAF_CHECK_EQUAL(back->at, 0);
  CAF_CHECK_EQUAL(back->data, e.data);
  CAF_CHECK_EQUAL(json::to_json(*back), text);
  // Missing members keep their defaults; a wrong type names the field.
  auto partial = json::event_from_json(R"({"seq":3,"id":"evt_3"})");
  CAF_REQUIRE(partial.has_value());
  CAF_CHECK_EQUAL(partial->seq, 3);
  CAF_CHECK_EQUAL(partial->data, std::string{"{}"});
  auto bad = json::event_from_json(R"({"seq":"3"})");
  CAF_CHECK(!bad.has_value());
  if (!bad)
    CAF_CHECK_EQUAL(bad.error().message,
                    std::string{"field 'seq': expected an integer, got string"});
}

CAF_TEST(decoders name the bad field) {
  auto r = json::run_from_json(R"({"id":"run_a","steps":"three"})");
  CAF_CHECK(!r.has_value());
  if (!r)
    CAF_CHECK_EQUAL(r.error().message,
                    std::string{"field 'steps': expected an integer, got string"});
  auto s = json::step_from_json(R"({"kind":"dance"})");
  CAF_CHECK(!s.has_value());
  if (!s)
    CAF_CHECK_EQUAL(s.error().message,
                    std::string{"field 'kind': expected a known name, got string"});
  auto b = json::run_from_json(R"({"budget":{"deadline":"yesterday"}})");
  CAF_CHECK(!b.has_value());
  if (!b)
    CAF_CHECK_EQUAL(b.error().message,
                    std::string{"field 'budget.deadline': expected an RFC 3339 timestamp, "
                                "got string"});
  auto e = json::event_from_json("[]");
  CAF_CHECK(!e.has_value());
  if (!e)
    CAF_CHECK_EQUAL(e.error().message, std::string{"expected a JSON object, got array"});
}

CAF_TEST(deep nesting is rejected without recursion) {
  std::string deep(10'000, '[');
  deep += std::string(10'000, ']');
  CAF_CHECK_EQUAL(parse_error(deep, 32),
                  std::string{"JSON nesting deeper than 32 levels (at byte 32)"});
  // Also when unbalanced, and with objects.
  std::string open_only;
  for (int i = 0; i < 100'000; ++i)
    open_only += "{\"a\":";
  CAF_CHECK(parse_error(open_only, 64).find("JSON nesting deeper than 64 levels") == 0);
  // Exactly at the limit is fine; brackets inside strings do not count.
  std::string at_limit = std::string(32, '[') + std::string(32, ']');
  CAF_CHECK(json::parse(at_limit, 32).has_value());
  CAF_CHECK(!json::parse("[" + at_limit + "]", 32).has_value());
  CAF_CHECK(json::parse(R"(["[[[[[[[[[[\"[[[[["])", 2).has_value());
}

CAF_TEST(syntax errors name the byte offset) {
  CAF_CHECK_EQUAL(parse_error(R"({"a":1} x)"),
                  std::string{"invalid JSON at byte 8: The document root must not be followed by "
                              "other values."});
  CAF_CHECK_EQUAL(parse_error(R"({"a":})"), std::string{"invalid JSON at byte 5: Invalid value."});
  CAF_CHECK_EQUAL(parse_error(""), std::string{"invalid JSON at byte 0: The document is empty."});
  CAF_CHECK(parse_error(R"({"a":1)").find("invalid JSON at byte 6: ") == 0);
  // A NUL byte would otherwise end the input early and hide trailing garbage.
  CAF_CHECK_EQUAL(parse_error(std::string_view{"{}\0xx", 5}),
                  std::string{"invalid JSON at byte 2: NUL character"});
}

CAF_TEST(invalid utf8 is rejected) {
  CAF_CHECK_EQUAL(parse_error("[\"a\xff\"]"),
                  std::string{"invalid JSON at byte 3: Invalid encoding in string."});
  CAF_CHECK(!json::parse("\"\xc0\xaf\"").has_value()); // overlong '/'
  CAF_CHECK(json::parse("\"\xc3\xbc\"").has_value());  // ü
}

CAF_TEST(numbers past the double range are refused) {
  CAF_CHECK_EQUAL(parse_error("[8111.0555e311]"),
                  std::string{"invalid JSON: a number is too big for a double"});
  CAF_CHECK(json::parse("[1.5e308, -2e-320]").has_value());
}

CAF_TEST(surrogate escapes must come in pairs) {
  // A lone low surrogate decodes to bytes that are not UTF-8: refused where it stands.
  CAF_CHECK_EQUAL(parse_error(R"(["ok", "\u00e9\ude00"])"),
                  std::string{"invalid JSON at byte 14: a low surrogate escape without its high "
                              "surrogate"});
  CAF_CHECK(!json::parse(R"("\udfff")").has_value());
  CAF_CHECK(!json::parse(R"("\ud83d")").has_value());   // a lone high one (RapidJSON)
  auto pair = json::parse(R"("\ud83d\ude00 \\ude00")"); // 😀 and an escaped backslash
  CAF_REQUIRE(pair.has_value());
  CAF_CHECK_EQUAL(std::string{pair->GetString()}, std::string{"\xf0\x9f\x98\x80 \\ude00"});
}

CAF_TEST(parse_object requires an object) {
  CAF_CHECK(json::parse_object("{}").has_value());
  auto a = json::parse_object("[1]");
  CAF_CHECK(!a.has_value());
  if (!a) {
    CAF_CHECK(a.error().code == errc::invalid_argument);
    CAF_CHECK_EQUAL(a.error().message, std::string{"expected a JSON object, got array"});
  }
  CAF_CHECK(!json::parse_object("\"s\"").has_value());
}

CAF_TEST(quote escapes) {
  CAF_CHECK_EQUAL(json::quote("plain"), std::string{"\"plain\""});
  CAF_CHECK_EQUAL(json::quote("a\"b\\c\nd\te"), std::string{R"("a\"b\\c\nd\te")"});
  CAF_CHECK_EQUAL(json::quote(std::string_view{"\x01\0", 2}), std::string{R"("\u0001\u0000")"});
  CAF_CHECK_EQUAL(json::quote("ü"), std::string{"\"ü\""});
  CAF_CHECK_EQUAL(json::quote("a\xff"), std::string{R"("a\ufffd")"});
  // Whatever goes in, the output parses back.
  std::string all;
  for (int c = 0; c < 256; ++c)
    all.push_back(static_cast<char>(c));
  CAF_CHECK(json::parse(json::quote(all)).has_value());
}

CAF_TEST(build reuses its buffer and nests) {
  // A text built inside another's writer gets a buffer of its own: the outer text is intact.
  auto outer = json::build([](json::writer& w) {
    w.StartObject();
    json::field(w, "a", 1);
    auto inner = json::object("b", std::string(300, 'x'), "c", true);
    json::field(w, "inner", json::raw_text{inner});
    json::field(w, "d", "after");
    w.EndObject();
  });
  CAF_CHECK_EQUAL(outer, R"({"a":1,"inner":{"b":")" + std::string(300, 'x') +
                           R"(","c":true},"d":"after"})");
  // A large text, then a small one: the second holds nothing of the first.
  auto large = json::object("big", std::string(200 * 1024, 'y'));
  CAF_CHECK_EQUAL(large.size(), 200u * 1024u + 10u);
  CAF_CHECK_EQUAL(json::object("n", 2), std::string{R"({"n":2})"});
  // A text whose writer stopped halfway (its `fn` threw) leaves nothing in the next.
  try {
    (void)json::build([](json::writer& w) {
      w.StartObject();
      w.Key("half");
      throw std::runtime_error{"stop"};
    });
  } catch (const std::runtime_error&) {
  }
  CAF_CHECK_EQUAL(json::object("n", 3), std::string{R"({"n":3})"});
  CAF_CHECK_EQUAL(json::array(std::vector<int>{1, 2}, [](json::writer& w, int i) { w.Int(i); }),
                  std::string{"[1,2]"});
}
