#pragma once
// Private to the sandbox loader: typed reads of a YAML tree with FILE:LINE:COLUMN errors.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox::detail {

/// Thrown by `yaml_reader`, caught by the load functions; never leaves the loader.
struct load_error {
  std::string message;
  errc code = errc::invalid_argument;
};

/// A value in the tree with its field path ("faults[1].target") and mark.
struct yaml_field {
  YAML::Node node;
  std::string path;
  YAML::Mark mark;
};

/// Reads values out of one YAML document. Failures throw `load_error` with
/// `NAME:LINE:COLUMN: path: what` (1-based). One per file; not thread-safe.
class yaml_reader {
 public:
  explicit yaml_reader(std::string name) : name_(std::move(name)) {}

  [[nodiscard]] const std::string& name() const { return name_; }

  /// The fields of a mapping by key; unknown keys (with a hint), duplicates and non-mappings are
  /// errors. Keys in `required` must be present.
  [[nodiscard]] std::map<std::string, yaml_field>
  fields(const yaml_field& f, std::initializer_list<std::string_view> allowed,
         std::initializer_list<std::string_view> required = {});

  /// The items of a sequence (null reads as empty), with paths `path[i]`.
  [[nodiscard]] std::vector<yaml_field> items(const yaml_field& f);

  [[nodiscard]] std::string string(const yaml_field& f);
  /// A string naming something: non-empty, no spaces.
  [[nodiscard]] std::string name(const yaml_field& f);
  [[nodiscard]] std::int64_t integer(const yaml_field& f, std::int64_t min, std::int64_t max);
  [[nodiscard]] double number(const yaml_field& f);
  [[nodiscard]] bool boolean(const yaml_field& f);
  /// A duration like -10m (see parse_duration).
  [[nodiscard]] std::int64_t duration(const yaml_field& f, bool allow_negative);
  /// One of `allowed`.
  [[nodiscard]] std::string one_of(const yaml_field& f,
                                   std::initializer_list<std::string_view> allowed);
  /// A list of names, or a single name when `single_ok`; the fields keep their marks.
  [[nodiscard]] std::vector<yaml_field> name_list(const yaml_field& f, bool single_ok = false);
  /// A mapping of string → string.
  [[nodiscard]] std::map<std::string, std::string> string_map(const yaml_field& f);
  /// A baseline mapping: metric → number, keys restricted to `metrics`.
  [[nodiscard]] metric_map baseline(const yaml_field& f, const std::vector<std::string>& metrics);

  [[noreturn]] void fail(const yaml_field& f, std::string_view what) const;
  [[noreturn]] void fail(const YAML::Mark& m, std::string_view path, std::string_view what) const;

 private:
  std::string name_;
};

/// Parses `text` into a field at the top (path ""); syntax errors become load_error.
[[nodiscard]] yaml_field parse_yaml(const std::string& text, const yaml_reader& r);

/// Reads a whole file; throws load_error when it cannot.
[[nodiscard]] std::string read_file(const std::string& path);

/// The world part of loading, shared by load_world and inline worlds of load_scenario.
[[nodiscard]] world_model read_world(yaml_reader& r, const yaml_field& top);

} // namespace sreh::plugins::sandbox::detail
