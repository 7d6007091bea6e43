#pragma once
// The wire side of one call on one model route: the HTTP request in the route's format (OpenAI
// chat completions or Anthropic Messages) and the assembly of its answer, whole or streamed.
// Shared by the gateway's calls and its checks (`sreh models check`).

#include <string>
#include <string_view>
#include <variant>

#include "actors/gateway/model_transport.hpp"
#include "config/node/node_config.hpp"
#include "core/llm/anthropic_codec.hpp"
#include "core/llm/openai_codec.hpp"
#include "core/llm/types.hpp"

namespace sreh::actors {

/// Not thread-safe: owned by one call, used on the transport's thread once posted.
class route_call {
 public:
  /// The request of `req` on route `r`, its model, max_tokens and stream set from the route;
  /// its total timeout is `total` (what is left of the route's own).
  [[nodiscard]] static expected<route_call>
  make(const config::model_route& r, llm::chat_request req, std::chrono::milliseconds total);

  /// The request to post (moved out once).
  [[nodiscard]] transport_request take_request() { return std::move(request_); }
  [[nodiscard]] bool streamed() const { return !std::holds_alternative<std::monostate>(stream_); }

  /// Bytes of a streamed answer; returns the text that arrived with them.
  [[nodiscard]] std::string feed(std::string_view bytes);

  /// The response of a finished call; else `what` says why not (the network error, the HTTP
  /// status with the server's message, a body that does not parse), the route's key redacted.
  [[nodiscard]] expected<llm::chat_response> finish(const transport_reply& reply,
                                                    std::string& what);

 private:
  route_call() = default;
  std::string provider_;
  std::string key_;
  transport_request request_;
  std::variant<std::monostate, llm::openai::stream_assembler, llm::anthropic::stream_assembler>
    stream_;
};

/// `text` with every occurrence of `secret` replaced by "[redacted]" (a server may quote the key
/// it refused).
[[nodiscard]] std::string redact(std::string text, std::string_view secret);

} // namespace sreh::actors
