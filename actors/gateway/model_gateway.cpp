#include "actors/gateway/model_gateway.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "actors/gateway/route_call.hpp"
#include "core/base/fault.hpp"
#include "core/base/logger.hpp"

namespace sreh::actors {

namespace {

std::shared_ptr<spdlog::logger> gateway_log() {
  static auto log = logger("gateway");
  return log;
}

/// Whether an ending counts against the route's breaker: network errors, timeouts, 408, 429 and
/// 5xx; not a 4xx its own request caused.
bool breaker_failure(int status) {
  return status == 0 || status == 408 || status == 429 || status >= 500;
}

} // namespace

struct model_gateway::call_state {
  llm::chat_request req;
  done_fn done;
  delta_fn on_delta;
  std::vector<std::size_t> order;      // the routes to try, indexes into routes_
  std::size_t next = 0;                // the position of `route` in `order`
  std::size_t route = 0;               // index into routes_ (routes_.size(): none left)
  int attempt = 0;                     // 1-based, per route
  std::int64_t attempt_started_us = 0; // when the attempt began (before any wait in the queue)
  std::int64_t started_us = 0;         // when it was sent
  bool waiting = false;                // in the route's queue (guarded by mu_)
  std::uint64_t wait_id = 0;           // which wait a queue timer is for (guarded by mu_)
  std::optional<route_call> wire;      // the current attempt's
  gateway_result result;
};

model_gateway::model_gateway(std::vector<config::model_route> chain, model_transport_ptr transport,
                             const sreh::clock& clock, std::size_t default_routes)
  : chain_(std::move(chain)),
    default_routes_(default_routes == 0 ? chain_.size() : std::min(default_routes, chain_.size())),
    clock_(clock), transport_(std::move(transport)) {
  for (const auto& r : chain_)
    routes_.push_back({r, llm::circuit_breaker{llm::breaker_config{}, clock_}});
}

std::vector<std::size_t> model_gateway::order(std::string_view first) const {
  std::vector<std::size_t> out;
  std::size_t chosen = chain_.size();
  for (std::size_t i = 0; i < chain_.size() && !first.empty(); ++i)
    if (chain_[i].name == first)
      chosen = i;
  if (chosen < chain_.size())
    out.push_back(chosen);
  for (std::size_t i = chosen < chain_.size() ? 1 : 0; i < default_routes_; ++i)
    if (i != chosen)
      out.push_back(i);
  return out;
}

std::vector<std::string> model_gateway::order_names(std::string_view first) const {
  std::vector<std::string> out;
  for (auto i : order(first))
    out.push_back(chain_[i].name);
  return out;
}

void model_gateway::call(const llm::chat_request& req, done_fn done, delta_fn on_delta,
                         std::string_view first) {
  if (fault("gateway.call"))
    throw std::runtime_error("fault injected at gateway.call");
  auto cs = std::make_shared<call_state>();
  cs->req = req;
  cs->done = std::move(done);
  cs->on_delta = std::move(on_delta);
  cs->attempt = 1;
  cs->order = order(first);
  cs->route = cs->order.empty() ? routes_.size() : cs->order.front();
  attempt(std::move(cs));
}

void model_gateway::next_route(std::shared_ptr<call_state> cs, std::string why) {
  cs->result.log.push_back(why);
  cs->result.error = std::move(why);
  cs->next += 1;
  cs->route = cs->next < cs->order.size() ? cs->order[cs->next] : routes_.size();
  cs->attempt = 1;
  attempt(std::move(cs));
}

void model_gateway::attempt(std::shared_ptr<call_state> cs) {
  if (cs->route >= routes_.size()) {
    cs->result.ok = false;
    auto done = std::move(cs->done);
    return done(std::move(cs->result));
  }
  auto& rt = routes_[cs->route];
  const auto& r = rt.cfg;
  if (r.provider == "builtin") {
    cs->result.ok = false;
    cs->result.reached_builtin = true;
    cs->result.route = "builtin";
    cs->result.provider = "builtin";
    auto done = std::move(cs->done);
    return done(std::move(cs->result));
  }
  cs->attempt_started_us = clock_.now_us();
  enum class admit { send, wait, full, open } a = admit::send;
  std::int64_t in_flight = 0, waiting = 0;
  {
    std::lock_guard lock{mu_};
    if (rt.breaker.current() == llm::circuit_breaker::state::open) {
      a = admit::open;
    } else if (rt.in_flight < r.max_concurrency) {
      rt.in_flight += 1;
    } else if (static_cast<std::int64_t>(rt.queue.size()) < r.max_queue) {
      rt.queue.push_back(cs);
      cs->waiting = true;
      cs->wait_id = ++wait_ids_;
      a = admit::wait;
    } else {
      a = admit::full;
    }
    in_flight = rt.in_flight;
    waiting = static_cast<std::int64_t>(rt.queue.size());
  }
  switch (a) {
  case admit::send:
    return send(std::move(cs));
  case admit::open:
    return next_route(std::move(cs), fmt::format("{}: circuit breaker open, not called", r.name));
  case admit::full:
    return next_route(std::move(cs),
                      fmt::format("{}: overloaded: {} calls in flight and {} waiting "
                                  "(max_concurrency {}, max_queue {}), not called",
                                  r.name, in_flight, waiting, r.max_concurrency, r.max_queue));
  case admit::wait:
    break;
  }
  // Waiting counts toward the attempt's total timeout: past it, the call leaves the queue.
  std::weak_ptr<call_state> weak = cs;
  transport_->after(std::chrono::milliseconds{r.total_timeout_ms}, [this, weak, id = cs->wait_id] {
    if (auto c = weak.lock())
      expire(std::move(c), id);
  });
}

void model_gateway::expire(std::shared_ptr<call_state> cs, std::uint64_t wait_id) {
  auto& rt = routes_[cs->route];
  std::int64_t in_flight = 0;
  {
    std::lock_guard lock{mu_};
    if (!cs->waiting || cs->wait_id != wait_id)
      return;
    rt.queue.erase(std::find(rt.queue.begin(), rt.queue.end(), cs));
    cs->waiting = false;
    in_flight = rt.in_flight;
  }
  auto line = fmt::format("{}: attempt {}: waited {} ms in the queue behind {} calls in flight "
                          "(max_concurrency {}): timed out (total_timeout)",
                          rt.cfg.name, cs->attempt, rt.cfg.total_timeout_ms, in_flight,
                          rt.cfg.max_concurrency);
  gateway_log()->warn("model call: {}", line);
  next_route(std::move(cs), std::move(line));
}

void model_gateway::release(std::size_t route) {
  std::shared_ptr<call_state> next;
  {
    std::lock_guard lock{mu_};
    auto& rt = routes_[route];
    if (rt.queue.empty()) {
      rt.in_flight -= 1;
    } else { // the slot goes to the longest waiting call
      next = std::move(rt.queue.front());
      rt.queue.pop_front();
      next->waiting = false;
    }
  }
  if (next)
    send(std::move(next));
}

void model_gateway::send(std::shared_ptr<call_state> cs) {
  const auto& r = routes_[cs->route].cfg;
  bool allowed = false;
  {
    std::lock_guard lock{mu_};
    allowed = routes_[cs->route].breaker.allow();
  }
  if (!allowed) {
    release(cs->route);
    return next_route(std::move(cs), fmt::format("{}: circuit breaker open, not called", r.name));
  }
  auto waited_ms = (clock_.now_us() - cs->attempt_started_us) / 1000;
  auto left = std::max<std::int64_t>(1, r.total_timeout_ms - waited_ms);
  auto made = route_call::make(r, cs->req, std::chrono::milliseconds{left});
  if (!made) {
    release(cs->route);
    return next_route(std::move(cs), fmt::format("{}: {}", r.name, made.error().message));
  }
  cs->wire.emplace(std::move(*made));
  cs->started_us = clock_.now_us();
  chunk_fn on_chunk;
  if (cs->wire->streamed())
    on_chunk = [cs](std::string_view bytes) {
      auto fresh = cs->wire->feed(bytes);
      if (!fresh.empty() && cs->on_delta)
        cs->on_delta(fresh);
      return true;
    };
  transport_->post(cs->wire->take_request(), std::move(on_chunk),
                   [this, cs](transport_reply reply) { on_reply(cs, std::move(reply)); });
}

void model_gateway::on_reply(std::shared_ptr<call_state> cs, transport_reply reply) {
  auto& rt = routes_[cs->route];
  const auto& r = rt.cfg;
  auto now = clock_.now_us();
  release(cs->route);
  std::string what;
  auto parsed = cs->wire->finish(reply, what);
  cs->wire.reset();
  if (parsed) {
    {
      std::lock_guard lock{mu_};
      rt.breaker.on_success();
      rt.calls += 1;
      if (parsed->usage) {
        rt.input_tokens += parsed->usage->input_tokens;
        rt.output_tokens += parsed->usage->output_tokens;
      }
    }
    cs->result.ok = true;
    cs->result.response = std::move(*parsed);
    cs->result.route = r.name;
    cs->result.provider = r.provider;
    cs->result.model = r.model;
    cs->result.latency_ms = (now - cs->started_us) / 1000;
    cs->result.log.push_back(
      fmt::format("{}: answered (attempt {}, {} ms)", r.name, cs->attempt, cs->result.latency_ms));
    auto done = std::move(cs->done);
    return done(std::move(cs->result));
  }
  // A body that does not parse, or a stream cut short, is retried like a network error.
  int status = reply.error || (reply.status >= 200 && reply.status < 300) ? 0 : reply.status;
  llm::attempt_outcome out;
  if (status != 0)
    out.http_status = status;
  out.response_headers = reply.headers;
  out.attempt = cs->attempt;
  out.now = now;
  llm::retry_config rc;
  rc.max_attempts = static_cast<int>(r.max_attempts);
  llm::retry_decision d;
  {
    std::lock_guard lock{mu_};
    rt.calls += 1;
    rt.failures += 1;
    if (breaker_failure(status))
      rt.breaker.on_failure();
    d = llm::decide_retry(rc, out, [this] {
      return std::uniform_real_distribution<double>{0.0, 1.0}(rng_);
    });
  }
  auto line = fmt::format("{}: attempt {}: {}; {}", r.name, cs->attempt, what, d.reason);
  gateway_log()->warn("model call: {}", line);
  if (!d.retry)
    return next_route(std::move(cs), std::move(line));
  cs->result.log.push_back(std::move(line));
  cs->attempt += 1;
  transport_->after(std::chrono::milliseconds{d.delay_ms}, [this, cs] { attempt(cs); });
}

std::vector<route_status> model_gateway::status() const {
  std::lock_guard lock{mu_};
  std::vector<route_status> out;
  for (const auto& r : routes_) {
    route_status s;
    s.name = r.cfg.name;
    s.provider = r.cfg.provider;
    s.base_url = r.cfg.base_url;
    s.model = r.cfg.model;
    s.breaker = llm::to_string(r.breaker.current());
    s.consecutive_failures = r.breaker.consecutive_failures();
    s.calls = r.calls;
    s.failures = r.failures;
    s.input_tokens = r.input_tokens;
    s.output_tokens = r.output_tokens;
    s.in_flight = r.in_flight;
    s.queued = static_cast<std::int64_t>(r.queue.size());
    s.max_concurrency = r.cfg.max_concurrency;
    s.max_queue = r.cfg.max_queue;
    out.push_back(std::move(s));
  }
  return out;
}

double model_gateway::cost_of(const std::string& route, const llm::usage& u) const {
  for (const auto& r : chain_)
    if (r.name == route)
      return (static_cast<double>(u.input_tokens) * r.input_price +
              static_cast<double>(u.output_tokens) * r.output_price) /
             1e6;
  return 0;
}

} // namespace sreh::actors
