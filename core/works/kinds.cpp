#include "core/works/kinds.hpp"

#include <fmt/format.h>

namespace sreh::works {

kind_registry::kind_registry() {
  for (const auto& k : builtin_kinds())
    kinds_.push_back({k, {}, {}});
}

void kind_registry::add(kind_spec k) {
  for (auto& known : kinds_)
    if (known.name == k.name) {
      if (known.description.empty())
        known.description = std::move(k.description);
      for (auto& r : k.required_fields)
        known.required_fields.push_back(std::move(r));
      return;
    }
  kinds_.push_back(std::move(k));
}

const kind_spec* kind_registry::find(std::string_view name) const {
  for (const auto& k : kinds_)
    if (k.name == name)
      return &k;
  return nullptr;
}

std::vector<std::string> kind_registry::names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_)
    out.push_back(k.name);
  return out;
}

std::optional<std::string> kind_registry::unmet(const work_template& t) const {
  const auto* k = find(t.kind);
  if (k == nullptr)
    return std::nullopt;
  for (const auto& r : k->required_fields) {
    const auto* f = t.field(r.field);
    if (f == nullptr || f->type != r.type)
      return fmt::format("a template of kind {} needs a field '{}' of type {} ({})", t.kind,
                         r.field, to_string(r.type), r.why);
  }
  return std::nullopt;
}

const kind_registry& builtin_kind_registry() {
  static const kind_registry r;
  return r;
}

} // namespace sreh::works
