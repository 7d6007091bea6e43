#pragma once
// The condition language shared by scenarios (`mitigated`), Work templates (done-criteria) and
// flows (conditions, waits): comparisons `<path> <op> <value>` (ops < <= > >= == !=) joined with
// `and` / `or` (`and` binds tighter) and grouped with parentheses. A path is dotted names
// (`checkout.error_rate`, `inputs.count`, `steps.check.output.current.rps`); a value is a number,
// or, where the caller allows them (`literals::any`, flows), a quoted string or true / false,
// which compare with == and != only. Parsed once, evaluated many times against whatever supplies
// the values (a simulated world, world state, a flow run). No I/O.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::expr {

/// What a right-hand side (or a path's value) is.
enum class value_kind { number, string, boolean };
[[nodiscard]] const char* to_string(value_kind k); // "a number", "a string", "a boolean"

/// A value a path is compared with, or a path's value (flows).
using value = std::variant<double, std::string, bool>;
[[nodiscard]] value_kind kind_of(const value& v);

/// Which right-hand sides `parse` accepts.
enum class literals {
  numbers, // `<path> <op> <number>` only (scenarios, done-criteria)
  any,     // also "quoted" / 'quoted' strings and true / false (flows)
};

/// One `<path> <op> <value>`; `path` is `<entity>.<metric>` (the metric after the last dot).
struct comparison {
  std::string path;
  std::string entity;
  std::string metric;
  std::string op;        // < <= > >= == !=
  double value = 0;      // the number, when `rhs` is one
  expr::value rhs = 0.0; // what the path is compared with
  std::size_t pos = 0;   // 0-based offset of the path in the text
};

/// The value of `entity`.`metric`, or an error naming what is unknown.
using lookup =
  std::function<expected<double>(const std::string& entity, const std::string& metric)>;
/// The value of a comparison's path, of any kind (flows), or an error naming what is unknown.
using value_lookup = std::function<expected<expr::value>(const comparison& c)>;
/// The kind of a comparison's path known before evaluation: nothing when it is known only then
/// (a step's output), an error when the path itself is wrong (an unknown input).
using type_lookup = std::function<expected<std::optional<value_kind>>(const comparison& c)>;

class expression {
 public:
  [[nodiscard]] const std::string& text() const { return text_; }
  /// Every comparison, in the order written (to validate names at load time).
  [[nodiscard]] const std::vector<comparison>& comparisons() const { return comparisons_; }
  /// Looks up every comparison (no short circuit, so evaluation also validates every name).
  /// Errors read "position N: what" (1-based character position of the comparison).
  [[nodiscard]] expected<bool> evaluate(const lookup& values) const;
  /// Same with values of any kind; comparing values of two kinds is an error.
  [[nodiscard]] expected<bool> evaluate(const value_lookup& values) const;
  /// The static check: every path's kind (where `types` knows it) is the kind of what it is
  /// compared with. Errors read "position N: what".
  [[nodiscard]] sreh::error check_types(const type_lookup& types) const;

  struct node; // private to the implementation

 private:
  friend expected<expression> parse(std::string_view text, literals allowed);
  std::string text_;
  std::vector<comparison> comparisons_;
  std::shared_ptr<const node> root_;
};

/// Parses `text`. Errors (invalid_argument) read "position N: what".
[[nodiscard]] expected<expression> parse(std::string_view text,
                                         literals allowed = literals::numbers);

/// Parses and evaluates in one go.
[[nodiscard]] expected<bool> evaluate(std::string_view text, const lookup& values);

} // namespace sreh::expr
