// GET /v1/models: what `sreh models` shows. The gateway's figures are read under its lock, so
// the handler never blocks for long and never touches the network. No key is ever written.
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
      w.Key("cost"), w.Double(llm->gateway().cost_of(s.name, {s.input_tokens, s.output_tokens}));
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
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
  };
}

} // namespace sreh::net
