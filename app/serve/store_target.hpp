#pragma once
// The store a maintenance command works on (`audit verify`, `backup`, `restore`): named by the
// node's config, by its data dir or by the file itself, with the same defaults as `sreh serve`.

#include <string>

#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"

namespace sreh::app {

/// The store options a command was given.
struct store_args {
  std::string config_file; // --config F: the store and data dir of the node's config
  config::overrides set;   // --node-id ID, --data-dir D (over the config, as for serve)
  std::string db;          // --db FILE: a SQLite file named directly
};

/// Takes the store option at `argv[i]` (and its value, advancing `i`) into `out`. False when
/// `argv[i]` is not one; sets `error` when it is one without its value.
[[nodiscard]] bool take_store_option(int argc, char** argv, int& i, store_args& out,
                                     std::string& error);

/// The store named by `args`: the node config's (defaults: SQLite at ./data/sreh.db) with its
/// data dir; `--db` names a SQLite file (its folder is the data dir) and goes with no other
/// option. Config errors name FILE:LINE:COL.
struct store_target {
  config::store_config store;
  std::string data_dir;
};
[[nodiscard]] expected<store_target> resolve_store(const store_args& args);

} // namespace sreh::app
