#include "app/serve/store_target.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string_view>

#include "app/serve/plugins.hpp"
#include "app/serve/serve.hpp"

namespace sreh::app {

bool take_store_option(int argc, char** argv, int& i, store_args& out, std::string& error) {
  const std::string_view a = argv[i];
  std::string* dst = a == "--config"     ? &out.config_file
                     : a == "--node-id"  ? &out.set.node_id
                     : a == "--data-dir" ? &out.set.data_dir
                     : a == "--db"       ? &out.db
                                         : nullptr;
  if (dst == nullptr)
    return false;
  if (i + 1 >= argc)
    error = fmt::format("missing value for {}", a);
  else
    *dst = argv[++i];
  return true;
}

expected<store_target> resolve_store(const store_args& args) {
  if (!args.db.empty()) {
    if (!args.config_file.empty() || !args.set.data_dir.empty())
      return sreh::error{errc::invalid_argument,
                         "give --db FILE, or --config/--data-dir, not both"};
    store_target t;
    t.store.path = args.db;
    t.data_dir = std::filesystem::path{args.db}.parent_path().string();
    if (t.data_dir.empty())
      t.data_dir = ".";
    return t;
  }
  const auto regs = registries();
  auto cfg = load_node_config(args.config_file, args.set, regs);
  if (!cfg)
    return cfg.error();
  return store_target{cfg->store, cfg->data_dir};
}

} // namespace sreh::app
