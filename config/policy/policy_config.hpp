#pragma once

#include <string>

#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/policy/policy.hpp"

namespace sreh::config {

/// Loads and validates a policy file (examples/policies/*.yaml). Unknown keys, wrong types,
/// bad durations, windows, roles and effects, duplicate rule ids are errors formatted as
/// `FILE:LINE:COLUMN: field.path: what is wrong`. `version` of the result is a hash of the text.
/// With no file at all, the default is an empty `policy::policy_set` (review mode, no rules).
[[nodiscard]] expected<policy::policy_set> load_policy_file(const std::string& path);

/// Same, from text (`name` is used in messages in place of a file name).
[[nodiscard]] expected<policy::policy_set> load_policy_string(const std::string& text,
                                                              const std::string& name);

/// Same, from the text of a request (a fork's policy, docs/fork.md): `${VAR}` is not substituted,
/// since the node's environment is not the caller's to read.
[[nodiscard]] expected<policy::policy_set> load_request_policy(const std::string& text,
                                                               const std::string& name);

/// A node's policy: the file its config names (`policy_file`), else a policy with the
/// configured mode (`policy_mode`) and no rules.
[[nodiscard]] expected<policy::policy_set> node_policy(const node_config& cfg);

} // namespace sreh::config
