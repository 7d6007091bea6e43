#include "actors/gateway/route_call.hpp"

#include "core/llm/wire.hpp"

namespace sreh::actors {

std::string redact(std::string text, std::string_view secret) {
  if (secret.empty())
    return text;
  for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "[redacted]");
  return text;
}

expected<route_call> route_call::make(const config::model_route& r, llm::chat_request req,
                                      std::chrono::milliseconds total) {
  route_call c;
  c.provider_ = r.provider;
  c.key_ = r.api_key;
  req.model = r.model;
  req.max_tokens = r.max_tokens;
  req.stream = r.stream;
  auto& t = c.request_;
  expected<std::string> body = std::string{};
  if (r.provider == "anthropic") {
    body = llm::anthropic::build_request(req);
    t.url = r.base_url + "/v1/messages";
    t.headers = {{"anthropic-version", llm::anthropic::api_version}};
    if (!r.api_key.empty())
      t.headers.emplace_back("x-api-key", r.api_key);
    if (r.stream)
      c.stream_.emplace<llm::anthropic::stream_assembler>();
  } else {
    llm::openai::options opt;
    opt.max_completion_tokens = r.max_completion_tokens;
    body = llm::openai::build_request(req, opt);
    t.url = r.base_url + "/chat/completions";
    if (!r.api_key.empty())
      t.headers.emplace_back("Authorization", "Bearer " + r.api_key);
    if (r.stream)
      c.stream_.emplace<llm::openai::stream_assembler>();
  }
  if (!body)
    return sreh::error{body.error().code, "cannot build the request: " + body.error().message};
  if (r.stream)
    t.headers.emplace_back("Accept", "text/event-stream");
  t.body = std::move(*body);
  t.connect_timeout = std::chrono::milliseconds{r.connect_timeout_ms};
  t.read_timeout = std::chrono::milliseconds{r.read_timeout_ms};
  t.total_timeout = total;
  t.ca_file = r.ca_file;
  return c;
}

std::string route_call::feed(std::string_view bytes) {
  std::string fresh;
  std::visit(
    [&](auto& a) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(a)>, std::monostate>) {
        (void)a.feed_bytes(bytes);
        fresh = a.take_text();
      }
    },
    stream_);
  return fresh;
}

expected<llm::chat_response> route_call::finish(const transport_reply& reply, std::string& what) {
  expected<llm::chat_response> parsed = sreh::error{errc::unavailable, "no response"};
  if (reply.error) {
    what = redact(reply.error.message, key_);
    return sreh::error{reply.error.code, what};
  }
  if (reply.status < 200 || reply.status >= 300) {
    what = redact(llm::describe(llm::parse_error_body(reply.status, reply.body)), key_);
    return sreh::error{errc::unavailable, what};
  }
  std::visit(
    [&](auto& a) {
      using A = std::decay_t<decltype(a)>;
      if constexpr (std::is_same_v<A, std::monostate>)
        parsed = provider_ == "anthropic" ? llm::anthropic::parse_response(reply.body)
                                          : llm::openai::parse_response(reply.body);
      else
        parsed = a.finish();
    },
    stream_);
  if (!parsed)
    what = redact("HTTP " + std::to_string(reply.status) + " but " + parsed.error().message, key_);
  return parsed;
}

} // namespace sreh::actors
