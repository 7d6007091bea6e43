#include "core/notify/routing.hpp"

#include <algorithm>
#include <regex>

namespace sreh::notify {

namespace {

bool key_equals(const notice& n, std::string_view key, std::string_view want) {
  if (key == "role")
    return std::find(n.roles.begin(), n.roles.end(), want) != n.roles.end();
  return match_value(n, key) == want;
}

bool key_matches(const notice& n, std::string_view key, const std::string& pattern) {
  // Patterns were compiled once when the config was read (config/notify), so this cannot throw
  // for a loaded config; a bad one here matches nothing.
  try {
    const std::regex re{pattern, std::regex::ECMAScript};
    if (key == "role")
      return std::any_of(n.roles.begin(), n.roles.end(),
                         [&](const std::string& r) { return std::regex_match(r, re); });
    return std::regex_match(match_value(n, key), re);
  } catch (const std::regex_error&) {
    return false;
  }
}

void add(std::vector<routed>& out, routed r) {
  if (std::none_of(out.begin(), out.end(),
                   [&](const routed& o) { return o.receiver == r.receiver; }))
    out.push_back(std::move(r));
}

/// Routes `n` through the children `routes` of a node whose receiver is `inherited`; true when
/// one of them took it.
bool walk(const std::vector<route>& routes, const notice& n, const std::string& inherited,
          std::vector<routed>& out) {
  bool taken = false;
  for (const auto& r : routes) {
    if (!matches(r, n))
      continue;
    const auto& receiver = r.receiver.empty() ? inherited : r.receiver;
    if (!walk(r.routes, n, receiver, out) && !receiver.empty())
      add(out, {receiver, group_key(r.group_by, n), r.repeat_interval_s});
    taken = true;
    if (!r.continue_)
      break;
  }
  return taken;
}

} // namespace

bool matches(const route& r, const notice& n) {
  for (const auto& [k, v] : r.match)
    if (!key_equals(n, k, v))
      return false;
  for (const auto& [k, v] : r.match_re)
    if (!key_matches(n, k, v))
      return false;
  return true;
}

std::vector<routed> route_notice(const std::vector<route>& routes, const notice& n) {
  std::vector<routed> out;
  walk(routes, n, "", out);
  return out;
}

std::string group_key(const std::vector<std::string>& group_by, const notice& n) {
  std::string out;
  for (const auto& k : group_by) {
    out += out.empty() ? "" : ",";
    out += k + "=" + (k == "role" ? (n.roles.empty() ? "" : n.roles.front()) : match_value(n, k));
  }
  return out;
}

std::int64_t retry_delay_ms(std::int64_t attempts, std::int64_t min_ms, std::int64_t max_ms) {
  std::int64_t d = std::max<std::int64_t>(min_ms, 1);
  for (std::int64_t i = 1; i < attempts && d < max_ms; ++i)
    d *= 2;
  return std::min(d, max_ms);
}

} // namespace sreh::notify
