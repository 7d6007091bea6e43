#include "persistence/store/notify_store.hpp"

#include <array>

namespace sreh::persistence {

namespace {

constexpr std::array<const char*, 4> state_names{"pending", "delivered", "failed", "grouped"};

} // namespace

const char* to_string(delivery_state s) {
  return state_names[static_cast<std::size_t>(s)];
}

std::optional<delivery_state> parse_delivery_state(std::string_view s) {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (s == state_names[i])
      return static_cast<delivery_state>(i);
  return std::nullopt;
}

} // namespace sreh::persistence
