#pragma once
// The wire shape of a flow (GET /v1/flows, GET /v1/flows/{name}; docs/flows.md).

#include "core/base/json.hpp"
#include "core/flows/flow.hpp"
#include "core/flows/graph.hpp"

namespace sreh::flows {

/// `{"name","version","label"?,"description","inputs":[...],"steps":N}`: a flow in a listing
/// (`steps` counts every step, those of branches too).
void write_summary(json::writer& w, const flow& f);

/// The summary's fields with `"steps"` the steps themselves, `"graph"` and `"source"`.
void write_detail(json::writer& w, const flow& f);

void write(json::writer& w, const input_spec& i);
void write(json::writer& w, const step& s);
void write(json::writer& w, const graph& g);

} // namespace sreh::flows
