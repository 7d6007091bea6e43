#pragma once
// A parsed YAML document as a read-only tree, free of yaml-cpp: what every YAML file of the
// project (node config, policy, topology, sandbox worlds and scenarios, the reasoner's knowledge
// base) is read from. Read it through `yaml::reader` (reader.hpp), which names file, line and
// column in every error.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sreh::config::yaml {

/// Where something was written: 0-based line and column; negative when unknown.
struct mark {
  int line = -1;
  int column = -1;
  [[nodiscard]] bool known() const { return line >= 0 && column >= 0; }
};

/// A node of a parsed document: a cheap handle (copies share the tree, which lives as long as
/// any handle to it). Read-only, so a copy never writes through to the tree. A default node is
/// null with an unknown mark. Not thread-safe: one document per thread.
class node {
 public:
  enum class kind { null, scalar, sequence, mapping };

  node();

  [[nodiscard]] kind type() const;
  [[nodiscard]] bool is_null() const { return type() == kind::null; }
  [[nodiscard]] bool is_scalar() const { return type() == kind::scalar; }
  [[nodiscard]] bool is_sequence() const { return type() == kind::sequence; }
  [[nodiscard]] bool is_mapping() const { return type() == kind::mapping; }
  /// "nothing", "a scalar", "a sequence" or "a mapping", for error messages.
  [[nodiscard]] const char* kind_name() const;

  /// The text of a scalar ("" for anything else).
  [[nodiscard]] const std::string& scalar() const;
  /// Whether a scalar was quoted ('x' or "x"): a quoted scalar is a string, never a number,
  /// boolean or null.
  [[nodiscard]] bool quoted() const;
  /// Where the node starts (yaml-cpp marks an empty value where the next token starts).
  [[nodiscard]] yaml::mark mark() const;

  /// Items of a sequence, or pairs of a mapping; 0 for anything else.
  [[nodiscard]] std::size_t size() const;
  /// The items of a sequence, in order (empty for anything else).
  [[nodiscard]] std::vector<node> items() const;
  /// The `key: value` pairs of a mapping in the order written, duplicate keys kept (empty for
  /// anything else).
  [[nodiscard]] std::vector<std::pair<node, node>> pairs() const;
  /// The value of the first `key` of a mapping; nothing when absent or not a mapping.
  [[nodiscard]] std::optional<node> find(std::string_view key) const;

  struct impl; // holds the yaml-cpp node (node.cpp)

 private:
  explicit node(std::shared_ptr<const impl> p) : p_(std::move(p)) {}
  friend node parse(std::string_view text);
  std::shared_ptr<const impl> p_;
};

/// Thrown by `parse` for text that is not YAML; `yaml::reader::parse` turns it into a message.
struct syntax_error {
  yaml::mark mark;
  std::string what; // yaml-cpp's words, e.g. "end of sequence flow not found"
};

/// Parses one YAML document (empty text is a null node). Throws `syntax_error`.
[[nodiscard]] node parse(std::string_view text);

} // namespace sreh::config::yaml
