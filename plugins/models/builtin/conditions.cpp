// The reasoner's readings of its evidence: canonical call keys, times and windows, and the
// knowledge base's conditions evaluated over an entity's snapshots.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "plugins/models/builtin/evidence.hpp"

namespace sreh::plugins::reasoner {

// -- call keys -----------------------------------------------------------------------------------

namespace {

using value = rapidjson::Value;

void write_sorted(const value& v, json::writer& w) {
  if (v.IsObject()) {
    std::vector<const value::Member*> ms;
    for (auto& m : v.GetObject())
      ms.push_back(&m);
    std::sort(ms.begin(), ms.end(), [](auto* a, auto* b) {
      return std::string_view{a->name.GetString(), a->name.GetStringLength()} <
             std::string_view{b->name.GetString(), b->name.GetStringLength()};
    });
    w.StartObject();
    for (auto* m : ms) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_sorted(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (auto& e : v.GetArray())
      write_sorted(e, w);
    w.EndArray();
  } else if (v.IsNumber() && v.IsDouble() &&
             v.GetDouble() == static_cast<double>(static_cast<std::int64_t>(v.GetDouble()))) {
    w.Int64(static_cast<std::int64_t>(v.GetDouble())); // 2.0 and 2 are the same argument
  } else {
    v.Accept(w);
  }
}

} // namespace

std::string canonical_json(const std::string& json_text) {
  auto doc = json::parse(json_text);
  if (!doc)
    return json_text;
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  write_sorted(*doc, w);
  return buf.GetString();
}

std::string call_key(const std::string& tool, const std::string& args_json) {
  return tool + " " + canonical_json(args_json);
}

// -- time ----------------------------------------------------------------------------------------

std::optional<std::int64_t> parse_rfc3339(const std::string& s) {
  // A time without a zone designator is read as UTC (some tools write them so).
  auto at = sreh::parse_rfc3339(s);
  if (!at && !s.empty() && s.back() != 'Z' && s.back() != 'z')
    at = sreh::parse_rfc3339(s + "Z");
  if (!at)
    return std::nullopt;
  return *at / 1'000'000 - (*at % 1'000'000 < 0 ? 1 : 0); // whole seconds, rounded down
}

std::optional<std::int64_t> parse_window(const std::string& s) {
  if (s.size() < 2)
    return std::nullopt;
  std::int64_t n = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return std::nullopt;
    n = n * 10 + (s[i] - '0');
  }
  switch (s.back()) {
  case 's':
    return n;
  case 'm':
    return n * 60;
  case 'h':
    return n * 3600;
  case 'd':
    return n * 86400;
  default:
    return std::nullopt;
  }
}

// -- conditions ----------------------------------------------------------------------------------

std::optional<double> current_value(const entity& e, const std::string& metric, step_range r,
                                    std::int64_t* at_step) {
  for (auto it = e.snapshots.rbegin(); it != e.snapshots.rend(); ++it) {
    if (!r.contains(it->step))
      continue;
    if (auto m = it->current.find(metric); m != it->current.end()) {
      if (at_step)
        *at_step = it->step;
      return m->second;
    }
  }
  return std::nullopt;
}

std::optional<double> baseline_value(const entity& e, const std::string& metric, step_range) {
  // Baselines do not change with actions: any observation will do.
  for (auto it = e.snapshots.rbegin(); it != e.snapshots.rend(); ++it)
    if (auto m = it->baseline.find(metric); m != it->baseline.end())
      return m->second;
  return std::nullopt;
}

namespace {

std::optional<double> field_value(const entity& e, const std::string& name, step_range r) {
  if (auto v = current_value(e, name, r))
    return v;
  // Fields like max_connections change with actions: prefer the observation within the range.
  for (auto it = e.snapshots.rbegin(); it != e.snapshots.rend(); ++it)
    if (auto m = it->fields.find(name); r.contains(it->step) && m != it->fields.end())
      return m->second;
  return baseline_value(e, name, r);
}

std::optional<double> rhs_value(const comparison& c, const entity& e, step_range r) {
  if (c.ref.empty())
    return c.constant;
  auto v = c.ref == "baseline" ? baseline_value(e, c.metric, r) : field_value(e, c.ref, r);
  if (!v)
    return std::nullopt;
  return c.factor * *v;
}

bool compare(double a, const std::string& op, double b) {
  if (op == ">")
    return a > b;
  if (op == ">=")
    return a >= b;
  if (op == "<")
    return a < b;
  if (op == "<=")
    return a <= b;
  if (op == "==")
    return a == b;
  return a != b;
}

} // namespace

std::optional<bool> evaluate(const condition& c, const entity& e, step_range r,
                             std::int64_t* at_step) {
  bool all = true;
  for (auto& cmp : c.all) {
    auto lhs = current_value(e, cmp.metric, r, at_step);
    auto rhs = rhs_value(cmp, e, r);
    if (!lhs || !rhs)
      return std::nullopt;
    all = all && compare(*lhs, cmp.op, *rhs);
  }
  return all;
}

std::string describe_values(const condition& c, const entity& e, step_range r) {
  std::string out;
  std::set<std::string> seen;
  for (auto& cmp : c.all) {
    if (!seen.insert(cmp.metric).second)
      continue;
    auto v = current_value(e, cmp.metric, r);
    if (!v)
      continue;
    if (!out.empty())
      out += ", ";
    out += fmt::format("{} {:g}", cmp.metric, *v);
    if (auto b = baseline_value(e, cmp.metric, r))
      out += fmt::format(" (baseline {:g})", *b);
    else if (!cmp.ref.empty() && cmp.ref != "baseline")
      if (auto f = field_value(e, cmp.ref, r))
        out += fmt::format(" ({} {:g})", cmp.ref, *f);
  }
  return out;
}

std::map<std::string, std::string> anomalies(const knowledge_base& kb, const entity& e,
                                             step_range r, bool mild) {
  std::map<std::string, std::string> out;
  for (auto& a : kb.anomalies) {
    auto& when = mild && a.mild ? *a.mild : a.when;
    if (!out.contains(a.cls) && evaluate(when, e, r).value_or(false))
      out[a.cls] = describe_values(when, e, r);
  }
  return out;
}

bool observed(const entity& e, step_range r) {
  return std::any_of(e.snapshots.begin(), e.snapshots.end(),
                     [&](const snapshot& s) { return r.contains(s.step); });
}

step_range settled_after(const entity& e, std::int64_t action, timestamp_us ended_at) {
  step_range r{action, 0};
  for (const auto& s : e.snapshots)
    if (s.step > action && s.settle_ms > 0 && s.taken_at < ended_at + s.settle_ms * 1000)
      r.from = std::max(r.from, s.step);
  return r;
}

timestamp_us settles_at(const entity& e, timestamp_us ended_at) {
  std::int64_t settle_ms = 0;
  for (const auto& s : e.snapshots)
    settle_ms = std::max(settle_ms, s.settle_ms);
  return settle_ms > 0 ? ended_at + settle_ms * 1000 : 0;
}

} // namespace sreh::plugins::reasoner
