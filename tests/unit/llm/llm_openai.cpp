#define CAF_SUITE llm_openai
#include <caf/test/unit_test.hpp>

// Fixtures follow the official OpenAPI spec (openai/openai-openapi, info.version 2.3.0):
// CreateChatCompletionRequest, ChatCompletionTool / FunctionObject,
// ChatCompletionRequestAssistantMessage / ToolMessage, ChatCompletionStreamOptions,
// CreateChatCompletionResponse (its x-oaiMeta example), ErrorResponse / Error; and the server
// variants of vLLM, Ollama and llama.cpp server named in docs/models.md.

#include <string>

#include "core/base/json.hpp"
#include "core/llm/openai_codec.hpp"
#include "core/llm/wire.hpp"

using namespace sreh;
using namespace sreh::llm;

namespace {

chat_request sample_request() {
  chat_request r;
  r.model = "gpt-4o-mini";
  r.system = "You are an SRE agent.";
  r.messages.push_back(message::user("checkout p99 is high"));
  r.messages.push_back(message::assistant(
    "", {{"call_1", "metrics.query", R"({"query":"p99{service=\"checkout\"}"})"}}));
  r.messages.push_back(message::tool("call_1", R"({"value":1.2})"));
  r.messages.push_back(message::tool("call_2", "no such entity", true));
  r.tools.push_back({"metrics.query", "Query a metric",
                     R"({"type":"object","properties":{"query":{"type":"string"}},)"
                     R"("required":["query"]})"});
  r.max_tokens = 512;
  r.temperature = 0.25;
  return r;
}

rapidjson::Document parsed(const expected<std::string>& text) {
  CAF_REQUIRE(text.has_value());
  auto doc = json::parse(*text);
  CAF_REQUIRE(doc.has_value());
  return std::move(*doc);
}

std::string s(const rapidjson::Value& v) {
  return v.IsString() ? std::string{v.GetString()} : json::stringify(v);
}

} // namespace

CAF_TEST(the request has the shape of the spec) {
  auto doc = parsed(openai::build_request(sample_request()));
  CAF_CHECK_EQUAL(s(doc["model"]), "gpt-4o-mini");
  auto& msgs = doc["messages"];
  CAF_REQUIRE_EQUAL(msgs.Size(), 5u);
  CAF_CHECK_EQUAL(s(msgs[0]), R"({"role":"system","content":"You are an SRE agent."})");
  CAF_CHECK_EQUAL(s(msgs[1]), R"({"role":"user","content":"checkout p99 is high"})");
  // Assistant message: content null when only tool_calls; each call typed "function" with the
  // arguments as a JSON string.
  CAF_CHECK_EQUAL(s(msgs[2]), R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_1",)"
                              R"("type":"function","function":{"name":"metrics.query",)"
                              R"("arguments":"{\"query\":\"p99{service=\\\"checkout\\\"}\"}"}}]})");
  CAF_CHECK_EQUAL(s(msgs[3]),
                  R"({"role":"tool","tool_call_id":"call_1","content":"{\"value\":1.2}"})");
  // The format has no error flag: the text says it.
  CAF_CHECK_EQUAL(s(msgs[4]),
                  R"({"role":"tool","tool_call_id":"call_2","content":"error: no such entity"})");
  CAF_CHECK_EQUAL(s(doc["tools"]),
                  R"([{"type":"function","function":{"name":"metrics.query","description":)"
                  R"("Query a metric","parameters":{"type":"object","properties":{"query":)"
                  R"({"type":"string"}},"required":["query"]}}}])");
  CAF_CHECK_EQUAL(doc["max_tokens"].GetInt(), 512);
  CAF_CHECK_EQUAL(doc["temperature"].GetDouble(), 0.25);
  CAF_CHECK_EQUAL(doc["stream"].GetBool(), false);
  CAF_CHECK(!doc.HasMember("stream_options"));
  CAF_CHECK(!doc.HasMember("tool_choice")); // Ollama has none; auto is the default anyway
}

CAF_TEST(a streamed request asks for usage and can name max_completion_tokens) {
  auto req = sample_request();
  req.stream = true;
  req.temperature.reset();
  auto doc = parsed(openai::build_request(req, {true}));
  CAF_CHECK_EQUAL(doc["stream"].GetBool(), true);
  CAF_CHECK_EQUAL(s(doc["stream_options"]), R"({"include_usage":true})");
  CAF_CHECK_EQUAL(doc["max_completion_tokens"].GetInt(), 512);
  CAF_CHECK(!doc.HasMember("max_tokens"));
  CAF_CHECK(!doc.HasMember("temperature"));
}

CAF_TEST(a tool whose parameters are not an object is refused) {
  auto req = sample_request();
  req.tools[0].parameters = "[1,2";
  auto r = openai::build_request(req);
  CAF_REQUIRE(!r.has_value());
  CAF_CHECK_EQUAL(r.error().message, "tool 'metrics.query': parameters must be a JSON object");
}

CAF_TEST(the spec example response parses) {
  // CreateChatCompletionResponse's x-oaiMeta example (content shortened).
  auto r = openai::parse_response(R"({
    "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion",
    "created": 1741570283, "model": "gpt-4o-2024-08-06",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "The image shows a path.",
      "refusal": null, "annotations": []}, "logprobs": null, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1117, "completion_tokens": 46, "total_tokens": 1163,
      "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0}},
    "service_tier": "default", "system_fingerprint": "fp_fc9f1d7035"})");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->id, "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG");
  CAF_CHECK_EQUAL(r->model, "gpt-4o-2024-08-06");
  CAF_CHECK_EQUAL(r->text, "The image shows a path.");
  CAF_CHECK(r->finish == finish_reason::stop);
  CAF_CHECK_EQUAL(r->raw_finish, "stop");
  CAF_REQUIRE(r->usage.has_value());
  CAF_CHECK_EQUAL(r->usage->input_tokens, 1117);
  CAF_CHECK_EQUAL(r->usage->output_tokens, 46);
  CAF_CHECK(r->tool_calls.empty());
}

CAF_TEST(a response with several tool calls) {
  // ChatCompletionMessageToolCall: {id, type: function, function: {name, arguments}}.
  auto r = openai::parse_response(R"({"id":"chatcmpl-1","object":"chat.completion","created":1,
    "model":"m","choices":[{"index":0,"finish_reason":"tool_calls","logprobs":null,
    "message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[
      {"id":"call_a","type":"function","function":{"name":"logs.search","arguments":"{\"q\":\"oom\"}"}},
      {"id":"call_b","type":"function","function":{"name":"deploy.history","arguments":""}}]}}]})");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK(r->finish == finish_reason::tool_calls);
  CAF_CHECK_EQUAL(r->text, "");
  CAF_REQUIRE_EQUAL(r->tool_calls.size(), 2u);
  CAF_CHECK_EQUAL(r->tool_calls[0].id, "call_a");
  CAF_CHECK_EQUAL(r->tool_calls[0].name, "logs.search");
  CAF_CHECK_EQUAL(r->tool_calls[0].arguments, R"({"q":"oom"})");
  CAF_CHECK_EQUAL(r->tool_calls[1].arguments, "{}"); // empty arguments: no arguments
  CAF_CHECK(!r->usage.has_value());
}

CAF_TEST(server variants of a non streamed answer) {
  // Ollama: no id on the call, arguments as an object, finish "stop" with tool calls.
  auto r = openai::parse_response(R"({"id":"chatcmpl-9","model":"llama3.1","choices":[{"index":0,
    "message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"k8s.pods",
    "arguments":{"namespace":"shop"}}}]},"finish_reason":"stop"}]})");
  CAF_REQUIRE(r.has_value());
  CAF_REQUIRE_EQUAL(r->tool_calls.size(), 1u);
  CAF_CHECK_EQUAL(r->tool_calls[0].id, "call_0");
  CAF_CHECK_EQUAL(r->tool_calls[0].arguments, R"({"namespace":"shop"})");
  CAF_CHECK(r->finish == finish_reason::tool_calls);
  CAF_CHECK_EQUAL(r->raw_finish, "stop");
}

CAF_TEST(finish reasons normalize and refusals are refusals) {
  auto with = [](const std::string& finish, const std::string& refusal = "null") {
    return openai::parse_response(R"({"id":"x","model":"m","choices":[{"index":0,"message":{)"
                                  R"("role":"assistant","content":"partial","refusal":)" +
                                  refusal + R"(},"finish_reason":)" + finish + "}]}");
  };
  CAF_CHECK(with(R"("length")")->finish == finish_reason::length);
  CAF_CHECK(with(R"("content_filter")")->finish == finish_reason::refusal);
  CAF_CHECK(with(R"("function_call")")->finish == finish_reason::tool_calls);
  auto odd = with(R"("eos_token")");
  CAF_CHECK(odd->finish == finish_reason::other);
  CAF_CHECK_EQUAL(odd->raw_finish, "eos_token");
  CAF_CHECK(with("null")->finish == finish_reason::other);
  auto refused = with(R"("stop")", R"("I can't help with that.")");
  CAF_CHECK(refused->finish == finish_reason::refusal);
  CAF_CHECK_EQUAL(refused->refusal, "I can't help with that.");
}

CAF_TEST(malformed responses are errors not crashes) {
  CAF_CHECK(!openai::parse_response("").has_value());
  CAF_CHECK(!openai::parse_response("[]").has_value());
  auto no_choices = openai::parse_response(R"({"choices":[]})");
  CAF_REQUIRE(!no_choices.has_value());
  CAF_CHECK_EQUAL(no_choices.error().message, "response has no choices");
  auto no_message = openai::parse_response(R"({"choices":[{"index":0}]})");
  CAF_REQUIRE(!no_message.has_value());
  CAF_CHECK_EQUAL(no_message.error().message, "response choice has no message");
  auto err = openai::parse_response(R"({"error":{"message":"boom","type":"server_error",)"
                                    R"("param":null,"code":null}})");
  CAF_REQUIRE(!err.has_value());
  CAF_CHECK_EQUAL(err.error().message, "server_error: boom");
}

CAF_TEST(error bodies nested or flat with string or integer code) {
  // ErrorResponse {error: Error {code (string|null), message, param, type}}.
  auto openai_err = parse_error_body(
    429, R"({"error":{"message":"Rate limit reached","type":"requests","param":null,)"
         R"("code":"rate_limit_exceeded"}})");
  CAF_CHECK_EQUAL(openai_err.http_status, 429);
  CAF_CHECK_EQUAL(openai_err.type, "requests");
  CAF_CHECK_EQUAL(openai_err.message, "Rate limit reached");
  CAF_CHECK_EQUAL(openai_err.code, "rate_limit_exceeded");
  CAF_CHECK_EQUAL(describe(openai_err),
                  "HTTP 429 requests: Rate limit reached (code rate_limit_exceeded)");
  // vLLM before 0.10.1: flat, integer code.
  auto vllm_old = parse_error_body(400, R"({"object":"error","message":"tool_choice auto )"
                                        R"(requires --enable-auto-tool-choice","type":)"
                                        R"("BadRequestError","param":null,"code":400})");
  CAF_CHECK_EQUAL(vllm_old.type, "BadRequestError");
  CAF_CHECK_EQUAL(vllm_old.code, "400");
  CAF_CHECK_EQUAL(vllm_old.message, "tool_choice auto requires --enable-auto-tool-choice");
  // vLLM later: nested, integer code.
  auto vllm_new = parse_error_body(
    400, R"({"error":{"message":"bad","type":"BadRequestError","param":null,"code":400}})");
  CAF_CHECK_EQUAL(vllm_new.code, "400");
  // llama.cpp server.
  auto llama = parse_error_body(400, R"({"error":{"code":400,"message":"the request exceeds )"
                                     R"(the available context size","type":)"
                                     R"("exceed_context_size_error","n_prompt_tokens":9000}})");
  CAF_CHECK_EQUAL(llama.type, "exceed_context_size_error");
  CAF_CHECK_EQUAL(llama.code, "400");
  // Ollama: the error as a plain string.
  auto ollama = parse_error_body(404, R"({"error":"model \"llama9\" not found, try pulling it"})");
  CAF_CHECK_EQUAL(ollama.message, "model \"llama9\" not found, try pulling it");
  CAF_CHECK_EQUAL(ollama.type, "");
  // A proxy's HTML page or nothing at all.
  auto html = parse_error_body(502, "<html>Bad Gateway</html>\r\n");
  CAF_CHECK_EQUAL(html.message, "<html>Bad Gateway</html>");
  CAF_CHECK_EQUAL(describe(parse_error_body(503, "")), "HTTP 503");
  auto odd = parse_error_body(500, R"({"detail":"x"})");
  CAF_CHECK_EQUAL(odd.message, R"({"detail":"x"})");
}

CAF_TEST(a long non JSON error body is cut on a character boundary) {
  std::string body(299, 'a');
  body += "é and more"; // 'é' is two bytes at offsets 299 and 300
  auto e = parse_error_body(500, body);
  CAF_CHECK_EQUAL(e.message.size(), 299u);
}
