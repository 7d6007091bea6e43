#include "core/model/goal.hpp"

#include <fmt/format.h>

#include <set>

#include "core/base/json.hpp"

namespace sreh {

namespace {

constexpr int max_body_depth = 32;
constexpr std::size_t max_goal_bytes = 4096;
constexpr std::size_t max_labels = 32;
constexpr std::size_t max_label_key = 63;
constexpr std::size_t max_label_value = 256;
constexpr std::int64_t max_deadline_seconds = 86'400;
constexpr double max_request_cost = 1e6; // budget.max_cost when the node sets none

using member_iter = rapidjson::Value::ConstMemberIterator;

error field_error(std::string_view path, std::string_view what) {
  return error{errc::invalid_argument, fmt::format("field '{}': {}", path, what)};
}

std::string_view name_of(const member_iter& m) {
  return {m->name.GetString(), m->name.GetStringLength()};
}

/// How a value reads in a message: numbers as written, other types by their type name.
std::string shown(const rapidjson::Value& v) {
  return v.IsNumber() ? json::stringify(v) : json::type_of(v);
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n\f\v";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos)
    return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool valid_label_key(std::string_view k) {
  if (k.empty() || k.size() > max_label_key)
    return false;
  for (char c : k) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-' || c == '/';
    if (!ok)
      return false;
  }
  return true;
}

error parse_goal(const rapidjson::Value& v, goal_request& out) {
  if (!v.IsString())
    return field_error("goal", fmt::format("expected a string, got {}", json::type_of(v)));
  std::string_view text{v.GetString(), v.GetStringLength()};
  if (text.size() > max_goal_bytes)
    return field_error(
      "goal", fmt::format("expected at most {} bytes, got {}", max_goal_bytes, text.size()));
  text = trim(text);
  if (text.empty())
    return field_error("goal", "must not be empty");
  out.goal = text;
  return {};
}

} // namespace

error parse_labels(const rapidjson::Value& v, goal_request& out) {
  if (!v.IsObject())
    return field_error("labels", fmt::format("expected an object, got {}", json::type_of(v)));
  if (v.MemberCount() > max_labels)
    return field_error(
      "labels", fmt::format("expected at most {} labels, got {}", max_labels, v.MemberCount()));
  std::set<std::string_view> seen;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    auto key = name_of(m);
    auto path = fmt::format("labels.{}", key);
    if (!valid_label_key(key))
      return field_error(path, fmt::format("invalid label key (1..{} characters of "
                                           "[a-zA-Z0-9_.-/])",
                                           max_label_key));
    if (!seen.insert(key).second)
      return field_error(path, "duplicate label");
    if (!m->value.IsString())
      return field_error(path, fmt::format("expected a string, got {}", json::type_of(m->value)));
    if (m->value.GetStringLength() > max_label_value)
      return field_error(path, fmt::format("expected at most {} bytes, got {}", max_label_value,
                                           m->value.GetStringLength()));
  }
  out.labels = json::stringify(v);
  return {};
}

namespace {

/// Reads an integer in [1, max] into `out`.
error parse_limit(const rapidjson::Value& v, std::string_view path, std::int64_t max,
                  std::int64_t& out) {
  if (!v.IsInt64() || v.GetInt64() < 1 || v.GetInt64() > max)
    return field_error(path,
                       fmt::format("expected an integer between 1 and {}, got {}", max, shown(v)));
  out = v.GetInt64();
  return {};
}

error parse_budget(const rapidjson::Value& v, const run_budget& defaults, goal_request& out) {
  if (!v.IsObject())
    return field_error("budget", fmt::format("expected an object, got {}", json::type_of(v)));
  std::set<std::string_view> seen;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    auto key = name_of(m);
    auto path = fmt::format("budget.{}", key);
    if (!seen.insert(key).second)
      return field_error(path, "duplicate field");
    error err;
    if (key == "max_steps") {
      err = parse_limit(m->value, path, defaults.max_steps, out.budget.max_steps);
    } else if (key == "max_tokens") {
      err = parse_limit(m->value, path, defaults.max_tokens, out.budget.max_tokens);
    } else if (key == "max_result_bytes") {
      err = parse_limit(m->value, path, defaults.max_result_bytes, out.budget.max_result_bytes);
    } else if (key == "max_cost") {
      // At most the node's default when it has one (a request lowers a budget, never raises it).
      const double most = defaults.max_cost > 0 ? defaults.max_cost : max_request_cost;
      if (!m->value.IsNumber() || !(m->value.GetDouble() > 0) || m->value.GetDouble() > most)
        err = field_error(path, fmt::format("expected a number above 0 and at most {}, got {}",
                                            most, shown(m->value)));
      else
        out.budget.max_cost = m->value.GetDouble();
    } else if (key == "deadline_seconds") {
      std::int64_t secs = 0;
      err = parse_limit(m->value, path, max_deadline_seconds, secs);
      // Relative here; the kernel turns it into an absolute deadline when the run is created.
      out.budget.deadline_us = secs * 1'000'000;
    } else {
      err = field_error(path, "unknown field (expected max_steps, max_tokens, "
                              "max_result_bytes, max_cost or deadline_seconds)");
    }
    if (err)
      return err;
  }
  return {};
}

} // namespace

expected<goal_request> parse_goal_request(std::string_view body, const run_budget& defaults) {
  auto doc = json::parse_object(body, max_body_depth);
  if (!doc)
    return doc.error();
  goal_request req;
  req.budget = defaults;
  std::set<std::string_view> seen;
  for (auto m = doc->MemberBegin(); m != doc->MemberEnd(); ++m) {
    auto key = name_of(m);
    if (!seen.insert(key).second)
      return field_error(key, "duplicate field");
    error err;
    if (key == "goal")
      err = parse_goal(m->value, req);
    else if (key == "labels")
      err = parse_labels(m->value, req);
    else if (key == "budget")
      err = parse_budget(m->value, defaults, req);
    else
      err = field_error(key, "unknown field (expected goal, labels or budget)");
    if (err)
      return err;
  }
  if (!seen.count("goal"))
    return field_error("goal", "is required");
  return req;
}

} // namespace sreh
