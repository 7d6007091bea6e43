#include "plugins/tools/sandbox/yaml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace sreh::plugins::sandbox::detail {

namespace {

bool null_mark(const YAML::Mark& m) {
  return m.line < 0 || m.column < 0;
}

const char* kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

template <class Names>
std::string unknown_message(std::string_view what, std::string_view key, const Names& allowed) {
  std::string_view best;
  std::size_t best_d = 3;
  for (std::string_view a : allowed) {
    auto d = edit_distance(key, a);
    if (d < best_d && d < std::max(key.size(), a.size()))
      best = a, best_d = d;
  }
  if (!best.empty())
    return fmt::format("unknown {} '{}' (did you mean '{}'?)", what, key, best);
  return fmt::format("unknown {} '{}' (expected one of {})", what, key, fmt::join(allowed, ", "));
}

} // namespace

void yaml_reader::fail(const YAML::Mark& m, std::string_view path, std::string_view what) const {
  auto where = null_mark(m) ? name_ : fmt::format("{}:{}:{}", name_, m.line + 1, m.column + 1);
  throw load_error{fmt::format("{}: {}: {}", where, path.empty() ? "(top level)" : path, what)};
}

void yaml_reader::fail(const yaml_field& f, std::string_view what) const {
  fail(f.mark, f.path, what);
}

std::map<std::string, yaml_field>
yaml_reader::fields(const yaml_field& f, std::initializer_list<std::string_view> allowed,
                    std::initializer_list<std::string_view> required) {
  if (!f.node.IsMap())
    fail(f, fmt::format("expected a mapping, got {}", kind_of(f.node)));
  std::map<std::string, yaml_field> out;
  auto prefix = f.path.empty() ? std::string{} : f.path + ".";
  for (const auto& kv : f.node) {
    if (!kv.first.IsScalar())
      fail(kv.first.Mark(), f.path, "expected a string key");
    auto key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(kv.first.Mark(), prefix + key, unknown_message("key", key, allowed));
    if (out.count(key) != 0)
      fail(kv.first.Mark(), prefix + key, "duplicate key");
    auto mark = kv.second.IsNull() || null_mark(kv.second.Mark()) ? kv.first.Mark()
                                                                   : kv.second.Mark();
    out.emplace(key, yaml_field{kv.second, prefix + key, mark});
  }
  for (auto key : required)
    if (out.count(std::string{key}) == 0)
      fail(f, fmt::format("missing required field '{}'", key));
  return out;
}

std::vector<yaml_field> yaml_reader::items(const yaml_field& f) {
  std::vector<yaml_field> out;
  if (f.node.IsNull())
    return out;
  if (!f.node.IsSequence())
    fail(f, fmt::format("expected a sequence, got {}", kind_of(f.node)));
  for (std::size_t i = 0; i < f.node.size(); ++i) {
    auto n = f.node[i];
    out.push_back({n, fmt::format("{}[{}]", f.path, i), null_mark(n.Mark()) ? f.mark : n.Mark()});
  }
  return out;
}

std::string yaml_reader::string(const yaml_field& f) {
  if (!f.node.IsScalar())
    fail(f, fmt::format("expected a string, got {}", kind_of(f.node)));
  return f.node.Scalar();
}

std::string yaml_reader::name(const yaml_field& f) {
  auto s = string(f);
  if (s.empty() || s.size() > 128
      || std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }))
    fail(f, fmt::format("expected a name (1-128 characters, no spaces), got '{}'", s));
  return s;
}

std::int64_t yaml_reader::integer(const yaml_field& f, std::int64_t min, std::int64_t max) {
  auto s = f.node.IsScalar() ? f.node.Scalar() : std::string{};
  std::int64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!f.node.IsScalar() || s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size())
    fail(f, fmt::format("expected an integer, got {}",
                        f.node.IsScalar() ? "'" + s + "'" : kind_of(f.node)));
  if (v < min || v > max)
    fail(f, fmt::format("expected an integer between {} and {}, got {}", min, max, v));
  return v;
}

double yaml_reader::number(const yaml_field& f) {
  auto s = f.node.IsScalar() ? f.node.Scalar() : std::string{};
  std::istringstream in{s};
  double v = 0;
  in >> v;
  if (!f.node.IsScalar() || s.empty() || in.fail() || !in.eof() || v < 0)
    fail(f, fmt::format("expected a non-negative number, got {}",
                        f.node.IsScalar() ? "'" + s + "'" : kind_of(f.node)));
  return v;
}

bool yaml_reader::boolean(const yaml_field& f) {
  auto s = f.node.IsScalar() ? f.node.Scalar() : std::string{};
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  fail(f, fmt::format("expected true or false, got {}",
                      f.node.IsScalar() ? "'" + s + "'" : kind_of(f.node)));
}

std::int64_t yaml_reader::duration(const yaml_field& f, bool allow_negative) {
  auto s = string(f);
  auto d = parse_duration(s);
  if (!d)
    fail(f, fmt::format("expected a duration like -10m, 2h or 1h30m, got '{}'", s));
  if (*d < 0 && !allow_negative)
    fail(f, fmt::format("expected a positive duration, got '{}'", s));
  return *d;
}

std::string yaml_reader::one_of(const yaml_field& f,
                                std::initializer_list<std::string_view> allowed) {
  auto s = string(f);
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(f, unknown_message("value", s, allowed));
  return s;
}

std::vector<yaml_field> yaml_reader::name_list(const yaml_field& f, bool single_ok) {
  if (single_ok && f.node.IsScalar()) {
    (void) name(f);
    return {f};
  }
  auto xs = items(f);
  for (const auto& x : xs)
    (void) name(x);
  return xs;
}

std::map<std::string, std::string> yaml_reader::string_map(const yaml_field& f) {
  std::map<std::string, std::string> out;
  if (f.node.IsNull())
    return out;
  if (!f.node.IsMap())
    fail(f, fmt::format("expected a mapping, got {}", kind_of(f.node)));
  for (const auto& kv : f.node) {
    auto key = kv.first.Scalar();
    yaml_field v{kv.second, f.path + "." + key,
                 null_mark(kv.second.Mark()) ? kv.first.Mark() : kv.second.Mark()};
    if (!out.emplace(key, string(v)).second)
      fail(kv.first.Mark(), v.path, "duplicate key");
  }
  return out;
}

metric_map yaml_reader::baseline(const yaml_field& f, const std::vector<std::string>& metrics) {
  metric_map out;
  if (f.node.IsNull())
    return out;
  if (!f.node.IsMap())
    fail(f, fmt::format("expected a mapping of metric: number, got {}", kind_of(f.node)));
  for (const auto& kv : f.node) {
    auto key = kv.first.Scalar();
    yaml_field v{kv.second, f.path + "." + key,
                 null_mark(kv.second.Mark()) ? kv.first.Mark() : kv.second.Mark()};
    if (std::find(metrics.begin(), metrics.end(), key) == metrics.end())
      fail(kv.first.Mark(), v.path, unknown_message("metric", key, metrics));
    if (!out.emplace(key, number(v)).second)
      fail(kv.first.Mark(), v.path, "duplicate key");
  }
  return out;
}

yaml_field parse_yaml(const std::string& text, const yaml_reader& r) {
  try {
    auto node = YAML::Load(text);
    return {node, "", node.Mark()};
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, "(syntax)", e.msg);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw load_error{fmt::format("{}: cannot read the file", path), errc::not_found};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace sreh::plugins::sandbox::detail
