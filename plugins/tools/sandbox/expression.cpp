#include "plugins/tools/sandbox/expression.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sreh::plugins::sandbox::detail {

std::string check_metric(const world_model& w, std::string_view entity, std::string_view metric) {
  auto kind = w.kind_of(entity);
  if (!kind || *kind == entity_kind::flag)
    return fmt::format("unknown entity '{}'", entity);
  auto* h = w.find_host(entity);
  const auto& names = metric_names(*kind, h != nullptr && h->kind == host_kind::gpu);
  if (std::find(names.begin(), names.end(), metric) == names.end())
    return fmt::format("unknown metric '{}' of {} '{}' (expected one of {})", metric,
                       to_string(*kind), entity, fmt::join(names, ", "));
  return {};
}

} // namespace sreh::plugins::sandbox::detail
