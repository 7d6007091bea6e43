#include "core/base/json.hpp"

#include <fmt/format.h>
#include <rapidjson/error/en.h>

#include <cmath>

#include "core/base/byte_scan.hpp"

namespace sreh::json {

namespace {

/// The value of 4 hex digits at `s[i]`, or -1.
int hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size())
    return -1;
  int v = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

/// True when every number in `v` is finite. RapidJSON 1.1 reads some numbers past the double
/// range ("8111.0555e311") as infinity instead of refusing them, and its writer cannot write
/// infinity back (found by the fuzz target json_parse).
bool all_finite(const rapidjson::Value& v) {
  if (v.IsDouble())
    return std::isfinite(v.GetDouble());
  if (v.IsArray()) {
    for (const auto& x : v.GetArray())
      if (!all_finite(x))
        return false;
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject())
      if (!all_finite(m.value))
        return false;
  }
  return true;
}

/// What one pass over the text finds before RapidJSON reads it. Malformed text is left for
/// RapidJSON to report.
struct prescan_result {
  /// The first bracket past `max_depth` (counted outside strings, without recursing), or npos.
  std::size_t too_deep_at = std::string_view::npos;
  /// The first `\uDC00`..`\uDFFF` escape that does not follow a high-surrogate escape, or npos.
  /// RapidJSON 1.1 decodes such a lone low surrogate into bytes that are not UTF-8 (it rejects a
  /// lone high one), so text that parses would not parse again once written (found by the fuzz
  /// target json_parse).
  std::size_t lone_low_surrogate_at = std::string_view::npos;
  /// A number with an exponent or of over 300 digits: only such a number can be past the double
  /// range, so only then is the parsed document checked for infinities.
  bool big_number = false;
};

prescan_result prescan(std::string_view text, int max_depth) {
  prescan_result r;
  int depth = 0;
  bool in_string = false;
  bool after_high = false; // in a string: the previous character was a high-surrogate escape
  std::size_t digits = 0;  // outside strings: the length of the digit run just read
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == 'u') {
        int cp = hex4(text, i + 2);
        if (cp >= 0xdc00 && cp <= 0xdfff && !after_high &&
            r.lone_low_surrogate_at == std::string_view::npos)
          r.lone_low_surrogate_at = i;
        after_high = cp >= 0xd800 && cp <= 0xdbff;
        i += 5;
        continue;
      } else if (c == '\\') {
        ++i;
      }
      after_high = false;
      continue;
    }
    if (c >= '0' && c <= '9') {
      r.big_number = r.big_number || ++digits > 300;
      continue;
    }
    if ((c == 'e' || c == 'E') && (digits > 0 || (i > 0 && text[i - 1] == '.')))
      r.big_number = true;
    digits = 0;
    switch (c) {
    case '"':
      in_string = true;
      after_high = false;
      break;
    case '[':
    case '{':
      if (++depth > max_depth) {
        r.too_deep_at = i; // refused whatever follows
        return r;
      }
      break;
    case ']':
    case '}':
      --depth;
      break;
    default:
      break;
    }
  }
  return r;
}

/// Encodes one code point as the JSON escape "\uXXXX" (BMP only; enough for our escapes).
void append_u_escape(std::string& out, unsigned cp) {
  out += fmt::format("\\u{:04x}", cp);
}

/// Length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not valid.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = b < 0x80           ? 1
                  : (b >> 5) == 0x6  ? 2
                  : (b >> 4) == 0xe  ? 3
                  : (b >> 3) == 0x1e ? 4
                                     : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  unsigned cp = n == 1 ? b : n == 2 ? (b & 0x1f) : n == 3 ? (b & 0x0f) : (b & 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  static constexpr unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0; // overlong, out of range or a surrogate
  return n;
}

} // namespace

std::optional<std::size_t> invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto n = utf8_length(s, i);
    if (n == 0)
      return i;
    i += n;
  }
  return std::nullopt;
}

expected<rapidjson::Document> parse(std::string_view text, int max_depth) {
  auto scan = prescan(text, max_depth);
  if (auto at = scan.too_deep_at; at != std::string_view::npos)
    return error{errc::invalid_argument,
                 fmt::format("JSON nesting deeper than {} levels (at byte {})", max_depth, at)};
  // RapidJSON reads a NUL as the end of the input: anything after one would be ignored.
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return error{errc::invalid_argument,
                 fmt::format("invalid JSON at byte {}: NUL character", nul)};
  if (auto at = scan.lone_low_surrogate_at; at != std::string_view::npos)
    return error{errc::invalid_argument,
                 fmt::format("invalid JSON at byte {}: a low surrogate escape without its high "
                             "surrogate",
                             at)};
  rapidjson::Document doc;
  // Not kParseFullPrecisionFlag: in RapidJSON 1.1 it calls clz(0) on inputs like "0e82"
  // (UBSan, found by the fuzz target json_parse). The default path may read a number of more
  // than 15 digits one ulp off, which no field of ours needs.
  constexpr unsigned flags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
  doc.Parse<flags>(text.data(), text.size());
  if (doc.HasParseError())
    return error{errc::invalid_argument,
                 fmt::format("invalid JSON at byte {}: {}", doc.GetErrorOffset(),
                             rapidjson::GetParseError_En(doc.GetParseError()))};
  if (scan.big_number && !all_finite(doc))
    return error{errc::invalid_argument, "invalid JSON: a number is too big for a double"};
  return doc;
}

expected<rapidjson::Document> parse_object(std::string_view text, int max_depth) {
  auto doc = parse(text, max_depth);
  if (doc && !doc->IsObject())
    return error{errc::invalid_argument,
                 fmt::format("expected a JSON object, got {}", type_of(*doc))};
  return doc;
}

const char* type_of(const rapidjson::Value& v) {
  switch (v.GetType()) {
  case rapidjson::kNullType:
    return "null";
  case rapidjson::kFalseType:
  case rapidjson::kTrueType:
    return "boolean";
  case rapidjson::kObjectType:
    return "object";
  case rapidjson::kArrayType:
    return "array";
  case rapidjson::kStringType:
    return "string";
  case rapidjson::kNumberType:
    return "number";
  }
  return "unknown";
}

std::string stringify(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  v.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

void raw(writer& w, std::string_view json_text) {
  if (json_text.empty()) {
    w.Null();
    return;
  }
  auto type = json_text.front() == '{'   ? rapidjson::kObjectType
              : json_text.front() == '[' ? rapidjson::kArrayType
                                         : rapidjson::kStringType;
  w.raw_value(json_text, type);
}

void timestamp(writer& w, timestamp_us t) {
  if (t == 0) {
    w.Null();
    return;
  }
  char buf[32];
  auto s = format_rfc3339(t, buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void quote_into(std::string& out, std::string_view s) {
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    // A run of printable ASCII that needs no escape goes in at once.
    const std::size_t plain = i + find_json_special(s.substr(i));
    if (plain > i) {
      out.append(s.substr(i, plain - i));
      i = plain;
      continue;
    }
    char c = s[i];
    auto n = utf8_length(s, i);
    if (n == 0) {
      out += "\\ufffd"; // invalid UTF-8 byte: keep the output valid JSON
      ++i;
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        append_u_escape(out, static_cast<unsigned char>(c));
      else
        out.append(s.substr(i, n));
    }
    i += n;
  }
  out.push_back('"');
}

std::string quote(std::string_view s) {
  std::string out;
  quote_into(out, s);
  return out;
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject())
    return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string string_or(const rapidjson::Value& v, const char* key, std::string fallback) {
  auto* m = member(v, key);
  if (m == nullptr || !m->IsString())
    return fallback;
  return {m->GetString(), m->GetStringLength()};
}

bool bool_or(const rapidjson::Value& v, const char* key, bool fallback) {
  auto* m = member(v, key);
  return m != nullptr && m->IsBool() ? m->GetBool() : fallback;
}

std::optional<std::int64_t> int_of(const rapidjson::Value& v, const char* key) {
  auto* m = member(v, key);
  if (m == nullptr || !m->IsNumber())
    return std::nullopt;
  if (m->IsInt64())
    return m->GetInt64();
  if (m->IsUint64())
    return static_cast<std::int64_t>(std::min<std::uint64_t>(m->GetUint64(), INT64_MAX));
  double d = m->GetDouble();
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18)
    return static_cast<std::int64_t>(d);
  return std::nullopt;
}

std::string string_of(const rapidjson::Value* v) {
  return v && v->IsString() ? std::string{v->GetString(), v->GetStringLength()} : std::string{};
}

std::map<std::string, std::string> string_members(std::string_view text) {
  std::map<std::string, std::string> out;
  auto doc = parse(text);
  if (!doc || !doc->IsObject())
    return out;
  for (auto& m : doc->GetObject())
    if (m.value.IsString())
      out.emplace(m.name.GetString(), m.value.GetString());
  return out;
}

std::string text_of(const rapidjson::Value& v) {
  if (v.IsNull())
    return {};
  if (v.IsString())
    return {v.GetString(), v.GetStringLength()};
  return stringify(v);
}

} // namespace sreh::json
