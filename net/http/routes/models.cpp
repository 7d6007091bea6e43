// GET /v1/models: what `sreh models` shows; POST /v1/models/check: `sreh models check`. The
// gateway's figures are read under its lock, so the handler never blocks for long and never touches
// the network. No key is ever written.
#include "net/http/routes/models.hpp"

#include "actors/gateway/llm_provider.hpp"
#include "core/base/json.hpp"
#include "net/http/problem.hpp"
#include "net/http/router.hpp"

namespace sreh::net {

namespace {

reply list_models(actors::model_provider& p) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("provider");
  w.String(p.name());
  w.Key("deterministic");
  w.Bool(p.deterministic());
  w.Key("routes");
  w.StartArray();
  if (auto* llm = p.as_llm()) {
    const auto& chain = llm->gateway().chain();
    auto status = llm->gateway().status();
    for (std::size_t i = 0; i < status.size(); ++i) {
      const auto& s = status[i];
      w.StartObject();
      w.Key("name"), w.String(s.name);
      w.Key("provider"), w.String(s.provider);
      w.Key("base_url"), w.String(s.base_url);
      w.Key("model"), w.String(s.model);
      w.Key("stream"), w.Bool(chain.at(i).stream);
      w.Key("api_key_set"), w.Bool(!chain.at(i).api_key.empty());
      w.Key("breaker"), w.String(s.breaker);
      w.Key("consecutive_failures"), w.Int(s.consecutive_failures);
      w.Key("calls"), w.Int64(s.calls);
      w.Key("failures"), w.Int64(s.failures);
      w.Key("input_tokens"), w.Int64(s.input_tokens);
      w.Key("output_tokens"), w.Int64(s.output_tokens);
      w.Key("in_flight"), w.Int64(s.in_flight);
      w.Key("queued"), w.Int64(s.queued);
      w.Key("max_concurrency"), w.Int64(s.max_concurrency);
      w.Key("max_queue"), w.Int64(s.max_queue);
      w.Key("cost"), w.Double(llm->gateway().cost_of(s.name, {s.input_tokens, s.output_tokens}));
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

void write_check(json::writer& w, const actors::route_check& c) {
  w.StartObject();
  w.Key("route"), w.String(c.route);
  w.Key("provider"), w.String(c.provider);
  w.Key("model"), w.String(c.model);
  w.Key("base_url"), w.String(c.base_url);
  w.Key("ok"), w.Bool(c.ok);
  w.Key("latency_ms"), w.Int64(c.latency_ms);
  if (c.http_status != 0)
    w.Key("http_status"), w.Int(c.http_status);
  if (!c.ok)
    w.Key("error"), w.String(c.error);
  w.EndObject();
}

reply check_reply(const std::vector<actors::route_check>& routes) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  bool all = true;
  for (const auto& c : routes)
    all = all && c.ok;
  w.StartObject();
  w.Key("ok"), w.Bool(all);
  w.Key("routes");
  w.StartArray();
  for (const auto& c : routes)
    write_check(w, c);
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

/// POST /v1/models/check[?timeout_ms=N]: a tiny request to each route (it costs tokens, hence
/// operator). Answers when the last route has, from the transport's thread.
void check_models(actors::model_provider& p, const request& q, responder s) {
  std::int64_t timeout_ms = 10'000;
  if (const auto* t = q.param("timeout_ms")) {
    auto v = json::parse(*t);
    if (!v || !v->IsInt64() || v->GetInt64() < 1 || v->GetInt64() > 600'000)
      return s.send(problem(400, "invalid-argument",
                            "timeout_ms: expected milliseconds between 1 and 600000", q));
    timeout_ms = v->GetInt64();
  }
  auto* llm = p.as_llm();
  if (!llm) { // a deterministic reasoner answers at once
    actors::route_check c;
    c.route = "main";
    c.provider = p.name();
    c.ok = true;
    return s.send(check_reply({c}));
  }
  llm->gateway().check(
    std::chrono::milliseconds{timeout_ms},
    [s](std::vector<actors::route_check> routes) { s.send(check_reply(routes)); });
}

} // namespace

route_group model_routes(actors::model_provider_ptr provider) {
  return [provider](router& r, server_context&) {
    r.add_nonblocking("GET", "/v1/models", access::viewer,
                      [provider](const request& q, responder s) {
                        if (!provider)
                          return s.send(problem(503, "unavailable", "no model provider", q));
                        s.send(list_models(*provider));
                      });
    r.add_nonblocking("POST", "/v1/models/check", access::operator_,
                      [provider](const request& q, responder s) {
                        if (!provider)
                          return s.send(problem(503, "unavailable", "no model provider", q));
                        check_models(*provider, q, std::move(s));
                      });
  };
}

} // namespace sreh::net
