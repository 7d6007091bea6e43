#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http/auth.hpp"

namespace sreh::net {

/// A parsed HTTP request as the route handlers see it: no Beast types, so handler files stay
/// cheap to compile and can be unit-tested.
struct request {
  std::string method;                         // "GET", "POST", ...
  std::string target;                         // as received, with the query
  std::string path;                           // percent-decoded, without the query
  std::map<std::string, std::string> query;   // percent-decoded; first occurrence wins
  std::map<std::string, std::string> headers; // lower-case names; repeats joined with ", "
  std::map<std::string, std::string> params;  // path parameters ("{id}")
  std::string body;
  std::string request_id; // "req_..." (also sent as X-Request-Id)
  identity who;           // the authenticated caller (set before routing)

  /// The header's value, or nullptr when absent. `name` must be lower-case.
  [[nodiscard]] const std::string* header(const std::string& name) const {
    auto i = headers.find(name);
    return i == headers.end() ? nullptr : &i->second;
  }
  /// The query parameter's value, or nullptr when absent.
  [[nodiscard]] const std::string* param(const std::string& name) const {
    auto i = query.find(name);
    return i == query.end() ? nullptr : &i->second;
  }
};

/// What a handler answers. The session adds X-Request-Id, Content-Length and Connection.
struct reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

/// A JSON reply with `status`.
inline reply json_reply(int status, std::string body) {
  reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

/// How a handler answers, possibly later and from another thread.
///
/// Concurrency: `send` and `post` are thread-safe. `send` must be called exactly once; it hops
/// onto the connection's strand. `post` runs work on the handler pool (never an HTTP thread): use
/// it to leave an actor thread before blocking on the store. Handlers themselves run there too.
/// Work posted after the server began stopping is dropped.
struct responder {
  std::function<void(reply)> send;
  std::function<void(std::function<void()>)> post;
};

/// What an SSE route asks the session to stream.
struct sse_spec {
  std::string run_id;              // empty = all runs
  std::string kind_prefix;         // empty = every kind
  std::int64_t after_seq = 0;      // from Last-Event-ID
  bool finish_on_terminal = false; // end the stream after run.succeeded|failed|cancelled
};

} // namespace sreh::net
