#pragma once
// The one YAML reader: typed reads out of a parsed document (node.hpp), every failure a message
// `FILE:LINE:COLUMN: path: what` (1-based line and column; `FILE: path: what` when the place is
// unknown). The node config, the policy, the topology, sandbox worlds and scenarios and the
// reasoner's knowledge base are all read with it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/yaml/node.hpp"
#include "core/base/expected.hpp"

namespace sreh::config::yaml {

/// Thrown by `reader` with the whole message; the loaders catch it and return it as an error
/// value, so it never leaves a loader.
struct load_error {
  std::string message;
};

/// A value with its dotted path ("store.kind", "rules[2].when.tools[0]") and its place.
struct entry {
  std::string key;  // "" for a sequence item or a whole document
  std::string path; // "" for the whole document
  yaml::node value;
  yaml::mark mark;     // of the value, or of the key when the value is empty
  yaml::mark key_mark; // of the key (of the value for an item)
};

struct reader_options {
  /// Replace `${NAME}` in strings with the environment (the node config, policy, topology).
  bool substitute_env = false;
  /// What precedes yaml-cpp's words in a syntax error: "FILE:LINE:COL: LABEL: what", or
  /// "FILE:LINE:COL: what" when empty.
  std::string_view syntax_label = "invalid YAML";
};

/// Reads values out of one YAML document. Every failure throws `load_error` with the message
/// `NAME:LINE:COLUMN: path: what`. Not thread-safe (one per load).
class reader {
 public:
  explicit reader(std::string name, reader_options o = {}) : name_(std::move(name)), opts_(o) {}

  [[nodiscard]] const std::string& name() const { return name_; }

  /// The whole document of `text` (path ""); a syntax error throws
  /// `NAME:LINE:COL: invalid YAML: what`.
  [[nodiscard]] entry parse(std::string_view text) const;

  // -- mappings ---------------------------------------------------------------------------------

  /// The pairs of mapping `e` (null reads as empty). Keys outside `allowed` and duplicate keys
  /// are errors; an unknown key gets a "did you mean" hint when one is close.
  [[nodiscard]] std::vector<entry> entries(const entry& e,
                                           std::initializer_list<std::string_view> allowed);
  /// Same, with the allowed keys in a list built at run time (a table of sections).
  [[nodiscard]] std::vector<entry> entries(const entry& e,
                                           const std::vector<std::string_view>& allowed);
  /// The pairs of a mapping with free-form keys (labels, flags): null reads as empty; keys must
  /// be non-empty strings, each used once.
  [[nodiscard]] std::vector<entry> pairs(const entry& e);

  // -- sequences --------------------------------------------------------------------------------

  /// The items of sequence `e`, each with its own path ("rules[2]"); null reads as empty.
  [[nodiscard]] std::vector<entry> items(const entry& e);
  /// The items of `e`, a sequence that must not be empty.
  [[nodiscard]] std::vector<entry> non_empty_items(const entry& e);

  // -- scalars ----------------------------------------------------------------------------------

  /// A scalar as a string (with `${NAME}` replaced when the options say so).
  [[nodiscard]] std::string string(const entry& e);
  /// A string that must not be empty.
  [[nodiscard]] std::string non_empty_string(const entry& e);
  /// A secret (an API key): `string`, except that a `${NAME}` whose variable is unset is not an
  /// error here: it reads as "" and `unset` gets the message `string` would have failed with,
  /// for the one place that needs the value to decide (a node refuses to serve without its key;
  /// `sreh config check` warns).
  [[nodiscard]] std::string secret(const entry& e, std::string& unset);
  /// A plain (unquoted) integer in [min, max].
  [[nodiscard]] std::int64_t integer(const entry& e, std::int64_t min, std::int64_t max);
  /// A plain (unquoted) finite number.
  [[nodiscard]] double number(const entry& e);
  /// A duration like 30s, 15m, 1h30m or 2d (core/base/duration.hpp), in seconds, > 0.
  [[nodiscard]] std::int64_t duration_s(const entry& e);
  /// true or false (also True, TRUE, False, FALSE).
  [[nodiscard]] bool boolean(const entry& e);
  /// A string that must be one of `allowed`.
  [[nodiscard]] std::string one_of(const entry& e, std::initializer_list<std::string_view> allowed);

  /// A YAML mapping converted to JSON text (plain scalars become numbers, booleans and null
  /// where they read as such; quoted scalars stay strings).
  [[nodiscard]] std::string json_object(const entry& e);

  // -- errors -----------------------------------------------------------------------------------

  /// Throws `load_error` for the value of `e`.
  [[noreturn]] void fail(const entry& e, std::string_view what) const;
  /// Throws `load_error` "WHERE: PATH: WHAT" ("(top level)" for an empty path).
  [[noreturn]] void fail(const yaml::mark& m, std::string_view path, std::string_view what) const;

  /// "NAME:LINE:COLUMN" of a mark, or "NAME" when the mark is unknown.
  [[nodiscard]] std::string where(const yaml::mark& m) const;

  /// The mark recorded for `path` or its closest recorded parent ("store.url" → "store"), for
  /// errors found after reading.
  [[nodiscard]] yaml::mark mark_of(std::string path) const;

 private:
  /// The entry of key `k` (a scalar) and value `v` of mapping `parent`: fails on a key already in
  /// `seen`, records the value's mark.
  entry keyed(const entry& parent, const node& k, const node& v, std::set<std::string>& seen);

  std::map<std::string, yaml::mark> marks_; // of the values read so far, by path
  std::string name_;
  reader_options opts_;
};

// -- helpers --------------------------------------------------------------------------------------

/// Reads a YAML file (at most 4 MiB). Errors: `PATH: cannot read: <reason>` (not_found when the
/// file does not exist, invalid_argument otherwise).
[[nodiscard]] expected<std::string> read_text_file(const std::string& path);

/// Whether `text` is a YAML mapping with the top-level key `key` (what a file is, for `sreh config
/// check`: a Work template has `template:`, a flow `flow:`). False for text that does not parse.
[[nodiscard]] bool has_top_level_key(const std::string& text, std::string_view key);

/// The `*.yaml` and `*.yml` files of `dir` (not recursive), in name order. `what` names its
/// contents in the errors ("flows": "DIR: not a directory of flows").
[[nodiscard]] expected<std::vector<std::string>> yaml_files_in(const std::string& dir,
                                                               std::string_view what);

/// Replaces `${NAME}` with the value of environment variable NAME; the error names the
/// variable. Returns false and sets `error` when a variable is unset or the syntax is bad; with
/// `unset`, an unset variable is added to it and replaced by "" instead.
[[nodiscard]] bool substitute_env(std::string_view in, std::string& out, std::string& error,
                                  std::vector<std::string>* unset = nullptr);

/// Levenshtein distance of two names.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// The name of `allowed` closest to `key` (within two edits), or "" when none is close.
template <class Names>
[[nodiscard]] std::string_view closest(std::string_view key, const Names& allowed) {
  std::string_view best;
  std::size_t best_d = 3;
  for (std::string_view name : allowed) {
    auto d = edit_distance(key, name);
    if (d < best_d && d < std::max(key.size(), name.size()))
      best = name, best_d = d;
  }
  return best;
}

/// "unknown WHAT 'KEY' (did you mean 'X'?)", or "... (expected one of A, B)" when nothing is
/// close.
[[nodiscard]] std::string unknown(std::string_view what, std::string_view key,
                                  const std::vector<std::string_view>& allowed);

/// A short hash of a file's text (16 hex digits, FNV-1a): the version a loaded policy or Work
/// template is pinned to.
[[nodiscard]] std::string content_version(std::string_view text);

} // namespace sreh::config::yaml
