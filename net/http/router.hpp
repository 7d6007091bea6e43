#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "net/http/http_message.hpp"

namespace sreh::net {

/// A plain route: answers through the responder (now or later, from any thread).
using plain_handler = std::function<void(const request&, responder)>;
/// An SSE route: validates the request and says what to stream, or answers with a problem
/// before the stream starts. Runs on the connection's strand.
using sse_handler = std::function<std::variant<reply, sse_spec>(const request&)>;

/// The route table: method + path pattern (`/v1/runs/{id}/steps`) → who may call it → handler.
/// Every route states the access it needs here, in one place; the session checks it (401/403)
/// before the handler runs.
///
/// Concurrency: built before the server starts, read-only afterwards (thread-safe reads).
class router {
 public:
  struct route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments; // "{name}" matches one non-empty segment
    access need = access::viewer;
    plain_handler plain;
    sse_handler sse;
    /// Runs on the HTTP thread itself: only for handlers that never block (no store, no
    /// waiting); every other handler runs on the handler pool.
    bool on_io_thread = false;
  };

  struct match {
    const route* found = nullptr;
    std::map<std::string, std::string> params;
    int status = 0;    // 404 (no such path) or 405 (path known, method not) when !found
    std::string allow; // for 405: "GET, POST"
  };

  void add(std::string method, std::string pattern, access need, plain_handler h);
  /// A route whose handler never blocks: it answers on the HTTP thread (no hop to the pool).
  void add_nonblocking(std::string method, std::string pattern, access need, plain_handler h);
  void add_sse(std::string pattern, access need, sse_handler h);

  /// Finds the route of `method` and the decoded `path`.
  [[nodiscard]] match find(std::string_view method, std::string_view path) const;

  [[nodiscard]] const std::vector<route>& routes() const { return routes_; }

 private:
  std::vector<route> routes_;
};

/// Splits "/a/b/c" into {"a","b","c"}; "/" gives {}. A trailing slash yields an empty last
/// segment (so "/v1/runs/" does not match "/v1/runs").
[[nodiscard]] std::vector<std::string_view> split_path(std::string_view path);

} // namespace sreh::net
