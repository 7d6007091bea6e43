#define CAF_SUITE llm_anthropic
#include <caf/test/unit_test.hpp>

// Fixtures follow the official Python SDK's types (anthropics/anthropic-sdk-python v0.121.0):
// message_create_params.py / message_param.py / tool_param.py / tool_use_block_param.py /
// tool_result_block_param.py for the request; message.py, text_block.py, tool_use_block.py,
// usage.py and stop_reason.py for the response; raw_message_start_event.py,
// raw_content_block_start/delta/stop_event.py (text_delta.py, input_json_delta.py),
// raw_message_delta_event.py (message_delta_usage.py), raw_message_stop_event.py and
// _streaming.py (ping, error events) for the stream; shared_error_response.py and the
// shared_*_error.py types (overloaded_error is HTTP 529) for error bodies.

#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "core/llm/anthropic_codec.hpp"
#include "core/llm/wire.hpp"

using namespace sreh;
using namespace sreh::llm;

namespace {

std::string s(const rapidjson::Value& v) {
  return v.IsString() ? std::string{v.GetString()} : json::stringify(v);
}

rapidjson::Document parsed(const expected<std::string>& text) {
  CAF_REQUIRE(text.has_value());
  auto doc = json::parse(*text);
  CAF_REQUIRE(doc.has_value());
  return std::move(*doc);
}

std::string message_body(const std::string& content, const std::string& stop) {
  return R"({"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant",)"
         R"("model":"claude-sonnet-4-5","content":)" +
         content + R"(,"stop_reason":")" + stop +
         R"(","stop_sequence":null,"usage":{"input_tokens":2095,"output_tokens":503,)"
         R"("cache_creation_input_tokens":5,"cache_read_input_tokens":100}})";
}

} // namespace

CAF_TEST(the request has the messages api shape) {
  chat_request r;
  r.model = "claude-sonnet-4-5";
  r.system = "You are an SRE agent.";
  r.max_tokens = 2048;
  r.messages.push_back(message::user("checkout p99 is high"));
  r.messages.push_back(
    message::assistant("Checking logs and deploys.", {{"toolu_1", "logs.search", R"({"q":"oom"})"},
                                                      {"toolu_2", "deploy.history", "{}"}}));
  r.messages.push_back(message::tool("toolu_1", "3 OOM kills"));
  r.messages.push_back(message::tool("toolu_2", "unknown service", true));
  r.messages.push_back(message::user("Budget: 3 steps left."));
  r.messages.push_back(message::assistant("", {{"toolu_3", "x", "not json"}}));
  r.tools.push_back({"logs.search", "Search logs", R"({"type":"object","properties":{}})"});
  auto doc = parsed(anthropic::build_request(r));
  CAF_CHECK_EQUAL(s(doc["model"]), "claude-sonnet-4-5");
  CAF_CHECK_EQUAL(doc["max_tokens"].GetInt(), 2048);
  CAF_CHECK_EQUAL(s(doc["system"]), "You are an SRE agent."); // top level, not a message
  CAF_CHECK(!doc.HasMember("stream"));
  CAF_CHECK(!doc.HasMember("temperature"));
  auto& m = doc["messages"];
  CAF_REQUIRE_EQUAL(m.Size(), 4u);
  CAF_CHECK_EQUAL(s(m[0]), R"({"role":"user","content":"checkout p99 is high"})");
  CAF_CHECK_EQUAL(s(m[1]), R"({"role":"assistant","content":[{"type":"text","text":)"
                           R"("Checking logs and deploys."},{"type":"tool_use","id":"toolu_1",)"
                           R"("name":"logs.search","input":{"q":"oom"}},{"type":"tool_use",)"
                           R"("id":"toolu_2","name":"deploy.history","input":{}}]})");
  // Both results and the following text in one user turn, results first.
  CAF_CHECK_EQUAL(s(m[2]), R"({"role":"user","content":[{"type":"tool_result","tool_use_id":)"
                           R"("toolu_1","content":"3 OOM kills"},{"type":"tool_result",)"
                           R"("tool_use_id":"toolu_2","content":"unknown service",)"
                           R"("is_error":true},{"type":"text","text":"Budget: 3 steps left."}]})");
  CAF_CHECK_EQUAL(s(m[3]), R"({"role":"assistant","content":[{"type":"tool_use","id":"toolu_3",)"
                           R"("name":"x","input":{"arguments_text":"not json"}}]})");
  CAF_CHECK_EQUAL(s(doc["tools"]), R"([{"name":"logs.search","description":"Search logs",)"
                                   R"("input_schema":{"type":"object","properties":{}}}])");
}

CAF_TEST(a streamed request with temperature and what is refused) {
  chat_request r;
  r.model = "m";
  r.stream = true;
  r.temperature = 0.0;
  r.messages.push_back(message::user("hi"));
  auto doc = parsed(anthropic::build_request(r));
  CAF_CHECK_EQUAL(doc["stream"].GetBool(), true);
  CAF_CHECK_EQUAL(doc["temperature"].GetDouble(), 0.0);
  CAF_CHECK(!doc.HasMember("system"));
  CAF_CHECK(!doc.HasMember("tools"));
  r.max_tokens = 0;
  auto refused = anthropic::build_request(r);
  CAF_REQUIRE(!refused.has_value());
  CAF_CHECK_EQUAL(refused.error().message, "max_tokens must be at least 1");
  r.max_tokens = 1;
  r.tools.push_back({"t", "", "\"string\""});
  CAF_CHECK(!anthropic::build_request(r).has_value());
}

CAF_TEST(text and tool use blocks of a response) {
  auto r = anthropic::parse_response(message_body(
    R"([{"type":"text","text":"I'll check the logs."},{"type":"tool_use","id":)"
    R"("toolu_01A09q90qw90lq917835lq9","name":"logs.search","input":{"q":"oom","limit":5}},)"
    R"({"type":"thinking","thinking":"…","signature":"x"}])",
    "tool_use"));
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->id, "msg_013Zva2CMHLNnXjNJJKqJ2EF");
  CAF_CHECK_EQUAL(r->model, "claude-sonnet-4-5");
  CAF_CHECK_EQUAL(r->text, "I'll check the logs.");
  CAF_CHECK(r->finish == finish_reason::tool_calls);
  CAF_REQUIRE_EQUAL(r->tool_calls.size(), 1u);
  CAF_CHECK_EQUAL(r->tool_calls[0].id, "toolu_01A09q90qw90lq917835lq9");
  CAF_CHECK_EQUAL(r->tool_calls[0].arguments, R"({"q":"oom","limit":5})");
  CAF_REQUIRE(r->usage.has_value());
  CAF_CHECK_EQUAL(r->usage->input_tokens, 2200); // input + cache creation + cache read
  CAF_CHECK_EQUAL(r->usage->output_tokens, 503);
}

CAF_TEST(every stop reason normalizes with the raw value kept) {
  // stop_reason.py: end_turn, max_tokens, stop_sequence, tool_use, pause_turn, refusal,
  // model_context_window_exceeded.
  std::vector<std::pair<std::string, finish_reason>> cases = {
    {"end_turn", finish_reason::stop},
    {"max_tokens", finish_reason::length},
    {"stop_sequence", finish_reason::stop},
    {"tool_use", finish_reason::tool_calls},
    {"pause_turn", finish_reason::other},
    {"refusal", finish_reason::refusal},
    {"model_context_window_exceeded", finish_reason::length},
    {"something_new", finish_reason::other},
  };
  for (auto& [raw, want] : cases) {
    auto r = anthropic::parse_response(message_body(R"([{"type":"text","text":"x"}])", raw));
    CAF_REQUIRE(r.has_value());
    CAF_CHECK_EQUAL(r->raw_finish, raw);
    CAF_CHECK_EQUAL(to_string(r->finish), to_string(want));
  }
}

CAF_TEST(error bodies and bad responses) {
  auto overloaded = parse_error_body(529, R"({"type":"error","error":{"type":"overloaded_error",)"
                                          R"("message":"Overloaded"},"request_id":"req_011"})");
  CAF_CHECK_EQUAL(overloaded.http_status, 529);
  CAF_CHECK_EQUAL(overloaded.type, "overloaded_error");
  CAF_CHECK_EQUAL(overloaded.message, "Overloaded");
  CAF_CHECK_EQUAL(describe(overloaded), "HTTP 529 overloaded_error: Overloaded");
  auto bad = anthropic::parse_response(
    R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}})");
  CAF_REQUIRE(!bad.has_value());
  CAF_CHECK_EQUAL(bad.error().message, "invalid_request_error: max_tokens: Field required");
  CAF_CHECK(!anthropic::parse_response(R"({"type":"message"})").has_value());
  CAF_CHECK(!anthropic::parse_response("{").has_value());
}

CAF_TEST(the stream events reassemble text and tool input) {
  anthropic::stream_assembler a;
  std::vector<std::string> events = {
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",)"
    R"("content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,)"
    R"("usage":{"input_tokens":472,"output_tokens":2}}})",
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
    R"({"type":"ping"})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}})",
    R"({"type":"content_block_stop","index":0})",
    R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use",)"
    R"("id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"logs.search","input":{}}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
    R"("partial_json":""}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
    R"("partial_json":"{\"q\": \"oo"}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
    R"("partial_json":"m\"}"}})",
    R"({"type":"content_block_stop","index":1})",
    R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use",)"
    R"("id":"toolu_2","name":"deploy.history","input":{}}})",
    R"({"type":"content_block_stop","index":2})",
    R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},)"
    R"("usage":{"output_tokens":89}})",
    R"({"type":"message_stop"})",
  };
  std::string shown;
  for (auto& e : events) {
    CAF_CHECK(!a.feed(e));
    shown += a.take_text();
  }
  CAF_CHECK_EQUAL(shown, "Let me look.");
  CAF_CHECK(a.done());
  auto r = a.finish();
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->id, "msg_1");
  CAF_CHECK_EQUAL(r->text, "Let me look.");
  CAF_CHECK(r->finish == finish_reason::tool_calls);
  CAF_REQUIRE_EQUAL(r->tool_calls.size(), 2u);
  CAF_CHECK_EQUAL(r->tool_calls[0].name, "logs.search");
  CAF_CHECK_EQUAL(r->tool_calls[0].arguments, R"({"q": "oom"})");
  CAF_CHECK_EQUAL(r->tool_calls[1].arguments, "{}"); // no deltas: the start's input
  CAF_REQUIRE(r->usage.has_value());
  CAF_CHECK_EQUAL(r->usage->input_tokens, 472);
  CAF_CHECK_EQUAL(r->usage->output_tokens, 89); // cumulative: replaces the start's 2
}

CAF_TEST(the stream as sse bytes with event lines split anywhere) {
  std::string wire =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\","
    "\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Done: the deploy.\"}}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"max_tokens\"},\"usage\":{\"output_tokens\":7,\"input_tokens\":12}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{5}, wire.size()}) {
    anthropic::stream_assembler a;
    for (std::size_t i = 0; i < wire.size(); i += step)
      CAF_CHECK(!a.feed_bytes(std::string_view{wire}.substr(i, step)));
    auto r = a.finish();
    CAF_REQUIRE(r.has_value());
    CAF_CHECK_EQUAL(r->text, "Done: the deploy.");
    CAF_CHECK(r->finish == finish_reason::length);
    CAF_CHECK_EQUAL(r->usage->input_tokens, 12);
    CAF_CHECK_EQUAL(r->usage->output_tokens, 7);
  }
}

CAF_TEST(an error event or a cut stream fails the response) {
  anthropic::stream_assembler a;
  CAF_CHECK(!a.feed(R"({"type":"message_start","message":{"id":"m","content":[]}})"));
  auto err =
    a.feed(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
  CAF_CHECK_EQUAL(err.message, "model stream error: overloaded_error: Overloaded");
  CAF_REQUIRE(a.stream_error().has_value());
  CAF_CHECK_EQUAL(a.stream_error()->type, "overloaded_error");
  CAF_CHECK(!a.finish().has_value());
  anthropic::stream_assembler cut;
  CAF_CHECK(!cut.feed(R"({"type":"message_start","message":{"id":"m","content":[]}})"));
  auto early = cut.finish();
  CAF_REQUIRE(!early.has_value());
  CAF_CHECK_EQUAL(early.error().message, "model stream ended before the response was complete");
  // Deltas for blocks never started, unknown events and malformed ones do not crash.
  CAF_CHECK(!cut.feed(R"({"type":"content_block_delta","index":9,"delta":{"type":"text_delta"}})"));
  CAF_CHECK(!cut.feed(R"({"type":"brand_new_event"})"));
  CAF_CHECK(cut.feed("{"));
  CAF_CHECK(cut.feed("3"));
}
