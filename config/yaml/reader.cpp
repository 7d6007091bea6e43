#include "config/yaml/reader.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/base/duration.hpp"
#include "core/base/hash.hpp"
#include "core/base/json.hpp"

namespace sreh::config::yaml {

namespace {

constexpr int max_json_depth = 32;

std::string join(const std::vector<std::string_view>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
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

/// An empty value is marked where the next token starts: point at its key instead.
yaml::mark value_mark(const node& key, const node& value) {
  return value.is_null() || !value.mark().known() ? key.mark() : value.mark();
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

} // namespace

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

std::string unknown(std::string_view what, std::string_view key,
                    const std::vector<std::string_view>& allowed) {
  if (auto hint = closest(key, allowed); !hint.empty())
    return fmt::format("unknown {} '{}' (did you mean '{}'?)", what, key, hint);
  return fmt::format("unknown {} '{}' (expected one of {})", what, key, join(allowed));
}

bool substitute_env(std::string_view in, std::string& out, std::string& error,
                    std::vector<std::string>* unset) {
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
    bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                 std::all_of(name.begin(), name.end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                 });
    if (!valid) {
      error = fmt::format("invalid environment variable name '{}' in '${{...}}'", name);
      return false;
    }
    const char* value = std::getenv(name.c_str());
    if (value == nullptr && unset == nullptr) {
      error = fmt::format("environment variable '{}' is not set", name);
      return false;
    }
    if (value == nullptr)
      unset->push_back(name);
    else
      out += value;
    i = close + 1;
  }
  return true;
}

// -- errors ---------------------------------------------------------------------------------------

std::string reader::where(const yaml::mark& m) const {
  if (!m.known())
    return name_;
  return fmt::format("{}:{}:{}", name_, m.line + 1, m.column + 1);
}

void reader::fail(const yaml::mark& m, std::string_view path, std::string_view what) const {
  throw load_error{fmt::format("{}: {}: {}", where(m), path.empty() ? "(top level)" : path, what)};
}

void reader::fail(const entry& e, std::string_view what) const {
  fail(e.mark, e.path, what);
}

yaml::mark reader::mark_of(std::string path) const {
  while (true) {
    if (auto it = marks_.find(path); it != marks_.end())
      return it->second;
    auto dot = path.rfind('.');
    if (dot == std::string::npos)
      return {};
    path.resize(dot);
  }
}

entry reader::parse(std::string_view text) const {
  try {
    auto root = yaml::parse(text);
    return {"", "", root, root.mark(), root.mark()};
  } catch (const syntax_error& e) {
    auto label =
      opts_.syntax_label.empty() ? std::string{} : fmt::format("{}: ", opts_.syntax_label);
    throw load_error{fmt::format("{}: {}{}", where(e.mark), label, e.what)};
  }
}

// -- mappings and sequences -----------------------------------------------------------------------

std::vector<entry> reader::entries(const entry& e,
                                   std::initializer_list<std::string_view> allowed) {
  return entries(e, std::vector<std::string_view>(allowed));
}

std::vector<entry> reader::entries(const entry& e, const std::vector<std::string_view>& allowed) {
  std::vector<entry> out;
  if (e.value.is_null())
    return out;
  if (!e.value.is_mapping())
    fail(e.value.mark(), e.path, fmt::format("expected a mapping, got {}", e.value.kind_name()));
  std::set<std::string> seen;
  for (const auto& [k, v] : e.value.pairs()) {
    if (!k.is_scalar())
      fail(k.mark(), e.path, fmt::format("expected a string key, got {}", k.kind_name()));
    const auto& key = k.scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(k.mark(), child_path(e.path, key), unknown("key", key, allowed));
    out.push_back(keyed(e, k, v, seen));
  }
  return out;
}

std::vector<entry> reader::pairs(const entry& e) {
  std::vector<entry> out;
  if (e.value.is_null())
    return out;
  if (!e.value.is_mapping())
    fail(e, fmt::format("expected a mapping, got {}", e.value.kind_name()));
  std::set<std::string> seen;
  for (const auto& [k, v] : e.value.pairs()) {
    if (!k.is_scalar() || k.scalar().empty())
      fail(k.mark(), e.path, "expected a non-empty string key");
    const auto& key = k.scalar();
    if (auto at = json::invalid_utf8_at(key))
      fail(k.mark(), e.path,
           fmt::format("a key is not valid UTF-8 (byte 0x{:02x} at offset {})",
                       static_cast<unsigned char>(key[*at]), *at));
    out.push_back(keyed(e, k, v, seen));
  }
  return out;
}

entry reader::keyed(const entry& parent, const node& k, const node& v,
                    std::set<std::string>& seen) {
  const auto& key = k.scalar();
  auto path = child_path(parent.path, key);
  if (!seen.insert(key).second)
    fail(k.mark(), path, "duplicate key");
  auto mark = value_mark(k, v);
  marks_[path] = mark;
  return {key, path, v, mark, k.mark()};
}

std::vector<entry> reader::items(const entry& e) {
  std::vector<entry> out;
  if (e.value.is_null())
    return out;
  if (!e.value.is_sequence())
    fail(e, "expected a sequence (e.g. [a, b])");
  std::size_t i = 0;
  for (const auto& item : e.value.items()) {
    auto path = fmt::format("{}[{}]", e.path, i++);
    auto mark = item.mark().known() ? item.mark() : e.mark;
    out.push_back({"", path, item, mark, mark});
  }
  return out;
}

std::vector<entry> reader::non_empty_items(const entry& e) {
  if (!e.value.is_sequence())
    fail(e, "expected a sequence (e.g. [a, b])");
  if (e.value.size() == 0)
    fail(e, "must not be empty");
  return items(e);
}

// -- scalars --------------------------------------------------------------------------------------

std::string reader::string(const entry& e) {
  if (!e.value.is_scalar())
    fail(e, fmt::format("expected a string, got {}", e.value.kind_name()));
  std::string out = e.value.scalar(), err;
  // Every string read goes out again as JSON, in logs and in messages: it must be text.
  if (auto at = json::invalid_utf8_at(out))
    fail(e, fmt::format("not valid UTF-8 (byte 0x{:02x} at offset {})",
                        static_cast<unsigned char>(out[*at]), *at));
  if (opts_.substitute_env && !substitute_env(e.value.scalar(), out, err))
    fail(e, err);
  return out;
}

std::string reader::secret(const entry& e, std::string& unset) {
  if (!opts_.substitute_env || !e.value.is_scalar() || json::invalid_utf8_at(e.value.scalar()))
    return string(e); // its errors
  std::string out, err;
  std::vector<std::string> names;
  if (!substitute_env(e.value.scalar(), out, err, &names))
    fail(e, err);
  if (!names.empty())
    unset = fmt::format("{}: {}: environment variable '{}' is not set", where(e.mark), e.path,
                        names.front());
  return out;
}

std::string reader::non_empty_string(const entry& e) {
  auto s = string(e);
  if (s.empty())
    fail(e, "must not be empty");
  return s;
}

std::int64_t reader::integer(const entry& e, std::int64_t min, std::int64_t max) {
  if (!e.value.is_scalar())
    fail(e, fmt::format("expected an integer, got {}", e.value.kind_name()));
  const auto& s = e.value.scalar();
  std::int64_t v = 0;
  if (e.value.quoted() || !parse_number(s, v))
    fail(e, fmt::format("expected an integer, got '{}'", s));
  if (v < min || v > max)
    fail(e, fmt::format("expected an integer between {} and {}, got {}", min, max, v));
  return v;
}

double reader::number(const entry& e) {
  if (!e.value.is_scalar())
    fail(e, fmt::format("expected a number, got {}", e.value.kind_name()));
  const auto& s = e.value.scalar();
  double v = 0;
  if (e.value.quoted() || !parse_number(s, v) || !std::isfinite(v))
    fail(e, fmt::format("expected a number, got '{}'", s));
  return v;
}

std::int64_t reader::duration_s(const entry& e) {
  auto s = string(e);
  auto d = parse_duration_s(s);
  if (!d || *d < 0 || s.front() == '+')
    fail(e, fmt::format("expected a duration like 30s, 15m, 1h or 2d, got '{}'", s));
  if (*d == 0)
    fail(e, "must be longer than 0");
  return *d;
}

bool reader::boolean(const entry& e) {
  bool b = false;
  if (e.value.is_scalar() && !e.value.quoted() && plain_bool(e.value.scalar(), b))
    return b;
  fail(e, fmt::format("expected true or false, got {}",
                      e.value.is_scalar() ? "'" + e.value.scalar() + "'" : e.value.kind_name()));
}

std::string reader::one_of(const entry& e, std::initializer_list<std::string_view> allowed) {
  auto s = string(e);
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(e, fmt::format("expected one of {}, got '{}'", join(allowed), s));
  return s;
}

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Converts one YAML node to JSON; throws through `r.fail` with the node's own mark.
void write_json(reader& r, bool substitute, const node& n, const std::string& path, int depth,
                json_writer& w) {
  if (depth > max_json_depth)
    r.fail(n.mark(), path, fmt::format("nesting deeper than {} levels", max_json_depth));
  switch (n.type()) {
  case node::kind::mapping:
    w.StartObject();
    for (const auto& [k, v] : n.pairs()) {
      if (!k.is_scalar())
        r.fail(k.mark(), path, "expected a string key");
      const auto& key = k.scalar();
      w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
      write_json(r, substitute, v, path + "." + key, depth + 1, w);
    }
    w.EndObject();
    return;
  case node::kind::sequence: {
    w.StartArray();
    std::size_t i = 0;
    for (const auto& item : n.items())
      write_json(r, substitute, item, fmt::format("{}[{}]", path, i++), depth + 1, w);
    w.EndArray();
    return;
  }
  case node::kind::scalar: {
    const auto& s = n.scalar();
    bool b = false;
    std::int64_t i = 0;
    double d = 0;
    if (!n.quoted()) { // plain scalars may be typed
      if (plain_null(s))
        return void(w.Null());
      if (plain_bool(s, b))
        return void(w.Bool(b));
      if (parse_number(s, i))
        return void(w.Int64(i));
      if (parse_number(s, d) && std::isfinite(d))
        return void(w.Double(d));
    }
    std::string out = s, err;
    if (substitute && !substitute_env(s, out, err))
      r.fail(n.mark(), path, err);
    w.String(out.data(), static_cast<rapidjson::SizeType>(out.size()));
    return;
  }
  case node::kind::null:
    w.Null();
    return;
  }
}

} // namespace

std::string reader::json_object(const entry& e) {
  if (e.value.is_null())
    return "{}";
  if (!e.value.is_mapping())
    fail(e, fmt::format("expected a mapping, got {}", e.value.kind_name()));
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  write_json(*this, opts_.substitute_env, e.value, e.path, 1, w);
  return {buf.GetString(), buf.GetSize()};
}

// -- files ----------------------------------------------------------------------------------------

expected<std::string> read_text_file(const std::string& path) {
  constexpr std::size_t max_file_bytes = 4 << 20;
  auto fail = [&](int code) {
    return sreh::error{code == ENOENT ? errc::not_found : errc::invalid_argument,
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
      return sreh::error{
        errc::invalid_argument,
        fmt::format("{}: cannot read: larger than {} bytes", path, max_file_bytes)};
    }
  }
  ::close(fd);
  return text;
}

bool has_top_level_key(const std::string& text, std::string_view key) {
  reader r{"check"};
  try {
    auto root = r.parse(text);
    if (!root.value.is_mapping())
      return false;
    for (const auto& e : r.pairs(root))
      if (e.key == key)
        return true;
  } catch (const load_error&) {
  }
  return false;
}

expected<std::vector<std::string>> yaml_files_in(const std::string& dir, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return sreh::error{errc::not_found, fmt::format("{}: not a directory of {}", dir, what)};
  std::vector<std::string> files;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    auto ext = f.path().extension();
    if (f.is_regular_file() && (ext == ".yaml" || ext == ".yml"))
      files.push_back(f.path().string());
  }
  if (ec)
    return sreh::error{errc::invalid_argument,
                       fmt::format("{}: cannot list: {}", dir, ec.message())};
  std::sort(files.begin(), files.end());
  return files;
}

std::string content_version(std::string_view text) {
  return fnv1a64_hex(text);
}

} // namespace sreh::config::yaml
