#include "actors/gateway/model_gateway.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <variant>

#include "core/base/logger.hpp"
#include "core/llm/anthropic_codec.hpp"
#include "core/llm/openai_codec.hpp"
#include "core/llm/wire.hpp"

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
  std::variant<std::monostate, llm::openai::stream_assembler, llm::anthropic::stream_assembler>
    stream;
  gateway_result result;
};

model_gateway::model_gateway(std::vector<config::model_route> chain, model_transport_ptr transport,
                             const sreh::clock& clock)
  : chain_(std::move(chain)), transport_(std::move(transport)), clock_(clock) {
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

  auto req = cs->req;
  req.model = r.model;
  req.max_tokens = r.max_tokens;
  req.stream = r.stream;
  transport_request t;
  expected<std::string> body = std::string{};
  if (r.provider == "anthropic") {
    body = llm::anthropic::build_request(req);
    t.url = r.base_url + "/v1/messages";
    t.headers = {{"anthropic-version", llm::anthropic::api_version}};
    if (!r.api_key.empty())
      t.headers.emplace_back("x-api-key", r.api_key);
    if (r.stream)
      cs->stream.emplace<llm::anthropic::stream_assembler>();
    else
      cs->stream.emplace<std::monostate>();
  } else {
    body = llm::openai::build_request(req);
    t.url = r.base_url + "/chat/completions";
    if (!r.api_key.empty())
      t.headers.emplace_back("Authorization", "Bearer " + r.api_key);
    if (r.stream)
      cs->stream.emplace<llm::openai::stream_assembler>();
    else
      cs->stream.emplace<std::monostate>();
  }
  if (!body)
    return next_route(
      std::move(cs), fmt::format("{}: cannot build the request: {}", r.name, body.error().message));
  if (r.stream)
    t.headers.emplace_back("Accept", "text/event-stream");
  t.body = std::move(*body);
  t.connect_timeout = std::chrono::milliseconds{r.connect_timeout_ms};
  t.read_timeout = std::chrono::milliseconds{r.read_timeout_ms};
  t.total_timeout = std::chrono::milliseconds{r.total_timeout_ms};
  t.ca_file = r.ca_file;
  cs->started_us = clock_.now_us();
  chunk_fn on_chunk;
  if (r.stream)
    on_chunk = [this, cs](std::string_view bytes) {
      std::string fresh;
      std::visit(
        [&](auto& a) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(a)>, std::monostate>) {
            (void)a.feed_bytes(bytes);
            fresh = a.take_text();
          }
        },
        cs->stream);
      if (!fresh.empty() && cs->on_delta)
        cs->on_delta(fresh);
      return true;
    };
  transport_->post(std::move(t), std::move(on_chunk),
                   [this, cs](transport_reply reply) { on_reply(cs, std::move(reply)); });
}

void model_gateway::on_reply(std::shared_ptr<call_state> cs, transport_reply reply) {
  auto& rt = routes_[cs->route];
  const auto& r = rt.cfg;
  auto now = clock_.now_us();
  std::string what;
  expected<llm::chat_response> parsed = sreh::error{errc::unavailable, "no response"};
  if (reply.error) {
    what = reply.error.message;
  } else if (reply.status < 200 || reply.status >= 300) {
    what = llm::describe(llm::parse_error_body(reply.status, reply.body));
  } else {
    std::visit(
      [&](auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, std::monostate>)
          parsed = r.provider == "anthropic" ? llm::anthropic::parse_response(reply.body)
                                             : llm::openai::parse_response(reply.body);
        else
          parsed = a.finish();
      },
      cs->stream);
    if (!parsed)
      what = "HTTP " + std::to_string(reply.status) + " but " + parsed.error().message;
  }
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
