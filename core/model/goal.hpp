#pragma once

#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/model/run.hpp"

namespace sreh {

/// What a client submits to start a run (`POST /v1/goals`).
struct goal_request {
  std::string goal;            // 1..4096 bytes of text
  std::string idempotency_key; // from the `Idempotency-Key` header; empty = none
  std::string submitter;       // identity of the caller
  std::string labels = "{}";   // JSON object of string → string
  run_budget budget;           // defaults from config, fields may be lowered by the request
};

/// Parses the request body: `{"goal": "...", "labels": {...}, "budget": {"max_steps": 10, ...}}`.
/// Unknown fields, wrong types and out-of-range values are errors naming the field.
[[nodiscard]] expected<goal_request> parse_goal_request(std::string_view body,
                                                        const run_budget& defaults);

} // namespace sreh
