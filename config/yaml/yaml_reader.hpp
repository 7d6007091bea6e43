#pragma once
// Private to the config module: typed access to a parsed YAML tree with file:line:column errors.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::config::detail {

/// Reads a config or policy file (at most 4 MiB). Errors: `PATH: cannot read: <reason>`.
[[nodiscard]] expected<std::string> read_text_file(const std::string& path);

/// Thrown by `yaml_reader` and caught in `load_string`; never leaves the config module.
struct load_error {
  std::string message;
};

/// One `key: value` of a mapping.
struct yaml_entry {
  std::string key;
  std::string path; // dotted path of the value, e.g. "store.kind"
  YAML::Node value;
  YAML::Mark mark;  // of the value, or of the key when the value has none (empty value)
  YAML::Mark key_mark;
};

/// Reads values out of one YAML document. Every failure throws `load_error` with the message
/// `NAME:LINE:COLUMN: path: what` (1-based line and column). Not thread-safe (one per load).
class yaml_reader {
 public:
  explicit yaml_reader(std::string name) : name_(std::move(name)) {}

  /// The entries of mapping `n` at `path` (null reads as empty). Keys outside `allowed` and
  /// duplicate keys are errors; an unknown key gets a "did you mean" hint when one is close.
  [[nodiscard]] std::vector<yaml_entry> entries(const YAML::Node& n, const std::string& path,
                                                std::initializer_list<std::string_view> allowed);

  /// A scalar as a string, with `${NAME}` replaced from the environment.
  [[nodiscard]] std::string string(const yaml_entry& e);

  /// A string that must not be empty (after `${NAME}` substitution).
  [[nodiscard]] std::string non_empty_string(const yaml_entry& e);

  /// The items of `e`, a non-empty sequence, each with its own path ("rules[2].when.tools[0]").
  [[nodiscard]] std::vector<yaml_entry> items(const yaml_entry& e);

  /// A scalar integer in [min, max].
  [[nodiscard]] std::int64_t integer(const yaml_entry& e, std::int64_t min, std::int64_t max);

  /// A string that must be one of `allowed`.
  [[nodiscard]] std::string one_of(const yaml_entry& e,
                                   std::initializer_list<std::string_view> allowed);

  /// A YAML mapping converted to JSON text (plain scalars become numbers, booleans and null
  /// where they read as such; quoted scalars stay strings).
  [[nodiscard]] std::string json_object(const yaml_entry& e);

  /// Throws `load_error` for the value of `e`.
  [[noreturn]] void fail(const yaml_entry& e, std::string_view what) const;
  [[noreturn]] void fail(const YAML::Mark& m, std::string_view path, std::string_view what) const;

  /// "NAME:LINE:COLUMN" of a mark, or "NAME" when the mark is unknown.
  [[nodiscard]] std::string where(const YAML::Mark& m) const;

  /// The mark recorded for `path` or its closest recorded parent ("store.url" → "store").
  [[nodiscard]] YAML::Mark mark_of(std::string path) const;

 private:
  /// Marks of the values read so far, by path, for errors found after reading (finalize).
  std::map<std::string, YAML::Mark> marks_;
  std::string name_;
};

/// Replaces `${NAME}` with the value of environment variable NAME; the error names the
/// variable. Returns false and sets `error` when a variable is unset or the syntax is bad.
[[nodiscard]] bool substitute_env(std::string_view in, std::string& out, std::string& error);

/// The allowed name closest to `key` by edit distance, or "" when none is close.
[[nodiscard]] std::string_view closest(std::string_view key,
                                       std::initializer_list<std::string_view> allowed);

} // namespace sreh::config::detail
