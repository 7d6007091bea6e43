#include "core/model/observation.hpp"

#include <algorithm>

namespace sreh::obs {

namespace {

constexpr std::pair<capability_kind, const char*> kind_names[] = {
  {capability_kind::topology, "topology"}, {capability_kind::describe, "describe"},
  {capability_kind::metric, "metric"},     {capability_kind::logs, "logs"},
  {capability_kind::deploys, "deploys"},   {capability_kind::flags, "flags"},
  {capability_kind::alerts, "alerts"},     {capability_kind::remedy, "remedy"},
  {capability_kind::recall, "recall"},
};

} // namespace

const char* to_string(capability_kind k) {
  for (auto& [kind, name] : kind_names)
    if (kind == k)
      return name;
  return "unknown";
}

std::optional<capability_kind> parse_capability_kind(std::string_view s) {
  for (auto& [kind, name] : kind_names)
    if (s == name)
      return kind;
  return std::nullopt;
}

bool capability::covers(std::string_view kind) const {
  return entity_kinds.empty() ||
         std::find(entity_kinds.begin(), entity_kinds.end(), kind) != entity_kinds.end();
}

std::optional<std::string> capability::argument(std::string_view r) const {
  auto it = args.find(r);
  if (it == args.end())
    return std::nullopt;
  return it->second;
}

std::string capability::renamed(std::string_view name) const {
  auto it = args.find(name);
  return it == args.end() ? std::string{name} : it->second;
}

} // namespace sreh::obs
