#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>

#include "config/policy/policy_config.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/duration.hpp"

namespace sreh::config {

namespace {

using yaml::entry;
using yaml::reader;
using namespace sreh::policy;

constexpr std::int64_t max_approvers = 100;
constexpr std::int64_t max_rate = 1'000'000;

// -- scalars and lists --------------------------------------------------------------------------

std::vector<std::string> strings(reader& r, const entry& e) {
  std::vector<std::string> out;
  for (const auto& item : r.non_empty_items(e))
    out.push_back(r.non_empty_string(item));
  return out;
}

std::vector<std::string> strings_of(reader& r, const entry& e,
                                    std::initializer_list<std::string_view> allowed) {
  std::vector<std::string> out;
  for (const auto& item : r.non_empty_items(e))
    out.push_back(r.one_of(item, allowed));
  return out;
}

std::vector<std::string> roles(reader& r, const entry& e) {
  return strings_of(r, e, {"viewer", "operator", "approver", "admin"});
}

/// A plain (unquoted) number in [0, 1].
double share(reader& r, const entry& e) {
  if (!e.value.is_scalar())
    r.fail(e, "expected a number between 0 and 1");
  const auto& s = e.value.scalar();
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (e.value.quoted() || res.ec != std::errc{} || res.ptr != s.data() + s.size())
    r.fail(e, fmt::format("expected a number between 0 and 1, got '{}'", s));
  if (!(v >= 0 && v <= 1))
    r.fail(e, fmt::format("expected a number between 0 and 1, got {}", s));
  return v;
}

timestamp_us time_of(reader& r, const entry& e) {
  auto s = r.string(e);
  auto t = parse_rfc3339(s);
  if (!t)
    r.fail(e, fmt::format("expected an RFC 3339 time like 2025-12-24T00:00:00Z, got '{}'", s));
  return *t;
}

/// Calls `fn(value_entry)` for each `key: value` of a mapping with free-form keys (labels,
/// scopes); the entry's `key_mark` points at the key.
template <class F>
void for_each_pair(reader& r, const entry& e, F fn) {
  if (!e.value.is_mapping())
    r.fail(e, "expected a mapping of name: value");
  for (const auto& f : r.pairs(e))
    fn(f);
}

std::map<std::string, std::string> string_map(reader& r, const entry& e) {
  std::map<std::string, std::string> out;
  for_each_pair(r, e, [&](const entry& f) { out[f.key] = r.string(f); });
  return out;
}

// -- sections -----------------------------------------------------------------------------------

/// Reads the keys present in `e` over `spec` (so a rule's approval inherits the policy default).
void read_approval(reader& r, const entry& e, approval_spec& spec) {
  if (!e.value.is_mapping())
    r.fail(e, "expected a mapping with approvers, roles, timeout, on_timeout, escalate_to");
  std::optional<entry> on_timeout, escalate_to;
  for (const auto& f :
       r.entries(e, {"approvers", "roles", "timeout", "on_timeout", "escalate_to"})) {
    if (f.key == "approvers") {
      spec.approvers = r.integer(f, 1, max_approvers);
    } else if (f.key == "roles") {
      spec.roles = roles(r, f);
    } else if (f.key == "timeout") {
      spec.timeout_s = r.duration_s(f);
    } else if (f.key == "on_timeout") {
      spec.on_timeout = r.one_of(f, {"deny", "escalate"});
      on_timeout.emplace(f);
    } else {
      spec.escalate_to = roles(r, f);
      escalate_to.emplace(f);
    }
  }
  if (spec.on_timeout == "escalate" && spec.escalate_to.empty())
    r.fail(on_timeout ? *on_timeout : e,
           "on_timeout: escalate needs escalate_to (the roles to escalate to)");
  if (escalate_to && spec.on_timeout != "escalate")
    r.fail(*escalate_to, "is only used with on_timeout: escalate");
  if (spec.on_timeout != "escalate")
    spec.escalate_to.clear(); // an inherited list means nothing once timeouts deny
}

/// 0 = Sunday .. 6 = Saturday.
int day_of(reader& r, const entry& e) {
  static constexpr std::string_view names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  auto name = r.one_of(e, {"sun", "mon", "tue", "wed", "thu", "fri", "sat"});
  return static_cast<int>(std::find(std::begin(names), std::end(names), name) - names);
}

window read_window(reader& r, const entry& e) {
  if (!e.value.is_mapping())
    r.fail(e, "expected a mapping: {days, from_hour, to_hour} or {from, to}");
  window w;
  std::optional<entry> weekly, from, to;
  for (const auto& f : r.entries(e, {"days", "from_hour", "to_hour", "from", "to"})) {
    if (f.key == "days") {
      for (const auto& d : r.non_empty_items(f))
        w.days.push_back(day_of(r, d));
    } else if (f.key == "from_hour") {
      w.from_hour = static_cast<int>(r.integer(f, 0, 23));
    } else if (f.key == "to_hour") {
      w.to_hour = static_cast<int>(r.integer(f, 0, 24));
    } else if (f.key == "from") {
      w.from = time_of(r, f);
      from.emplace(f);
    } else {
      w.to = time_of(r, f);
      to.emplace(f);
    }
    if (f.key == "days" || f.key == "from_hour" || f.key == "to_hour")
      weekly.emplace(f);
  }
  if (from || to) {
    if (weekly)
      r.fail(*weekly, "a window is weekly (days, hours) or absolute (from, to), not both");
    if (!from || !to)
      r.fail(e, fmt::format("missing key '{}' (an absolute window needs from and to)",
                            from ? "to" : "from"));
    if (w.to <= w.from)
      r.fail(*to, "must be after 'from'");
  } else if (w.from_hour == w.to_hour) {
    r.fail(weekly ? *weekly : e, "from_hour and to_hour must differ (the window would be empty)");
  }
  return w;
}

rate_limit read_rate_limit(reader& r, const entry& e) {
  if (!e.value.is_mapping())
    r.fail(e, "expected a mapping: {max, per, by}");
  rate_limit l;
  bool has_max = false, has_per = false;
  for (const auto& f : r.entries(e, {"max", "per", "by"})) {
    if (f.key == "max") {
      l.max = r.integer(f, 1, max_rate);
      has_max = true;
    } else if (f.key == "per") {
      l.per_s = r.duration_s(f);
      has_per = true;
    } else {
      l.by = r.one_of(f, {"target", "tool"});
    }
  }
  if (!has_max || !has_per)
    r.fail(e, fmt::format("missing key '{}'", has_max ? "per" : "max"));
  return l;
}

void read_when(reader& r, const entry& e, rule& out) {
  if (!e.value.is_null() && !e.value.is_mapping())
    r.fail(e, "expected a mapping of conditions");
  for (const auto& f : r.entries(e, {"tools", "targets", "risks", "environments", "tiers", "labels",
                                     "min_blast_radius", "during", "rate_limit"})) {
    if (f.key == "tools")
      out.tools = strings(r, f);
    else if (f.key == "targets")
      out.targets = strings(r, f);
    else if (f.key == "risks")
      out.risks = strings_of(r, f, {"read_only", "low", "medium", "high"});
    else if (f.key == "environments")
      out.environments = strings(r, f);
    else if (f.key == "tiers")
      out.tiers = strings_of(r, f, {"critical", "standard", "batch"});
    else if (f.key == "labels")
      out.labels = string_map(r, f);
    else if (f.key == "min_blast_radius")
      out.min_blast_radius = share(r, f);
    else if (f.key == "during")
      for (const auto& w : r.non_empty_items(f))
        out.during.push_back(read_window(r, w));
    else
      out.limit = read_rate_limit(r, f);
  }
}

bool valid_id(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

rule read_rule(reader& r, const entry& e, const approval_spec& default_approval) {
  if (!e.value.is_mapping())
    r.fail(e, "expected a mapping with id, when, effect");
  rule out;
  out.approval = default_approval;
  std::optional<entry> id, effect, approval;
  for (const auto& f :
       r.entries(e, {"id", "description", "when", "effect", "approval", "reason"})) {
    if (f.key == "id") {
      out.id = r.string(f);
      if (!valid_id(out.id))
        r.fail(f, fmt::format("expected letters, digits, '-', '_' or '.', got '{}'", out.id));
      id.emplace(f);
    } else if (f.key == "description") {
      out.description = r.string(f);
    } else if (f.key == "when") {
      read_when(r, f, out);
    } else if (f.key == "effect") {
      auto v = r.one_of(f, {"allow", "require_approval", "deny"});
      out.effect = v == "allow"  ? verdict::allow
                   : v == "deny" ? verdict::deny
                                 : verdict::require_approval;
      effect.emplace(f);
    } else if (f.key == "approval") {
      read_approval(r, f, out.approval);
      approval.emplace(f);
    } else {
      out.reason = r.string(f);
    }
  }
  if (!id)
    r.fail(e, "missing key 'id'");
  if (!effect)
    r.fail(e, "missing key 'effect' (allow, require_approval or deny)");
  if (approval && out.effect != verdict::require_approval)
    r.fail(approval->key_mark, approval->path, "is only used with effect: require_approval");
  return out;
}

void read_scopes(reader& r, const entry& e, policy_set& p) {
  for_each_pair(r, e, [&](const entry& f) {
    auto colon = f.key.find(':');
    auto kind = f.key.substr(0, colon);
    if (colon == std::string::npos || colon + 1 == f.key.size() ||
        (kind != "env" && kind != "service"))
      r.fail(f.key_mark, f.path,
             fmt::format("expected a scope 'env:NAME' or 'service:NAME', got '{}'", f.key));
    p.scopes[f.key] = *parse_mode(r.one_of(f, {"read_only", "review", "autonomous"}));
  });
}

void read_rules(reader& r, const entry& e, policy_set& p) {
  std::map<std::string, yaml::mark> seen;
  for (const auto& item : r.non_empty_items(e)) {
    auto rule = read_rule(r, item, p.default_approval);
    auto where = r.mark_of(item.path + ".id");
    if (auto [it, fresh] = seen.emplace(rule.id, where); !fresh)
      r.fail(where, item.path + ".id",
             fmt::format("duplicate rule id '{}' (first at {})", rule.id, r.where(it->second)));
    p.rules.push_back(std::move(rule));
  }
}

void read_policy(reader& r, const entry& root, policy_set& p) {
  auto entries = r.entries(root, {"mode", "scopes", "default_approval", "rules"});
  // Rules inherit default_approval wherever it is written in the file: read them last.
  for (const auto& e : entries) {
    if (e.key == "mode")
      p.default_mode = *parse_mode(r.one_of(e, {"read_only", "review", "autonomous"}));
    else if (e.key == "scopes")
      read_scopes(r, e, p);
    else if (e.key == "default_approval")
      read_approval(r, e, p.default_approval);
  }
  for (const auto& e : entries)
    if (e.key == "rules" && !e.value.is_null())
      read_rules(r, e, p);
}

} // namespace

namespace {

expected<policy_set> load_policy(const std::string& text, const std::string& name,
                                 bool substitute_env) {
  policy_set p;
  p.version = yaml::content_version(text);
  reader r{name, {.substitute_env = substitute_env}};
  try {
    auto root = r.parse(text);
    if (!root.value.is_null() && !root.value.is_mapping())
      r.fail(root, "expected a mapping with mode, scopes, default_approval, rules");
    read_policy(r, root, p);
  } catch (const yaml::load_error& e) {
    return error{errc::invalid_argument, e.message};
  }
  return p;
}

} // namespace

expected<policy_set> load_policy_string(const std::string& text, const std::string& name) {
  return load_policy(text, name, true);
}

expected<policy_set> load_request_policy(const std::string& text, const std::string& name) {
  return load_policy(text, name, false);
}

expected<policy_set> load_policy_file(const std::string& path) {
  auto text = yaml::read_text_file(path);
  if (!text)
    return text.error();
  return load_policy_string(*text, path);
}

expected<policy_set> node_policy(const node_config& cfg) {
  if (!cfg.policy_file.empty())
    return load_policy_file(cfg.policy_file);
  policy_set p;
  auto m = parse_mode(cfg.policy_mode);
  if (!m)
    return sreh::error{errc::invalid_argument, "policy_mode '" + cfg.policy_mode + "' is unknown"};
  p.default_mode = *m;
  p.version = "mode:" + cfg.policy_mode;
  return p;
}

} // namespace sreh::config
