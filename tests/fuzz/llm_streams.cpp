// The model gateway's parsers of what a model server sends (core/llm): the OpenAI and Anthropic
// stream assemblers, their response parsers and the error-body parser. Any bytes are parsed or
// refused, never a crash; an assembler reaches the same answer however the bytes are split; an
// error body always yields an error with the status it was given.
#include <string>

#include "core/llm/anthropic_codec.hpp"
#include "core/llm/openai_codec.hpp"
#include "core/llm/wire.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

/// A summary of an outcome to compare splits by.
std::string outcome(const sreh::expected<sreh::llm::chat_response>& r, const std::string& shown) {
  if (!r)
    return "error: " + r.error().message;
  std::string s = r->id + "|" + r->model + "|" + r->text + "|" + r->raw_finish + "|" +
                  to_string(r->finish) + "|" + shown;
  for (auto& c : r->tool_calls)
    s += "|" + c.id + "," + c.name + "," + c.arguments;
  if (r->usage)
    s +=
      "|" + std::to_string(r->usage->input_tokens) + "/" + std::to_string(r->usage->output_tokens);
  return s;
}

template <class Assembler>
std::string assemble(std::string_view bytes, std::size_t chunk) {
  Assembler a;
  std::string shown;
  for (std::size_t i = 0; i < bytes.size(); i += chunk) {
    (void)a.feed_bytes(bytes.substr(i, chunk));
    shown += a.take_text();
  }
  return outcome(a.finish(), shown);
}

template <class Assembler>
void check_splits(std::string_view bytes) {
  auto whole = assemble<Assembler>(bytes, bytes.size() + 1);
  SREH_FUZZ_CHECK(whole == assemble<Assembler>(bytes, 1));
  SREH_FUZZ_CHECK(whole == assemble<Assembler>(bytes, 5));
}

} // namespace

void fuzz_one(std::string_view input) {
  if (input.empty())
    return;
  // The first byte picks the parser, so one corpus exercises them all.
  auto body = input.substr(1);
  switch (static_cast<unsigned char>(input[0]) % 5) {
  case 0:
    check_splits<sreh::llm::openai::stream_assembler>(body);
    break;
  case 1:
    check_splits<sreh::llm::anthropic::stream_assembler>(body);
    break;
  case 2: {
    // Each line a data payload, straight into the assemblers.
    sreh::llm::openai::stream_assembler o;
    sreh::llm::anthropic::stream_assembler a;
    std::size_t start = 0;
    while (start <= body.size()) {
      auto end = body.find('\n', start);
      auto line = body.substr(start, end == std::string_view::npos ? body.npos : end - start);
      (void)o.feed(line);
      (void)a.feed(line);
      if (end == std::string_view::npos)
        break;
      start = end + 1;
    }
    (void)o.finish();
    (void)a.finish();
    break;
  }
  case 3: {
    auto r1 = sreh::llm::openai::parse_response(body);
    auto r2 = sreh::llm::anthropic::parse_response(body);
    SREH_FUZZ_CHECK(r1.has_value() || r1.error().code != sreh::errc::ok);
    SREH_FUZZ_CHECK(r2.has_value() || r2.error().code != sreh::errc::ok);
    break;
  }
  default: {
    auto e = sreh::llm::parse_error_body(503, body);
    SREH_FUZZ_CHECK(e.http_status == 503);
    SREH_FUZZ_CHECK(!sreh::llm::describe(e).empty());
    break;
  }
  }
}
