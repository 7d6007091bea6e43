#pragma once
// The routing tree (settings.hpp): which receivers a notice goes to, and the group each
// delivery belongs to.

#include <cstdint>
#include <string>
#include <vector>

#include "core/notify/notice.hpp"
#include "core/notify/settings.hpp"

namespace sreh::notify {

/// One receiver a notice is routed to, by the route that chose it.
struct routed {
  std::string receiver;
  std::string group_key; // "" when the route does not group
  std::int64_t repeat_interval_s = 0;
};

/// Does `r` match `n`: every `match` key equal (`role`: any of the notice's roles), every
/// `match_re` key matched whole. A route without keys matches everything.
[[nodiscard]] bool matches(const route& r, const notice& n);

/// The receivers `n` goes to through `routes`, each once (the first route that chose it), in
/// the order the tree chose them. Empty when no route matches.
[[nodiscard]] std::vector<routed> route_notice(const std::vector<route>& routes, const notice& n);

/// The group key of `n` under `group_by`: the keys and values joined ("" for no keys).
[[nodiscard]] std::string group_key(const std::vector<std::string>& group_by, const notice& n);

/// The wait before attempt `attempts + 1` after `attempts` failed ones: `min_ms` doubled per
/// failure, at most `max_ms`.
[[nodiscard]] std::int64_t retry_delay_ms(std::int64_t attempts, std::int64_t min_ms,
                                          std::int64_t max_ms);

} // namespace sreh::notify
