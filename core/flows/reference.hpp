#pragma once
// What a flow's texts may name: `inputs.NAME`, `steps.ID.output[.a.b...]`, `steps.ID.status` and
// `world.ENTITY.METRIC` — as paths in expressions and, in `${...}` placeholders, inside tool
// arguments, goals, labels, reasons, sub-flow inputs and expressions. Pure.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::flows {

struct reference {
  enum kind_t {
    input,       // inputs.NAME: `name`
    step_output, // steps.ID.output.a.b: `name` = ID, `path` = [a, b] (empty: the whole output)
    step_status, // steps.ID.status: "succeeded", "failed" or "skipped"
    world,       // world.ENTITY.METRIC: `name` = ENTITY, `path` = [METRIC]
  } kind = input;
  std::string name;
  std::vector<std::string> path;
};

/// Reads a dotted path. The error (invalid_argument) says which forms there are.
[[nodiscard]] expected<reference> parse_reference(std::string_view path);

/// One `${PATH}` of a text; `pos` is the 0-based offset of its `$`.
struct placeholder {
  std::string path;
  std::size_t pos = 0;
};

/// The placeholders of `text` in order; `$$` is a literal `$`. Errors read "position N: what"
/// (1-based): an unclosed `${`, an empty one.
[[nodiscard]] expected<std::vector<placeholder>> placeholders(std::string_view text);

/// The value a placeholder stands for, or an error naming what is missing.
using resolver = std::function<expected<std::string>(const reference& r)>;

/// `text` with every placeholder replaced by its value (and `$$` by `$`).
[[nodiscard]] expected<std::string> render(std::string_view text, const resolver& value);

/// Same for an expression's text: each value must read as one name or number there (letters,
/// digits, `_ - . +`), so that an input can name an entity (`world.${inputs.host}.disk_used`) but
/// never add to the expression.
[[nodiscard]] expected<std::string> render_expression(std::string_view text, const resolver& value);

/// The value `path` (`a.b.0`) names in `json_text`, as JSON text; `what` names the text in errors.
[[nodiscard]] expected<std::string> json_at(const std::string& json_text,
                                            const std::vector<std::string>& path,
                                            const std::string& what);

/// `args_json` (a JSON object whose strings may hold placeholders) with each string rendered.
[[nodiscard]] expected<std::string> render_json(std::string_view args_json, const resolver& value);

} // namespace sreh::flows
