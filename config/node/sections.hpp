#pragma once
// A plugin's section of the node config. The plugin states its settings as a type `T` with
// `static constexpr std::string_view section` (its path: a top-level key such as `prometheus`,
// or a key under `tools:` such as `tools.http_probe`), a reader that turns the section's YAML
// into a `T`, and optionally a check that `finalize` runs once the whole config is read (a
// template the section names must be loaded). The loader (load.cpp) dispatches each key it does
// not read itself to the section registered for it, and refuses a key nobody registered like
// any unknown key. `node_config::section<T>()` gives the settings back, `T{}` when the file has
// no such section. Plugins register theirs through plugins/register.hpp.

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/node/node_config.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/expected.hpp"
#include "core/base/http_url.hpp"

namespace sreh::config {

/// What a section's reader knows besides its YAML.
struct section_context {
  /// The config file (or the name given to `load_string`): a relative path in the section is
  /// relative to its directory (`read_path`).
  const std::string& config_file;
};

/// One registered section: its path, its reader and its check (may be empty).
struct section_spec {
  std::string path;
  /// The settings of the section `e` (a `T`), or a `yaml::load_error` thrown by `r` naming the
  /// field (`r.fail(x, ...)`): the loader turns it into `FILE:LINE:COL: path: what`.
  std::function<std::any(yaml::reader& r, const yaml::entry& e, const section_context& ctx)> read;
  /// A cross-field rule over the finished config; its error starts with the field path
  /// ("alertmanager.receiver.template: ..."), which the loader points at in the file.
  std::function<sreh::error(const node_config& cfg)> check;
};

/// The sections this build's plugins add to the node config.
///
/// Concurrency: filled before the node loads its config, read-only afterwards.
class section_registry {
 public:
  /// Registers the section of settings type `T` (at `T::section`), read by `read` and, when
  /// given, checked by `check` once the config is whole. A second section of the same path
  /// replaces the first.
  template <class T>
  void add(T (*read)(yaml::reader&, const yaml::entry&, const section_context&),
           sreh::error (*check)(const T&, const node_config&) = nullptr) {
    section_spec s{std::string{T::section},
                   [read](yaml::reader& r, const yaml::entry& e, const section_context& ctx) {
                     return std::any{read(r, e, ctx)};
                   },
                   {}};
    if (check != nullptr)
      s.check = [check](const node_config& cfg) { return check(cfg.section<T>(), cfg); };
    add(std::move(s));
  }

  /// The section at `path` ("prometheus", "tools.shell"), or null.
  [[nodiscard]] const section_spec* find(std::string_view path) const;

  /// The keys of the sections directly under `parent` ("" for the top level, "tools"), in the
  /// order they were added.
  [[nodiscard]] std::vector<std::string_view> keys_under(std::string_view parent) const;

  [[nodiscard]] const std::vector<section_spec>& all() const { return specs_; }

 private:
  void add(section_spec s);

  std::vector<section_spec> specs_;
};

// -- what section readers share -------------------------------------------------------------------

/// A file named by the config: relative to the config file's directory; it must be readable.
[[nodiscard]] std::string read_path(yaml::reader& r, const yaml::entry& e,
                                    const std::string& config_file);

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

/// A server's `url` (http://host:port[/prefix], "" = none) into the section's url, host, port
/// and path_prefix.
template <class Section>
void read_server_url(yaml::reader& r, const yaml::entry& e, Section& out) {
  out.url = r.string(e);
  if (out.url.empty())
    return;
  auto u = parse_http_url(out.url, true, true);
  if (!u)
    r.fail(e, u.error().message);
  out.host = u->host;
  out.port = u->port;
  out.path_prefix = u->path;
}

/// The error of a cross-field rule: "FIELD: WHAT" (`invalid_argument`).
[[nodiscard]] sreh::error field_error(std::string_view field, std::string_view what);

} // namespace sreh::config
