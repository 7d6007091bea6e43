#define CAF_SUITE llm_openai_stream
#include <caf/test/unit_test.hpp>

// Chunks follow CreateChatCompletionStreamResponse / ChatCompletionStreamResponseDelta /
// ChatCompletionMessageToolCallChunk of the official OpenAPI spec (openai/openai-openapi 2.3.0,
// the x-oaiMeta example for text), and the variants of vLLM, Ollama and llama.cpp server that
// docs/models.md lists.

#include <string>
#include <vector>

#include "core/llm/openai_codec.hpp"

using namespace sreh;
using namespace sreh::llm;

namespace {

std::string chunk(const std::string& delta, const std::string& finish = "null") {
  return R"({"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
         R"("model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,)"
         R"("delta":)" +
         delta + R"(,"logprobs":null,"finish_reason":)" + finish + "}]}";
}

const std::string usage_chunk =
  R"({"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
  R"("model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":17,)"
  R"("total_tokens":137}})";

chat_response run(const std::vector<std::string>& payloads) {
  openai::stream_assembler a;
  for (auto& p : payloads)
    CAF_CHECK(!a.feed(p));
  auto r = a.finish();
  CAF_REQUIRE(r.has_value());
  return *r;
}

} // namespace

CAF_TEST(text deltas reassemble and usage comes in the last chunk) {
  openai::stream_assembler a;
  CAF_CHECK(!a.feed(chunk(R"({"role":"assistant","content":""})")));
  CAF_CHECK(!a.feed(chunk(R"({"content":"Hello"})")));
  CAF_CHECK_EQUAL(a.take_text(), "Hello");
  CAF_CHECK(!a.feed(chunk(R"({"content":" world"})")));
  CAF_CHECK(!a.feed(chunk("{}", R"("stop")")));
  CAF_CHECK(!a.feed(usage_chunk)); // empty choices, usage
  CAF_CHECK(!a.done());
  CAF_CHECK(!a.feed("[DONE]"));
  CAF_CHECK(a.done());
  CAF_CHECK_EQUAL(a.take_text(), " world");
  CAF_CHECK_EQUAL(a.take_text(), "");
  auto r = a.finish();
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->id, "chatcmpl-123");
  CAF_CHECK_EQUAL(r->model, "gpt-4o-mini");
  CAF_CHECK_EQUAL(r->text, "Hello world");
  CAF_CHECK(r->finish == finish_reason::stop);
  CAF_REQUIRE(r->usage.has_value());
  CAF_CHECK_EQUAL(r->usage->input_tokens, 120);
  CAF_CHECK_EQUAL(r->usage->output_tokens, 17);
}

CAF_TEST(usage may be absent) {
  auto r = run({chunk(R"({"content":"ok"})"), chunk("{}", R"("stop")"), "[DONE]"});
  CAF_CHECK(!r.usage.has_value());
}

CAF_TEST(tool calls in fragments by index and two in parallel) {
  // OpenAI: the first chunk of a call has id, type and name; the rest only argument fragments.
  auto r = run({
    chunk(R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a",)"
          R"("type":"function","function":{"name":"logs.search","arguments":""}}]})"),
    chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]})"),
    chunk(R"({"tool_calls":[{"index":1,"id":"call_b","type":"function",)"
          R"("function":{"name":"deploy.history","arguments":"{\"serv"}}]})"),
    chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"\"oom\"}"}}]})"),
    chunk(R"({"tool_calls":[{"index":1,"function":{"arguments":"ice\":\"checkout\"}"}}]})"),
    chunk("{}", R"("tool_calls")"),
    usage_chunk,
    "[DONE]",
  });
  CAF_CHECK(r.finish == finish_reason::tool_calls);
  CAF_REQUIRE_EQUAL(r.tool_calls.size(), 2u);
  CAF_CHECK_EQUAL(r.tool_calls[0].id, "call_a");
  CAF_CHECK_EQUAL(r.tool_calls[0].name, "logs.search");
  CAF_CHECK_EQUAL(r.tool_calls[0].arguments, R"({"q":"oom"})");
  CAF_CHECK_EQUAL(r.tool_calls[1].id, "call_b");
  CAF_CHECK_EQUAL(r.tool_calls[1].name, "deploy.history");
  CAF_CHECK_EQUAL(r.tool_calls[1].arguments, R"({"service":"checkout"})");
}

CAF_TEST(vllm first tool chunk without type) {
  auto r = run({
    chunk(R"({"tool_calls":[{"index":0,"id":"chatcmpl-tool-1",)"
          R"("function":{"name":"k8s.pods","arguments":""}}]})"),
    chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})"),
    chunk("{}", R"("tool_calls")"),
    "[DONE]",
  });
  CAF_REQUIRE_EQUAL(r.tool_calls.size(), 1u);
  CAF_CHECK_EQUAL(r.tool_calls[0].id, "chatcmpl-tool-1");
  CAF_CHECK_EQUAL(r.tool_calls[0].arguments, "{}");
}

CAF_TEST(ollama whole calls with index 0 for each and no id) {
  auto r = run({
    chunk(R"({"role":"assistant","content":"","tool_calls":[{"index":0,"function":)"
          R"({"name":"logs.search","arguments":"{\"q\":\"oom\"}"}}]})"),
    chunk(R"({"tool_calls":[{"index":0,"function":{"name":"deploy.history",)"
          R"("arguments":"{}"}}]})"),
    chunk(R"({"content":""})", R"("tool_calls")"),
    "[DONE]",
  });
  CAF_REQUIRE_EQUAL(r.tool_calls.size(), 2u);
  CAF_CHECK_EQUAL(r.tool_calls[0].name, "logs.search");
  CAF_CHECK_EQUAL(r.tool_calls[0].id, "call_0"); // made up: a tool result must name it
  CAF_CHECK_EQUAL(r.tool_calls[1].name, "deploy.history");
  CAF_CHECK_EQUAL(r.tool_calls[1].id, "call_1");
}

CAF_TEST(calls without index continue the last one unless a new id or name says otherwise) {
  auto r = run({
    chunk(R"({"tool_calls":[{"id":"c1","function":{"name":"a","arguments":"{\"x\""}}]})"),
    chunk(R"({"tool_calls":[{"function":{"arguments":":1}"}}]})"),
    chunk(R"({"tool_calls":[{"id":"c2","function":{"name":"b","arguments":"{}"}}]})"),
    chunk(R"({"tool_calls":[{"id":"c1","function":{"arguments":""}}]})"),
    chunk("{}", R"("tool_calls")"),
  }); // no [DONE]: the finish_reason suffices
  CAF_REQUIRE_EQUAL(r.tool_calls.size(), 2u);
  CAF_CHECK_EQUAL(r.tool_calls[0].arguments, R"({"x":1})");
  CAF_CHECK_EQUAL(r.tool_calls[1].name, "b");
}

CAF_TEST(same id repeated with its name is the same call) {
  auto r = run({
    chunk(R"({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"a",)"
          R"("arguments":"{\"x\":"}}]})"),
    chunk(R"({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"a",)"
          R"("arguments":"2}"}}]})"),
    chunk("{}", R"("tool_calls")"),
    "[DONE]",
  });
  CAF_REQUIRE_EQUAL(r.tool_calls.size(), 1u);
  CAF_CHECK_EQUAL(r.tool_calls[0].arguments, R"({"x":2})");
}

CAF_TEST(llama cpp sends usage unasked with every chunk and the last one counts) {
  auto with_usage = [](const std::string& delta, const std::string& finish, int out) {
    auto c = chunk(delta, finish);
    c.pop_back();
    return c + R"(,"usage":{"prompt_tokens":50,"completion_tokens":)" + std::to_string(out) +
           R"(,"total_tokens":0},"timings":{"predicted_ms":12.5}})";
  };
  auto r = run({with_usage(R"({"content":"a"})", "null", 1),
                with_usage(R"({"content":"b"})", R"("stop")", 2), "[DONE]"});
  CAF_CHECK_EQUAL(r.text, "ab");
  CAF_REQUIRE(r.usage.has_value());
  CAF_CHECK_EQUAL(r.usage->output_tokens, 2);
}

CAF_TEST(refusal deltas) {
  auto r = run({chunk(R"({"refusal":"I can't"})"), chunk(R"({"refusal":" do that."})"),
                chunk("{}", R"("stop")"), "[DONE]"});
  CAF_CHECK(r.finish == finish_reason::refusal);
  CAF_CHECK_EQUAL(r.refusal, "I can't do that.");
}

CAF_TEST(mid stream errors as data or as an error field) {
  openai::stream_assembler a;
  CAF_CHECK(!a.feed(chunk(R"({"content":"par"})")));
  auto err = a.feed(R"({"error":{"code":500,"message":"slot unavailable","type":"server_error"}})");
  CAF_CHECK(err);
  CAF_CHECK_EQUAL(err.message, "model stream error: server_error: slot unavailable (code 500)");
  CAF_REQUIRE(a.stream_error().has_value());
  CAF_CHECK_EQUAL(a.stream_error()->type, "server_error");
  CAF_CHECK(!a.finish().has_value());
  // Older llama.cpp: an `error:` SSE field.
  openai::stream_assembler b;
  auto bytes = "data: " + chunk(R"({"content":"x"})") +
               "\n\nerror: {\"code\":400,\"message\":\"context full\",\"type\":"
               "\"exceed_context_size_error\"}\n\n";
  CAF_CHECK(b.feed_bytes(bytes));
  CAF_REQUIRE(b.stream_error().has_value());
  CAF_CHECK_EQUAL(b.stream_error()->type, "exceed_context_size_error");
  CAF_CHECK_EQUAL(b.stream_error()->code, "400");
  CAF_CHECK(!b.finish().has_value());
}

CAF_TEST(a cut stream is unavailable and a bad chunk an error that keeps the rest) {
  openai::stream_assembler a;
  CAF_CHECK(!a.feed(chunk(R"({"content":"half"})")));
  auto r = a.finish();
  CAF_REQUIRE(!r.has_value());
  CAF_CHECK(r.error().code == errc::unavailable);
  CAF_CHECK_EQUAL(r.error().message, "model stream ended before the response was complete");
  CAF_CHECK(a.feed(R"({"choices":[{"index":0,"delta":{"content":)"));
  CAF_CHECK(a.feed("[1]"));
  CAF_CHECK(!a.feed("   "));
  CAF_CHECK(!a.feed(chunk("{}", R"("length")")));
  auto done = a.finish();
  CAF_REQUIRE(done.has_value());
  CAF_CHECK_EQUAL(done->text, "half");
  CAF_CHECK(done->finish == finish_reason::length);
}

CAF_TEST(raw bytes split anywhere give the same answer) {
  std::string wire = ": keep-alive\r\n\r\ndata: " + chunk(R"({"content":"Hé"})") +
                     "\r\n\r\ndata: " + chunk(R"({"content":"llo"})", R"("stop")") +
                     "\n\ndata: " + usage_chunk + "\r\rdata: [DONE]\n\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{3}, std::size_t{7}, wire.size()}) {
    openai::stream_assembler a;
    for (std::size_t i = 0; i < wire.size(); i += step)
      CAF_CHECK(!a.feed_bytes(std::string_view{wire}.substr(i, step)));
    CAF_CHECK(a.done());
    auto r = a.finish();
    CAF_REQUIRE(r.has_value());
    CAF_CHECK_EQUAL(r->text, "Héllo");
    CAF_CHECK_EQUAL(r->usage->input_tokens, 120);
  }
}

CAF_TEST(sse decoder joins data lines and flushes at the end) {
  sse_parser d;
  std::vector<sse_event> got;
  auto on = [&](const sse_event& m) {
    got.push_back(m);
    return true;
  };
  CAF_CHECK(
    d.feed("event: message_start\ndata: a\ndata:b\nid: 1\nretry: 5\n\n:c\n\ndata: tail", on));
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].event, "message_start");
  CAF_CHECK_EQUAL(got[0].data, "a\nb");
  CAF_CHECK(d.flush(on));
  CAF_REQUIRE_EQUAL(got.size(), 2u);
  CAF_CHECK_EQUAL(got[1].data, "tail");
  CAF_CHECK(!d.feed("data: x\n\ndata: y\n\n", [](const sse_event&) { return false; }));
}
