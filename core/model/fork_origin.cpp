#include "core/model/fork_origin.hpp"

#include "core/base/json.hpp"

namespace sreh {

std::optional<fork_origin> fork_origin_of(const run& r) {
  if (r.kind != "goal" || r.spec.find("\"forked_from\"") == std::string::npos)
    return std::nullopt;
  auto doc = json::parse(r.spec);
  const auto* from = doc && doc->IsObject() ? json::member(*doc, "forked_from") : nullptr;
  if (!from || !from->IsObject())
    return std::nullopt;
  fork_origin o;
  o.run_id = json::string_or(*from, "run");
  o.step = json::int_of(*from, "step").value_or(0);
  if (const auto* e = json::member(*doc, "edits"); e && e->IsArray())
    for (const auto& n : e->GetArray())
      if (n.IsInt64())
        o.edited.push_back(n.GetInt64());
  o.policy = json::string_or(*doc, "policy");
  return o;
}

} // namespace sreh
