#pragma once
// GET /v1/models: the node's model provider and, for a language model behind the gateway, its
// routes in chain order with their breaker state, calls, failures and tokens (`sreh models`);
// POST /v1/models/check: a tiny request to each route, with its latency or error.

#include "actors/gateway/model_provider.hpp"
#include "net/http/http_server.hpp"

namespace sreh::net {

/// The route group of GET /v1/models and POST /v1/models/check over `provider` (kept alive by the
/// group).
[[nodiscard]] route_group model_routes(actors::model_provider_ptr provider);

} // namespace sreh::net
