#pragma once
// The readers of the node config's own sections that live in files of their own
// (config/node/read_*.cpp); the loader (load.cpp) dispatches the top-level keys to them and the
// plugins' keys to their registered sections (sections.hpp). Internal to config/node.

#include <string>

#include "config/node/node_config.hpp"
#include "config/node/sections.hpp"
#include "config/yaml/reader.hpp"

namespace sreh::config::detail {

/// `model:` (read after `models:`, whose routes its fallback and by_label name).
void read_model(yaml::reader& r, const yaml::entry& section, const std::string& config_file,
                model_config& out);

/// `models: {NAME: {provider, base_url, …}}`: the routes a fallback chain names.
void read_models(yaml::reader& r, const yaml::entry& section, const std::string& config_file,
                 model_config& out);

} // namespace sreh::config::detail
