#pragma once
// Work templates (DESIGN.md, "Works control plane"): what a Work of a kind is made from — typed
// fields, a title, SLA deadlines, the goal its runs pursue, the policy scope of their actions,
// the done-criteria over world state and the double-texting policy. Pure: the YAML loader is
// config/templates, the orchestrator actors/works.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/works/work.hpp"

namespace sreh::works {

enum class field_type { string, integer, number, boolean, choice };

[[nodiscard]] const char* to_string(field_type t);
[[nodiscard]] std::optional<field_type> parse_field_type(std::string_view s);

struct field_spec {
  std::string name;
  field_type type = field_type::string;
  bool required = false;
  std::optional<std::string> default_value; // as written (checked against the type on load)
  std::vector<std::string> choices;         // field_type::choice
  std::string description;
};

/// `{field}` placeholders in a title, goal, label or done-criteria; `{{` and `}}` are braces.
struct text_template {
  std::string text;
  [[nodiscard]] bool empty() const { return text.empty(); }
};

/// The fields a template text names, in order of appearance; an error for an unclosed or empty
/// `{`. (Positions are 1-based characters.)
[[nodiscard]] expected<std::vector<std::string>> placeholders(std::string_view text);
/// `text` with every `{field}` replaced by `values[field]`; an error names a field without one.
[[nodiscard]] expected<std::string> render(std::string_view text,
                                           const std::map<std::string, std::string>& values);

/// "checkout.error_rate < 0.01 for 5m": a condition (core/expr) that must hold for `for_s`.
struct done_criteria {
  text_template condition;
  std::int64_t for_s = 0;
};

/// Splits an optional trailing "for DURATION" off `text`; an error for a bad duration.
[[nodiscard]] expected<done_criteria> parse_done_criteria(std::string_view text);

struct work_template {
  std::string name;
  std::string version; // content hash of the file: a Work stays pinned to the one it was made from
  std::string label;   // the author's own version label ("3", "2026-11"), shown next to it
  std::string kind;    // incident | change | maintenance | investigation | a plugin's
  std::string description;
  text_template title;
  std::vector<field_spec> fields;
  sla_policy sla;
  text_template goal; // what each run of the Work pursues
  /// Or a flow each run follows (docs/flows.md, "Works run flows"), with its inputs (texts with
  /// `{field}` placeholders, read as the input's type); `goal` is then empty.
  std::string flow;
  std::map<std::string, text_template> flow_inputs;
  std::string flow_where; // FILE:LINE:COL of `run.flow`, for the check against the node's flows
  std::map<std::string, text_template> labels; // put on each run
  std::string policy_scope;                    // the policy scope its runs' actions fall under
  std::optional<done_criteria> done;
  double_texting on_trigger = double_texting::enqueue;
  std::string source; // the file it came from
  std::string text;   // the file's text: stored with the first Work pinned to this version

  [[nodiscard]] const field_spec* field(std::string_view name) const;
  /// Whether its Works have runs (a goal or a flow).
  [[nodiscard]] bool runs() const { return !goal.empty() || !flow.empty(); }
};

/// The kinds every build knows; plugins add theirs (config::template_options).
[[nodiscard]] const std::vector<std::string>& builtin_kinds();

/// A Work's fields from a JSON object (`{"service": "checkout", "replicas": 3}`): every key a
/// field of `t`, each value of the field's type (integers as JSON integers, choices one of
/// theirs), defaults filled in, required ones present. Values come back as text, the form
/// templates render. Errors (invalid_argument) name the field: "fields.replicas: expected an
/// integer, got string".
[[nodiscard]] expected<std::map<std::string, std::string>>
resolve_fields(const work_template& t, std::string_view fields_json);

} // namespace sreh::works
