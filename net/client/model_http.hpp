#pragma once
// The model gateway's HTTP/1.1 client (actors/gateway/model_transport.hpp): asynchronous Beast
// over plain TCP or TLS (net/http/maybe_tls_stream.hpp), on one io_context thread of its own,
// with keep-alive connections pooled per server.

#include <memory>

#include "actors/gateway/model_transport.hpp"

namespace sreh::net {

struct model_http_options {
  std::size_t max_idle_per_server = 16;        // idle keep-alive connections kept per server
  std::size_t max_body_bytes = 32u << 20;      // a longer body fails the call
  std::chrono::milliseconds idle_keep{60'000}; // an idle connection older than this is closed
};

/// Starts the client's thread; the thread stops (and calls in flight are dropped) when the last
/// reference goes.
[[nodiscard]] actors::model_transport_ptr make_model_http(model_http_options opt = {});

} // namespace sreh::net
