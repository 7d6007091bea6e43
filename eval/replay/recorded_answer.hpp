#pragma once
// The replay's model: the answers the recorded reason steps hold (internal to eval/replay).

#include "actors/gateway/model_gateway.hpp"
#include "core/model/step.hpp"

namespace sreh::eval::detail {

/// The gateway's answer recorded by reason step `s`, as the gateway gave it.
[[nodiscard]] actors::gateway_result recorded_answer(const step& s);

} // namespace sreh::eval::detail
