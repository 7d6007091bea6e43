#pragma once
// The readers of the node config's sections, one file per group (config/node/read_*.cpp); the
// loader (load.cpp) dispatches the top-level keys to them. Internal to config/node.

#include <cstdint>
#include <string>
#include <string_view>

#include "config/node/node_config.hpp"
#include "config/yaml/reader.hpp"

namespace sreh::config::detail {

/// An integer setting of a section `Config`: its key, where it goes, and its range.
template <class Config>
struct int_field {
  std::string_view name;
  std::int64_t Config::*member;
  std::int64_t min;
  std::int64_t max;
};

/// Reads `e` into the field of `fields` its key names; false when it names none.
template <class Config, std::size_t N>
bool read_int_field(yaml::reader& r, const yaml::entry& e, const int_field<Config> (&fields)[N],
                    Config& out) {
  for (const auto& f : fields)
    if (e.key == f.name) {
      out.*f.member = r.integer(e, f.min, f.max);
      return true;
    }
  return false;
}

/// A file named by the config: relative to the config file's directory; it must be readable.
[[nodiscard]] std::string read_path(yaml::reader& r, const yaml::entry& e,
                                    const std::string& config_file);

/// `model:` (read after `models:`, whose routes its fallback and by_label name).
void read_model(yaml::reader& r, const yaml::entry& section, const std::string& config_file,
                model_config& out);

/// `models: {NAME: {provider, base_url, …}}`: the routes a fallback chain names.
void read_models(yaml::reader& r, const yaml::entry& section, const std::string& config_file,
                 model_config& out);

/// `tools:` (testkit, http_probe, shell, disable).
void read_tools(yaml::reader& r, const yaml::entry& section, tool_config& out);

/// `alertmanager:` (the tools' server and the webhook receiver).
void read_alertmanager(yaml::reader& r, const yaml::entry& section, alertmanager_config& out);

/// `prometheus:` (the server, the query guards and the reasoner's entity metrics).
void read_prometheus(yaml::reader& r, const yaml::entry& section, prometheus_config& out);

} // namespace sreh::config::detail
