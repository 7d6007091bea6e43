#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/run.hpp"

namespace sreh {

/// Something said to a run before it began: a Work's standing constraint (docs/conversation.md,
/// "Works"). Never from a request body.
struct opening_message {
  std::string author;
  std::string text;
};

/// What a client submits to start a run (`POST /v1/goals`).
struct goal_request {
  std::string goal;            // 1..4096 bytes of text
  std::string idempotency_key; // from the `Idempotency-Key` header; empty = none
  std::string submitter;       // identity of the caller
  std::string labels = "{}";   // JSON object of string → string
  run_budget budget;           // defaults from config, fields may be lowered by the request
  // -- a run started by a flow (never from a request body): see `run`
  std::string kind = "goal";
  std::string parent;
  std::string spec = "{}";
  /// The run's first messages, committed with it and taken before its first decision.
  std::vector<opening_message> opening;
};

/// Reads `labels` of a request (an object of at most 32 string values; keys 1..63 bytes, values
/// at most 256) into `out.labels`; errors name the label.
[[nodiscard]] error parse_labels(const rapidjson::Value& v, goal_request& out);

/// Parses the request body: `{"goal": "...", "labels": {...}, "budget": {"max_steps": 10, ...}}`.
/// Unknown fields, wrong types and out-of-range values are errors naming the field.
[[nodiscard]] expected<goal_request> parse_goal_request(std::string_view body,
                                                        const run_budget& defaults);

} // namespace sreh
