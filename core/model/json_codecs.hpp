#pragma once
// The wire shape of the domain types, in JSON (also what the store keeps for the checkpoint).

#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/base/json.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::json {

void write(writer& w, const run& r);
void write(writer& w, const step& s);
void write(writer& w, const event& e);
void write(writer& w, const approval& a);
[[nodiscard]] std::string to_json(const approval& a);
[[nodiscard]] expected<approval> approval_from_json(std::string_view text);
[[nodiscard]] std::string to_json(const run& r);
[[nodiscard]] std::string to_json(const step& s);
[[nodiscard]] std::string to_json(const event& e);

/// Decoders of the same shapes (round trip of `to_json`).
[[nodiscard]] expected<run> run_from_json(std::string_view text);
[[nodiscard]] expected<step> step_from_json(std::string_view text);
[[nodiscard]] expected<event> event_from_json(std::string_view text);

} // namespace sreh::json
