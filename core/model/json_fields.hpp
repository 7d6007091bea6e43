#pragma once
// Private helpers of the JSON codecs (json_codecs.cpp, approval_json.cpp).

#include <fmt/format.h>

#include "core/base/json.hpp"

namespace sreh::json::detail {

using rapidjson::SizeType;

inline void str(writer& w, std::string_view s) {
  w.String(s.data(), static_cast<SizeType>(s.size()));
}

inline void str_or_null(writer& w, std::string_view s) {
  if (s.empty())
    w.Null();
  else
    str(w, s);
}

template <class T>
inline std::string serialize(const T& x) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  write(w, x);
  return {buf.GetString(), buf.GetSize()};
}

/// Reads the members of one decoded object. Missing members keep their defaults (older
/// records); a member of the wrong type records the first error and the rest are skipped.
class fields {
 public:
  fields(const rapidjson::Value& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  [[nodiscard]] const error& err() const { return err_; }

  void text(const char* name, std::string& out, bool nullable = false) {
    if (auto* v = find(name, nullable ? &out : nullptr)) {
      if (v->IsString())
        out.assign(v->GetString(), v->GetStringLength());
      else
        fail(name, "a string", *v);
    }
  }

  void integer(const char* name, std::int64_t& out) {
    if (auto* v = find(name, nullptr)) {
      if (v->IsInt64())
        out = v->GetInt64();
      else
        fail(name, "an integer", *v);
    }
  }

  void number(const char* name, double& out) {
    if (auto* v = find(name, nullptr)) {
      if (v->IsNumber())
        out = v->GetDouble();
      else
        fail(name, "a number", *v);
    }
  }

  void boolean(const char* name, bool& out) {
    if (auto* v = find(name, nullptr)) {
      if (v->IsBool())
        out = v->GetBool();
      else
        fail(name, "a boolean", *v);
    }
  }

  /// A JSON value stored as text; null reads as "" when `nullable`.
  void raw_text(const char* name, std::string& out, bool nullable = false) {
    if (auto* v = find(name, nullable ? &out : nullptr))
      out = stringify(*v);
  }

  /// An RFC 3339 timestamp; null reads as 0.
  void time(const char* name, timestamp_us& out) {
    std::string s;
    if (auto* v = find(name, &s)) {
      auto t = v->IsString() ? parse_rfc3339({v->GetString(), v->GetStringLength()}) : std::nullopt;
      if (t)
        out = *t;
      else
        fail(name, "an RFC 3339 timestamp", *v);
    } else if (err_.code == errc::ok && obj_.HasMember(name)) {
      out = 0;
    }
  }

  template <class Enum, class Parse>
  void enumeration(const char* name, Enum& out, Parse parse_fn, std::optional<Enum> null_value) {
    auto it = obj_.FindMember(name);
    if (err_ || it == obj_.MemberEnd())
      return;
    if (it->value.IsNull() && null_value) {
      out = *null_value;
      return;
    }
    auto parsed = it->value.IsString()
                    ? parse_fn({it->value.GetString(), it->value.GetStringLength()})
                    : std::nullopt;
    if (parsed)
      out = *parsed;
    else
      fail(name, "a known name", it->value);
  }

  /// A nested object; nullptr (and an error) when present but not an object.
  const rapidjson::Value* object(const char* name) {
    auto* v = find(name, nullptr);
    if (v && !v->IsObject()) {
      fail(name, "an object", *v);
      return nullptr;
    }
    return v;
  }

 private:
  /// The member, or nullptr when missing, null (then `null_out` is cleared) or after an error.
  const rapidjson::Value* find(const char* name, std::string* null_out) {
    if (err_)
      return nullptr;
    auto it = obj_.FindMember(name);
    if (it == obj_.MemberEnd())
      return nullptr;
    if (it->value.IsNull() && null_out) {
      null_out->clear();
      return nullptr;
    }
    return &it->value;
  }

  void fail(const char* name, const char* what, const rapidjson::Value& got) {
    err_ = error{errc::invalid_argument, fmt::format("field '{}{}': expected {}, got {}", prefix_,
                                                     name, what, type_of(got))};
  }

  const rapidjson::Value& obj_;
  std::string prefix_;
  error err_;
};

} // namespace sreh::json::detail
