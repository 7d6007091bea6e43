#pragma once
// The HTTP client the model gateway sends its calls through, as the actors layer sees it: an
// abstract interface, implemented in net/client (Beast, OpenSSL) and handed to the gateway when
// the node starts, so this layer never includes Beast. Calls never block the caller: they run
// on the transport's own thread and report through callbacks there.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.hpp"
#include "core/llm/retry.hpp"

namespace sreh::actors {

/// One POST to a model server.
struct transport_request {
  std::string url; // http://host[:port]/path or https://…
  llm::headers headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000}; // TCP connect and TLS handshake
  std::chrono::milliseconds read_timeout{60'000};    // the longest silence while reading
  std::chrono::milliseconds total_timeout{300'000};  // the whole call, retries not included
  std::string ca_file; // https: verify the server against this CA file ("" = the system's)
};

/// How a call ended. `status` 0 with `error` set: a network error (refused, reset, a timeout:
/// errc::deadline). With a status, `body` is the whole body unless it went to on_chunk.
struct transport_reply {
  int status = 0;
  llm::headers headers;
  std::string body;
  sreh::error error;
  bool streamed = false; // the body went to on_chunk
};

/// Body bytes of a 2xx answer as they arrive (when the caller streams). Return false to stop
/// reading (the connection is then closed, and on_done reports what arrived).
using chunk_fn = std::function<bool(std::string_view)>;
using done_fn = std::function<void(transport_reply)>;

/// Thread-safe: post and after may be called from any thread. Callbacks run on the transport's
/// thread, one at a time, and must not block. A transport destroyed with calls in flight drops
/// their callbacks (the node is stopping).
class model_transport {
 public:
  virtual ~model_transport() = default;
  /// Sends `req`; with `on_chunk`, a 2xx body is handed over as it arrives (streaming), else it
  /// is collected into the reply. `on_done` is called exactly once.
  virtual void post(transport_request req, chunk_fn on_chunk, done_fn on_done) = 0;
  /// Runs `fn` on the transport's thread after `delay` (a retry's backoff).
  virtual void after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
};

using model_transport_ptr = std::shared_ptr<model_transport>;

} // namespace sreh::actors
