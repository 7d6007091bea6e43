#include "plugins/tools/sandbox/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/base/duration.hpp"

namespace sreh::plugins::sandbox::detail {

namespace yaml = config::yaml;

reader file_reader(const std::string& name) {
  return reader{name, {.substitute_env = false, .syntax_label = "(syntax)"}};
}

std::map<std::string, entry> fields(reader& r, const entry& f,
                                    std::initializer_list<std::string_view> allowed,
                                    std::initializer_list<std::string_view> required) {
  if (!f.value.is_mapping())
    r.fail(f, fmt::format("expected a mapping, got {}", f.value.kind_name()));
  std::map<std::string, entry> out;
  for (auto& e : r.entries(f, allowed))
    out.emplace(e.key, std::move(e));
  for (auto key : required)
    if (out.count(std::string{key}) == 0)
      r.fail(f, fmt::format("missing required field '{}'", key));
  return out;
}

std::string name(reader& r, const entry& f) {
  auto s = r.string(f);
  if (s.empty() || s.size() > 128 ||
      std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }))
    r.fail(f, fmt::format("expected a name (1-128 characters, no spaces), got '{}'", s));
  return s;
}

double number(reader& r, const entry& f) {
  auto s = f.value.scalar();
  std::istringstream in{s};
  double v = 0;
  in >> v;
  if (!f.value.is_scalar() || s.empty() || in.fail() || !in.eof() || v < 0)
    r.fail(f, fmt::format("expected a non-negative number, got {}",
                          f.value.is_scalar() ? "'" + s + "'" : f.value.kind_name()));
  return v;
}

std::int64_t duration(reader& r, const entry& f, bool allow_negative) {
  auto s = r.string(f);
  auto d = parse_duration_s(s);
  if (!d)
    r.fail(f, fmt::format("expected a duration like -10m, 2h or 1h30m, got '{}'", s));
  if (*d < 0 && !allow_negative)
    r.fail(f, fmt::format("expected a positive duration, got '{}'", s));
  return *d;
}

std::string choice(reader& r, const entry& f, std::initializer_list<std::string_view> allowed) {
  auto s = r.string(f);
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    r.fail(f, yaml::unknown("value", s, allowed));
  return s;
}

std::vector<entry> name_list(reader& r, const entry& f, bool single_ok) {
  if (single_ok && f.value.is_scalar()) {
    (void)name(r, f);
    return {f};
  }
  auto xs = r.items(f);
  for (const auto& x : xs)
    (void)name(r, x);
  return xs;
}

std::map<std::string, std::string> string_map(reader& r, const entry& f) {
  std::map<std::string, std::string> out;
  for (const auto& e : r.pairs(f))
    out.emplace(e.key, r.string(e));
  return out;
}

metric_map baseline(reader& r, const entry& f, const std::vector<std::string>& metrics) {
  metric_map out;
  if (!f.value.is_null() && !f.value.is_mapping())
    r.fail(f, fmt::format("expected a mapping of metric: number, got {}", f.value.kind_name()));
  for (const auto& e : r.pairs(f)) {
    if (std::find(metrics.begin(), metrics.end(), e.key) == metrics.end())
      r.fail(e.key_mark, e.path, yaml::unknown("metric", e.key, {metrics.begin(), metrics.end()}));
    out.emplace(e.key, number(r, e));
  }
  return out;
}

} // namespace sreh::plugins::sandbox::detail
