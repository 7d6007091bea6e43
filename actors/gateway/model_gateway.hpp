#pragma once
// The model gateway: sends a neutral chat request (core/llm) down a chain of routes (model
// servers speaking the OpenAI chat-completions or the Anthropic Messages format), with retries
// (llm::decide_retry), a circuit breaker per route and fallback to the next route. All traffic
// goes through a model_transport, so nothing here blocks and nothing includes Beast.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "actors/gateway/model_transport.hpp"
#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/llm/retry.hpp"
#include "core/llm/types.hpp"

namespace sreh::actors {

/// How a call down the chain ended.
struct gateway_result {
  bool ok = false;
  llm::chat_response response;
  std::string route;            // the route that answered ("main", a `models:` name)
  std::string provider;         // openai | anthropic
  std::string model;            // as configured for that route
  std::int64_t latency_ms = 0;  // of the answering call
  std::vector<std::string> log; // what happened on each attempt, for the journal
  std::string error;            // !ok: why the last route failed
  bool reached_builtin = false; // !ok and the chain ends in builtin: it is to answer
};

/// A route's state for `sreh models`.
struct route_status {
  std::string name, provider, base_url, model;
  std::string breaker; // closed | open | half_open
  int consecutive_failures = 0;
  std::int64_t calls = 0, failures = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  std::int64_t in_flight = 0, queued = 0;          // now
  std::int64_t max_concurrency = 0, max_queue = 0; // as configured
};

/// How one route answered a check (`sreh models check`).
struct route_check {
  std::string route, provider, model, base_url;
  bool ok = false;
  std::int64_t latency_ms = 0;
  int http_status = 0; // 0: no HTTP answer (builtin, or a network error)
  std::string error;   // !ok: why, naming the cause (never the key)
};

/// Thread-safe. `call` may be made from any thread; `done` and `on_delta` run on the
/// transport's thread (or on the caller's, when the call ends before it is sent).
/// Per route at most `max_concurrency` calls are in flight; more wait in a FIFO queue of at most
/// `max_queue` (their wait counts toward the attempt's `total_timeout_ms`), and a call finding
/// the queue full goes to the next route at once (overloaded).
class model_gateway {
 public:
  /// `chain`: the routes in order (a `builtin` entry ends the chain). With `default_routes` > 0
  /// only the first that many are the chain a call goes down by default; the rest are routes a
  /// call may be sent to first (`model.by_label`), then going on down the chain.
  model_gateway(std::vector<config::model_route> chain, model_transport_ptr transport,
                const sreh::clock& clock, std::size_t default_routes = 0);

  using done_fn = std::function<void(gateway_result)>;
  using delta_fn = std::function<void(const std::string&)>;

  /// Sends `req` (its model, max_tokens and stream are set per route) down the chain, or, with
  /// `first` naming a route, to that route first and then down the chain without the chain's
  /// own first route (`first` takes its place).
  void call(const llm::chat_request& req, done_fn done, delta_fn on_delta = {},
            std::string_view first = {});

  /// The names of the routes a call with `first` goes down, in order.
  [[nodiscard]] std::vector<std::string> order_names(std::string_view first = {}) const;

  using check_fn = std::function<void(std::vector<route_check>)>;
  /// Sends a tiny request (one user message "ping", a few output tokens) to every route of the
  /// chain at once, each tried once within `timeout` (and its own timeouts), whatever its
  /// breaker says; neither the breakers nor the figures of `status` change. `builtin` is ok at
  /// once. `done` gets the routes in chain order, on the transport's thread (or at once when
  /// no route needs a call).
  void check(std::chrono::milliseconds timeout, check_fn done);

  [[nodiscard]] std::vector<route_status> status() const;
  [[nodiscard]] const std::vector<config::model_route>& chain() const { return chain_; }

  /// The price of `u` on route `name` (per-million prices from config), 0 when unknown.
  [[nodiscard]] double cost_of(const std::string& route, const llm::usage& u) const;

 private:
  struct call_state;
  /// Indexes into routes_ of a call with `first` (see call).
  [[nodiscard]] std::vector<std::size_t> order(std::string_view first) const;
  /// Asks the call's current route: sends at once when under its max_concurrency, else queues
  /// it (FIFO, at most max_queue), else moves on to the next route.
  void attempt(std::shared_ptr<call_state> cs);
  /// Sends an admitted call (it holds one of the route's slots).
  void send(std::shared_ptr<call_state> cs);
  /// Frees a slot of `route`: the longest waiting call takes it.
  void release(std::size_t route);
  /// A queued call's total timeout passed before a slot freed: the next route is asked.
  void expire(std::shared_ptr<call_state> cs, std::uint64_t wait_id);
  void next_route(std::shared_ptr<call_state> cs, std::string why);
  void on_reply(std::shared_ptr<call_state> cs, transport_reply reply);

  struct route_rt {
    config::model_route cfg;
    llm::circuit_breaker breaker;
    std::int64_t calls = 0, failures = 0, input_tokens = 0, output_tokens = 0;
    std::int64_t in_flight = 0;                      // calls sent and not yet answered
    std::deque<std::shared_ptr<call_state>> queue{}; // waiting for a slot, oldest first
  };

  std::vector<config::model_route> chain_;
  std::size_t default_routes_; // the first of chain_ that are the default chain
  const sreh::clock& clock_;
  mutable std::mutex mu_; // guards routes_, rng_, wait_ids_ and the calls' waiting state
  std::uint64_t wait_ids_ = 0;
  std::vector<route_rt> routes_;
  std::mt19937_64 rng_{std::random_device{}()};
  // Last, so that it goes first: its thread stops before the routes its callbacks use.
  model_transport_ptr transport_;
};

using model_gateway_ptr = std::shared_ptr<model_gateway>;

} // namespace sreh::actors
