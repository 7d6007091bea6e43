#pragma once
// What a node config names besides its store, loaded and checked: the config loader only found
// those files readable; here they are parsed. `sreh serve` does this before it touches its data
// dir (nothing is written there for a config that is not good), `sreh config check` to check
// what serve would.

#include <memory>
#include <string>
#include <vector>

#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/policy/policy.hpp"
#include "net/http/tls.hpp"

namespace sreh::app {

/// A node's parts that come from its config's files, ready to run with.
struct node_setup {
  std::shared_ptr<actors::tool_registry> tools;
  node_plugins plugins;                         // the model provider and the banner's lines
  policy::policy_set policy;                    // policy_file's, else policy_mode's
  std::shared_ptr<net::tls_server_context> tls; // null without `tls:`
};

struct setup_options {
  /// Refuse a model route whose `api_key: ${VAR}` names an unset variable (serve). Off for
  /// `sreh config check`, which reports them (`unset_model_keys`) as what serve needs.
  bool require_model_keys = true;
};

/// The errors of the model routes whose key variable was unset at load, the chain's first.
[[nodiscard]] std::vector<std::string> unset_model_keys(const config::model_config& m);

/// Loads and checks what `cfg` names: the cluster's certificate for this node, the `tls:`
/// files, the toolsets' files (the sandbox scenario, ...), the model provider's (knowledge base,
/// keys), the tools the flows call and the policy file. Errors name the field and the file
/// (`policy_file: FILE:LINE:COL: ...`). Writes nothing.
[[nodiscard]] expected<node_setup>
prepare_node(const node_registries& r, const config::node_config& cfg, setup_options o = {});

} // namespace sreh::app
