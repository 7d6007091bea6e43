#pragma once
// The condition language shared by scenarios (`mitigated`), Work templates (done-criteria) and,
// later, flows: comparisons `<entity>.<metric> <op> <number>` (ops < <= > >= == !=) joined with
// `and` / `or` (`and` binds tighter) and grouped with parentheses. Parsed once, evaluated many
// times against whatever supplies the values (a simulated world, world state). No I/O.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::expr {

/// One `<path> <op> <number>`; `path` is `<entity>.<metric>` (the metric after the last dot).
struct comparison {
  std::string path;
  std::string entity;
  std::string metric;
  std::string op; // < <= > >= == !=
  double value = 0;
  std::size_t pos = 0; // 0-based offset of the path in the text
};

/// The value of `entity`.`metric`, or an error naming what is unknown.
using lookup =
  std::function<expected<double>(const std::string& entity, const std::string& metric)>;

class expression {
 public:
  [[nodiscard]] const std::string& text() const { return text_; }
  /// Every comparison, in the order written (to validate names at load time).
  [[nodiscard]] const std::vector<comparison>& comparisons() const { return comparisons_; }
  /// Looks up every comparison (no short circuit, so evaluation also validates every name).
  /// Errors read "position N: what" (1-based character position of the comparison).
  [[nodiscard]] expected<bool> evaluate(const lookup& values) const;

  struct node; // private to the implementation

 private:
  friend expected<expression> parse(std::string_view text);
  std::string text_;
  std::vector<comparison> comparisons_;
  std::shared_ptr<const node> root_;
};

/// Parses `text`. Errors (invalid_argument) read "position N: what".
[[nodiscard]] expected<expression> parse(std::string_view text);

/// Parses and evaluates in one go.
[[nodiscard]] expected<bool> evaluate(std::string_view text, const lookup& values);

} // namespace sreh::expr
