#include "core/policy/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/base/text.hpp"

namespace sreh::policy {

namespace {

constexpr timestamp_us us_per_second = 1'000'000;
constexpr timestamp_us us_per_day = 86'400 * us_per_second;
constexpr std::array<const char*, 7> day_names{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

// -- time ---------------------------------------------------------------------------------------

timestamp_us floor_div(timestamp_us a, timestamp_us b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/// UTC weekday (0 = Sunday) and hour of a timestamp. 1970-01-01 was a Thursday.
struct utc_time {
  int weekday;
  int hour;
};

utc_time utc_of(timestamp_us t) {
  auto days = floor_div(t, us_per_day);
  auto hour = (t - days * us_per_day) / (3600 * us_per_second);
  return {static_cast<int>(((days + 4) % 7 + 7) % 7), static_cast<int>(hour)};
}

bool is_absolute(const window& w) {
  return w.from != 0 || w.to != 0;
}

/// Weekly windows whose hours wrap midnight (from_hour > to_hour, e.g. 22-06) match on the
/// listed days from from_hour to midnight, and from midnight to to_hour: `days` names the day
/// of the hour being tested.
bool inside(const window& w, timestamp_us now) {
  if (is_absolute(w))
    return w.from <= now && now < w.to;
  auto t = utc_of(now);
  if (!w.days.empty() && std::find(w.days.begin(), w.days.end(), t.weekday) == w.days.end())
    return false;
  if (w.from_hour <= w.to_hour)
    return w.from_hour <= t.hour && t.hour < w.to_hour;
  return t.hour >= w.from_hour || t.hour < w.to_hour;
}

// -- matching -----------------------------------------------------------------------------------

/// Glob with `*` matching any run of characters (including none); anything else is literal.
bool glob_match(std::string_view pattern, std::string_view s) {
  std::size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pattern.size() && pattern[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

bool tool_matches(const rule& r, std::string_view tool) {
  return r.tools.empty() || std::any_of(r.tools.begin(), r.tools.end(),
                                        [&](const auto& g) { return glob_match(g, tool); });
}

bool listed(const std::vector<std::string>& allowed, const std::string& value) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

/// Past actions counted against `r.limit` for `a`: those of the rule's tools (and, by target,
/// on the same target) less than `per_s` seconds before now.
std::int64_t rate_count(const rule& r, const action& a) {
  const auto& l = *r.limit;
  auto since = a.now - l.per_s * us_per_second;
  return std::count_if(a.history.begin(), a.history.end(), [&](const past_action& h) {
    return h.at > since && tool_matches(r, h.tool) && (l.by != "target" || h.target == a.target);
  });
}

const window* matching_window(const rule& r, timestamp_us now) {
  for (const auto& w : r.during)
    if (inside(w, now))
      return &w;
  return nullptr;
}

bool target_matches(const rule& r, std::string_view target) {
  auto same = [&](const std::string& t) { return ascii_iequal(t, target); };
  return r.targets.empty() || std::any_of(r.targets.begin(), r.targets.end(), same);
}

bool matches(const rule& r, const action& a) {
  if (!tool_matches(r, a.tool) || !target_matches(r, a.target) || !listed(r.risks, a.risk) ||
      !listed(r.environments, a.environment) || !listed(r.tiers, a.tier))
    return false;
  for (const auto& [key, value] : r.labels) {
    auto it = a.labels.find(key);
    if (it == a.labels.end() || it->second != value)
      return false;
  }
  if (r.min_blast_radius && !(a.blast_radius >= *r.min_blast_radius))
    return false;
  if (!r.during.empty() && matching_window(r, a.now) == nullptr)
    return false;
  return !r.limit || rate_count(r, a) >= r.limit->max;
}

// -- reasons ------------------------------------------------------------------------------------

/// "daily", "Sat-Sun" (one run of days, which may wrap the week), or "Mon,Wed".
std::string describe_days(const std::vector<int>& days) {
  std::array<bool, 7> in{};
  for (auto d : days)
    in.at(static_cast<std::size_t>(d)) = true;
  auto count = std::count(in.begin(), in.end(), true);
  if (days.empty() || count == 7)
    return "daily";
  std::vector<int> starts; // days in the set whose previous day is not
  for (int d = 0; d < 7; ++d)
    if (in[d] && !in[(d + 6) % 7])
      starts.push_back(d);
  if (starts.size() == 1 && count > 1)
    return fmt::format("{}-{}", day_names[starts[0]], day_names[(starts[0] + count - 1) % 7]);
  std::vector<const char*> names;
  for (int d = 0; d < 7; ++d)
    if (in[d])
      names.push_back(day_names[d]);
  return fmt::format("{}", fmt::join(names, ","));
}

std::string describe_time(timestamp_us t) {
  char buf[32];
  auto s = format_rfc3339(t, buf);
  constexpr std::string_view whole_second = ".000000Z";
  if (s.size() > whole_second.size() && s.substr(s.size() - whole_second.size()) == whole_second)
    return fmt::format("{}Z", s.substr(0, s.size() - whole_second.size()));
  return std::string{s};
}

std::string describe(const window& w) {
  if (is_absolute(w))
    return fmt::format("{} to {}", describe_time(w.from), describe_time(w.to));
  return fmt::format("{} {:02d}-{:02d} UTC", describe_days(w.days), w.from_hour, w.to_hour);
}

std::string describe_effect(const rule& r) {
  switch (r.effect) {
  case verdict::allow:
    return "allowed";
  case verdict::deny:
    return "denied";
  case verdict::require_approval:
    return fmt::format("needs {} approval{} ({})", r.approval.approvers,
                       r.approval.approvers == 1 ? "" : "s", fmt::join(r.approval.roles, ", "));
  }
  return "";
}

/// The conditions that held, for a rule with neither a window nor a limit.
std::string describe_match(const rule& r, const action& a) {
  std::vector<std::string> parts;
  if (!r.tools.empty())
    parts.push_back(fmt::format("tool {}", a.tool));
  if (!r.risks.empty())
    parts.push_back(fmt::format("risk {}", a.risk));
  if (!r.environments.empty())
    parts.push_back(fmt::format("environment {}", a.environment));
  if (!r.tiers.empty())
    parts.push_back(fmt::format("tier {}", a.tier));
  for (const auto& [key, value] : r.labels)
    parts.push_back(fmt::format("label {}={}", key, value));
  if (r.min_blast_radius)
    parts.push_back(
      fmt::format("blast radius {:.2f} >= {:.2f}", a.blast_radius, *r.min_blast_radius));
  if (parts.empty())
    return describe_effect(r);
  return fmt::format("{} ({})", describe_effect(r), fmt::join(parts, ", "));
}

std::string default_reason(const rule& r, const action& a) {
  if (r.limit) {
    auto what =
      r.tools.empty() ? std::string{"actions"} : fmt::format("{}", fmt::join(r.tools, "|"));
    auto on = r.limit->by == "target" ? fmt::format(" on {}", a.target) : std::string{};
    return fmt::format("{} {}{} in the last {} s (max {})", rate_count(r, a), what, on,
                       r.limit->per_s, r.limit->max);
  }
  if (const auto* w = matching_window(r, a.now))
    return fmt::format("change freeze ({})", describe(*w));
  return describe_match(r, a);
}

decision decide_by_rule(const rule& r, const action& a) {
  decision d;
  d.effect = r.effect;
  d.rule_id = r.id;
  d.reason = fmt::format("rule '{}': {}", r.id, r.reason.empty() ? default_reason(r, a) : r.reason);
  if (r.effect == verdict::require_approval)
    d.approval = r.approval;
  return d;
}

mode mode_for(const policy_set& p, const action& a) {
  for (const auto& scope : {"service:" + a.target, "env:" + a.environment})
    if (auto it = p.scopes.find(scope); it != p.scopes.end())
      return it->second;
  return p.default_mode;
}

decision by_mode(mode m, verdict v, std::string reason) {
  decision d;
  d.effect = v;
  d.rule_id = fmt::format("mode:{}", to_string(m));
  d.reason = fmt::format("mode {}: {}", to_string(m), reason);
  return d;
}

} // namespace

const char* to_string(mode m) {
  switch (m) {
  case mode::read_only:
    return "read_only";
  case mode::review:
    return "review";
  case mode::autonomous:
    return "autonomous";
  }
  return "unknown";
}

const char* to_string(verdict v) {
  switch (v) {
  case verdict::allow:
    return "allow";
  case verdict::require_approval:
    return "require_approval";
  case verdict::deny:
    return "deny";
  }
  return "unknown";
}

std::optional<mode> parse_mode(std::string_view s) {
  for (auto m : {mode::read_only, mode::review, mode::autonomous})
    if (s == to_string(m))
      return m;
  return std::nullopt;
}

// read_only is a hard ceiling: under it a mutating action is denied whatever the rules say. A
// rule may still deny it (its id is then recorded), but no rule can allow it or send it for
// approval, so a scope switched to read_only stops every change at once.
decision evaluate(const policy_set& p, const action& a) {
  auto m = mode_for(p, a);
  bool read_only_tool = a.risk == "read_only";
  for (const auto& r : p.rules) {
    if (!matches(r, a))
      continue;
    if (m == mode::read_only && !read_only_tool && r.effect != verdict::deny)
      break;
    return decide_by_rule(r, a);
  }
  if (read_only_tool)
    return by_mode(m, verdict::allow, "read-only tools run");
  switch (m) {
  case mode::read_only:
    return by_mode(m, verdict::deny, "only read-only tools may run");
  case mode::review: {
    auto d = by_mode(m, verdict::require_approval, "mutating actions need approval");
    d.approval = p.default_approval;
    return d;
  }
  case mode::autonomous:
    break;
  }
  return by_mode(m, verdict::allow, "mutating actions run without approval");
}

std::int64_t longest_rate_window_s(const policy_set& p) {
  std::int64_t longest = 0;
  for (const auto& r : p.rules)
    if (r.limit)
      longest = std::max(longest, r.limit->per_s);
  return longest;
}

} // namespace sreh::policy
