#pragma once
// Kinds of Work and what each asks of its templates. The build knows incident, change,
// maintenance and investigation; plugins add kinds or requirements for a kind
// (plugins/register.hpp: register_sre_work_kinds makes a `change` state its rollback plan and
// an `incident` its severity). Template files are checked against the node's registry when
// they load (config/templates).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/works/template.hpp"

namespace sreh::works {

struct field_requirement {
  std::string field;
  field_type type = field_type::string;
  std::string why; // said when a template lacks it ("a change states how to roll it back")
};

struct kind_spec {
  std::string name;
  std::string description;
  std::vector<field_requirement> required_fields; // every template of the kind declares these
};

/// Concurrency: filled before the node loads its config, read-only afterwards.
class kind_registry {
 public:
  /// The builtin kinds, asking nothing.
  kind_registry();
  /// A new kind, or more requirements for a known one (added to its own).
  void add(kind_spec k);
  [[nodiscard]] const kind_spec* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
  /// What `t` lacks for its kind: "needs a field 'rollback' of type string (why)"; none when
  /// it meets every requirement (or its kind is unknown: the loader says that).
  [[nodiscard]] std::optional<std::string> unmet(const work_template& t) const;

 private:
  std::vector<kind_spec> kinds_;
};

/// The registry of a build without plugins.
[[nodiscard]] const kind_registry& builtin_kind_registry();

} // namespace sreh::works
