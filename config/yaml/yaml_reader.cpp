#include "config/yaml/yaml_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace sreh::config::detail {

namespace {

constexpr int max_json_depth = 32;

bool is_null_mark(const YAML::Mark& m) {
  return m.line < 0 || m.column < 0;
}

const char* kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "nothing";
}

std::string join(std::initializer_list<std::string_view> names) {
  return fmt::format("{}", fmt::join(names, ", "));
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

bool plain_null(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool plain_bool(const std::string& s, bool& out) {
  if (s == "true" || s == "True" || s == "TRUE")
    return out = true, true;
  if (s == "false" || s == "False" || s == "FALSE")
    return out = false, true;
  return false;
}

template <class T>
bool parse_number(const std::string& s, T& out) {
  auto* end = s.data() + s.size();
  auto res = std::from_chars(s.data(), end, out);
  return res.ec == std::errc{} && res.ptr == end;
}

} // namespace

bool substitute_env(std::string_view in, std::string& out, std::string& error) {
  out.clear();
  for (std::size_t i = 0; i < in.size();) {
    if (in.compare(i, 2, "${") != 0) {
      out.push_back(in[i++]);
      continue;
    }
    auto close = in.find('}', i + 2);
    if (close == std::string_view::npos) {
      error = "unterminated '${' (expected ${NAME})";
      return false;
    }
    std::string name{in.substr(i + 2, close - i - 2)};
    bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]))
                 && std::all_of(name.begin(), name.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                    });
    if (!valid) {
      error = fmt::format("invalid environment variable name '{}' in '${{...}}'", name);
      return false;
    }
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      error = fmt::format("environment variable '{}' is not set", name);
      return false;
    }
    out += value;
    i = close + 1;
  }
  return true;
}

std::string_view closest(std::string_view key, std::initializer_list<std::string_view> allowed) {
  std::string_view best;
  std::size_t best_d = 3; // suggest only within two edits
  for (auto name : allowed) {
    auto d = edit_distance(key, name);
    if (d < best_d && d < std::max(key.size(), name.size())) {
      best = name;
      best_d = d;
    }
  }
  return best;
}

std::string yaml_reader::where(const YAML::Mark& m) const {
  if (is_null_mark(m))
    return name_;
  return fmt::format("{}:{}:{}", name_, m.line + 1, m.column + 1);
}

void yaml_reader::fail(const YAML::Mark& m, std::string_view path, std::string_view what) const {
  throw load_error{fmt::format("{}: {}: {}", where(m), path, what)};
}

void yaml_reader::fail(const yaml_entry& e, std::string_view what) const {
  fail(e.mark, e.path, what);
}

YAML::Mark yaml_reader::mark_of(std::string path) const {
  while (true) {
    if (auto it = marks_.find(path); it != marks_.end())
      return it->second;
    auto dot = path.rfind('.');
    if (dot == std::string::npos)
      return YAML::Mark::null_mark();
    path.resize(dot);
  }
}

std::vector<yaml_entry> yaml_reader::entries(const YAML::Node& n, const std::string& path,
                                             std::initializer_list<std::string_view> allowed) {
  std::vector<yaml_entry> out;
  if (n.IsNull())
    return out;
  auto prefix = path.empty() ? std::string{} : path + ".";
  if (!n.IsMap())
    fail(n.Mark(), path.empty() ? "(top level)" : path,
         fmt::format("expected a mapping, got {}", kind_of(n)));
  std::set<std::string> seen;
  for (const auto& kv : n) {
    const auto& key_node = kv.first;
    if (!key_node.IsScalar())
      fail(key_node.Mark(), path.empty() ? "(top level)" : path,
           fmt::format("expected a string key, got {}", kind_of(key_node)));
    auto key = key_node.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      auto hint = closest(key, allowed);
      auto what = hint.empty() ? fmt::format("unknown key '{}' (expected one of {})", key,
                                             join(allowed))
                               : fmt::format("unknown key '{}' (did you mean '{}'?)", key, hint);
      fail(key_node.Mark(), prefix + key, what);
    }
    if (!seen.insert(key).second)
      fail(key_node.Mark(), prefix + key, "duplicate key");
    // An empty value is marked where the next token starts: point at its key instead.
    auto mark = kv.second.IsNull() || is_null_mark(kv.second.Mark()) ? key_node.Mark()
                                                                      : kv.second.Mark();
    marks_[prefix + key] = mark;
    out.push_back({key, prefix + key, kv.second, mark, key_node.Mark()});
  }
  return out;
}

std::string yaml_reader::string(const yaml_entry& e) {
  if (!e.value.IsScalar())
    fail(e, fmt::format("expected a string, got {}", kind_of(e.value)));
  std::string out, err;
  if (!substitute_env(e.value.Scalar(), out, err))
    fail(e, err);
  return out;
}

std::string yaml_reader::non_empty_string(const yaml_entry& e) {
  auto s = string(e);
  if (s.empty())
    fail(e, "must not be empty");
  return s;
}

std::vector<yaml_entry> yaml_reader::items(const yaml_entry& e) {
  if (!e.value.IsSequence())
    fail(e, "expected a sequence (e.g. [a, b])");
  if (e.value.size() == 0)
    fail(e, "must not be empty");
  std::vector<yaml_entry> out;
  std::size_t i = 0;
  for (const auto& item : e.value) {
    auto path = fmt::format("{}[{}]", e.path, i++);
    out.push_back({"", path, item, item.Mark(), item.Mark()});
  }
  return out;
}

std::int64_t yaml_reader::integer(const yaml_entry& e, std::int64_t min, std::int64_t max) {
  if (!e.value.IsScalar())
    fail(e, fmt::format("expected an integer, got {}", kind_of(e.value)));
  const auto& s = e.value.Scalar();
  std::int64_t v = 0;
  if (e.value.Tag() == "!" || !parse_number(s, v))
    fail(e, fmt::format("expected an integer, got '{}'", s));
  if (v < min || v > max)
    fail(e, fmt::format("expected an integer between {} and {}, got {}", min, max, v));
  return v;
}

std::string yaml_reader::one_of(const yaml_entry& e,
                                std::initializer_list<std::string_view> allowed) {
  auto s = string(e);
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(e, fmt::format("expected one of {}, got '{}'", join(allowed), s));
  return s;
}

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Converts one YAML node to JSON; throws through `r.fail` with the node's own mark.
void write_json(yaml_reader& r, const YAML::Node& n, const std::string& path, int depth,
                json_writer& w) {
  if (depth > max_json_depth)
    r.fail(n.Mark(), path, fmt::format("nesting deeper than {} levels", max_json_depth));
  switch (n.Type()) {
    case YAML::NodeType::Map:
      w.StartObject();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          r.fail(kv.first.Mark(), path, "expected a string key");
        const auto& key = kv.first.Scalar();
        w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
        write_json(r, kv.second, path + "." + kv.first.Scalar(), depth + 1, w);
      }
      w.EndObject();
      return;
    case YAML::NodeType::Sequence: {
      w.StartArray();
      std::size_t i = 0;
      for (const auto& item : n)
        write_json(r, item, fmt::format("{}[{}]", path, i++), depth + 1, w);
      w.EndArray();
      return;
    }
    case YAML::NodeType::Scalar: {
      const auto& s = n.Scalar();
      bool b = false;
      std::int64_t i = 0;
      double d = 0;
      if (n.Tag() != "!") { // plain (unquoted) scalars may be typed
        if (plain_null(s))
          return void(w.Null());
        if (plain_bool(s, b))
          return void(w.Bool(b));
        if (parse_number(s, i))
          return void(w.Int64(i));
        if (parse_number(s, d) && std::isfinite(d))
          return void(w.Double(d));
      }
      std::string out, err;
      if (!substitute_env(s, out, err))
        r.fail(n.Mark(), path, err);
      w.String(out.data(), static_cast<rapidjson::SizeType>(out.size()));
      return;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: w.Null(); return;
  }
}

} // namespace

std::string yaml_reader::json_object(const yaml_entry& e) {
  if (e.value.IsNull())
    return "{}";
  if (!e.value.IsMap())
    fail(e, fmt::format("expected a mapping, got {}", kind_of(e.value)));
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  write_json(*this, e.value, e.path, 1, w);
  return {buf.GetString(), buf.GetSize()};
}

expected<std::string> read_text_file(const std::string& path) {
  constexpr std::size_t max_file_bytes = 4 << 20;
  auto fail = [&](int code) {
    return sreh::error{errc::invalid_argument,
                       fmt::format("{}: cannot read: {}", path, std::strerror(code))};
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(errno);
  std::string text;
  char buf[64 * 1024];
  while (true) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      auto code = errno;
      ::close(fd);
      return fail(code);
    }
    if (n == 0)
      break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_file_bytes) {
      ::close(fd);
      return sreh::error{errc::invalid_argument, fmt::format("{}: cannot read: larger than {} bytes",
                                                             path, max_file_bytes)};
    }
  }
  ::close(fd);
  return text;
}

} // namespace sreh::config::detail
