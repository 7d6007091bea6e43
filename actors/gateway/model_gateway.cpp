#include "actors/gateway/model_gateway.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "actors/gateway/route_call.hpp"
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
  std::size_t route = 0; // index into routes_
  int attempt = 0;       // 1-based, per route
  std::int64_t started_us = 0;
  std::optional<route_call> wire; // the current attempt's
  gateway_result result;
};

model_gateway::model_gateway(std::vector<config::model_route> chain, model_transport_ptr transport,
                             const sreh::clock& clock)
  : chain_(std::move(chain)), clock_(clock), transport_(std::move(transport)) {
  for (const auto& r : chain_)
    routes_.push_back({r, llm::circuit_breaker{llm::breaker_config{}, clock_}});
}

void model_gateway::call(const llm::chat_request& req, done_fn done, delta_fn on_delta) {
  auto cs = std::make_shared<call_state>();
  cs->req = req;
  cs->done = std::move(done);
  cs->on_delta = std::move(on_delta);
  cs->attempt = 1;
  attempt(std::move(cs));
}

void model_gateway::next_route(std::shared_ptr<call_state> cs, std::string why) {
  cs->result.log.push_back(why);
  cs->result.error = std::move(why);
  cs->route += 1;
  cs->attempt = 1;
  attempt(std::move(cs));
}

void model_gateway::attempt(std::shared_ptr<call_state> cs) {
  if (cs->route >= routes_.size()) {
    cs->result.ok = false;
    auto done = std::move(cs->done);
    return done(std::move(cs->result));
  }
  const auto& r = routes_[cs->route].cfg;
  if (r.provider == "builtin") {
    cs->result.ok = false;
    cs->result.reached_builtin = true;
    cs->result.route = "builtin";
    cs->result.provider = "builtin";
    auto done = std::move(cs->done);
    return done(std::move(cs->result));
  }
  bool allowed = false;
  {
    std::lock_guard lock{mu_};
    allowed = routes_[cs->route].breaker.allow();
  }
  if (!allowed)
    return next_route(std::move(cs), fmt::format("{}: circuit breaker open, not called", r.name));

  auto made = route_call::make(r, cs->req, std::chrono::milliseconds{r.total_timeout_ms});
  if (!made)
    return next_route(std::move(cs), fmt::format("{}: {}", r.name, made.error().message));
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
