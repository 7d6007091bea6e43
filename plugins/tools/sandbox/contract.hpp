#pragma once
// What each sandbox tool declares to a reasoner, and how its result reads back as typed
// observations (core/model/observation.hpp). The sandbox owns the shapes of its results
// (docs/sandbox-tools.md): this is the only code that parses them. Public so that a fake backend
// answering in the same shapes under the same names (the reasoner's unit tests) reuses it.

#include <functional>
#include <string_view>
#include <vector>

#include "core/base/json.hpp"
#include "core/model/observation.hpp"

namespace sreh::plugins::sandbox {

/// Reads a result object of a successful call with `args` (both parsed JSON objects).
using observer =
  std::function<obs::observations(const rapidjson::Value& args, const rapidjson::Value& result)>;

struct tool_contract {
  std::vector<obs::capability> provides;
  observer read; // null: the result holds nothing to observe (mutating tools)
};

/// The contract of the sandbox tool `name`; an empty one for a name the sandbox does not have.
[[nodiscard]] tool_contract contract_of(std::string_view name);

/// The observations of a result under `contract`: a result that is not a JSON object, or that
/// says `"ok": false`, is a `call_failed`; otherwise what `contract.read` finds in it.
[[nodiscard]] obs::observations observe(const tool_contract& contract, std::string_view args,
                                        std::string_view result);

} // namespace sreh::plugins::sandbox
