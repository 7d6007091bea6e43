#include "core/flows/run_context.hpp"

#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/expr/expression.hpp"
#include "core/flows/inputs.hpp"

namespace sreh::flows {

expected<std::string> run_context::value_json(const reference& r) const {
  switch (r.kind) {
  case reference::input: {
    auto i = v_.inputs.find(r.name);
    if (i == v_.inputs.end())
      return sreh::error{errc::not_found, fmt::format("inputs.{}: not given", r.name)};
    return i->second;
  }
  case reference::step_output:
  case reference::step_status: {
    const step_result* res = find(r.name);
    if (r.kind == reference::step_status)
      return json::quote(res ? res->status : "skipped");
    if (!res)
      return sreh::error{errc::not_found,
                         fmt::format("steps.{}: the step was skipped, it has no output", r.name)};
    return json_at(res->output, r.path, "steps." + r.name + ".output");
  }
  case reference::world: {
    if (!v_.world || r.path.empty())
      return sreh::error{errc::not_found, "world state is not available on this node"};
    auto x = v_.world(r.name, r.path.front());
    if (!x)
      return x.error();
    if (auto* d = std::get_if<double>(&*x))
      return fmt::format("{}", *d);
    if (auto* b = std::get_if<bool>(&*x))
      return std::string{*b ? "true" : "false"};
    return json::quote(std::get<std::string>(*x));
  }
  }
  return sreh::error{errc::internal, "unknown reference"};
}

expected<std::string> run_context::text(const reference& r) const {
  auto j = value_json(r);
  if (!j)
    return j;
  return placeholder_text(*j);
}

resolver run_context::texts() const {
  return [this](const reference& r) { return text(r); };
}

expected<bool> run_context::holds(const std::string& text, std::string& observed,
                                  std::string* shown) const {
  auto rendered = render_expression(text, texts());
  if (!rendered)
    return rendered.error();
  if (shown)
    *shown = *rendered;
  auto e = expr::parse(*rendered, expr::literals::any);
  if (!e)
    return e.error();
  std::string seen;
  auto ok = e->evaluate([&](const expr::comparison& c) -> expected<expr::value> {
    auto ref = parse_reference(c.path);
    if (!ref)
      return ref.error();
    auto j = value_json(*ref);
    if (!j)
      return j.error();
    seen += fmt::format("{}{}:{}", seen.empty() ? "" : ",", json::quote(c.path), *j);
    return expression_value(*j);
  });
  observed = "{" + seen + "}";
  return ok;
}

} // namespace sreh::flows
