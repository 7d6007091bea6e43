#pragma once

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/base/json.hpp"

namespace sreh::json {

// -- small objects in one expression, over json::writer -------------------------------------------
//
// `json::object("n", 3, "tool", name, "args", json::raw_text{args})` writes {"n":3,"tool":"...",
// "args":{...}}: the one way to build a short JSON object (an event's data, a step's result)
// without spelling out the writer calls. Strings are escaped as `json::quote` does (invalid UTF-8
// becomes U+FFFD), numbers and booleans as fmt prints them, so the bytes match what the codecs
// write.

/// A JSON text already serialized (a stored payload, validated when stored), written as is; null
/// when empty.
struct raw_text {
  std::string_view text;
};

/// `text` as a raw value, or `fallback` (a JSON text) when `text` is empty.
[[nodiscard]] inline raw_text raw_or(std::string_view text, std::string_view fallback) {
  return raw_text{text.empty() ? fallback : text};
}

/// `s` as a string, or null when empty.
[[nodiscard]] inline std::optional<std::string_view> string_or_null(std::string_view s) {
  return s.empty() ? std::nullopt : std::optional<std::string_view>{s};
}

namespace detail {

inline void value(writer& w, std::string_view s) {
  thread_local std::string quoted; // reused: no allocation per string written
  quoted.clear();
  quote_into(quoted, s);
  w.raw_value(quoted, rapidjson::kStringType);
}
inline void value(writer& w, const char* s) {
  value(w, std::string_view{s});
}
inline void value(writer& w, const std::string& s) {
  value(w, std::string_view{s});
}
inline void value(writer& w, bool b) {
  w.Bool(b);
}
inline void value(writer& w, std::nullptr_t) {
  w.Null();
}
inline void value(writer& w, raw_text r) {
  raw(w, r.text);
}
template <std::integral I>
requires(!std::same_as<I, bool>) void value(writer& w, I i) {
  if constexpr (std::is_signed_v<I>)
    w.Int64(static_cast<std::int64_t>(i));
  else
    w.Uint64(static_cast<std::uint64_t>(i));
}
inline void value(writer& w, double d) {
  auto s = fmt::format("{}", d);
  w.RawValue(s.data(), s.size(), rapidjson::kNumberType);
}
inline void value(writer& w, const std::vector<std::string>& strings) {
  w.StartArray();
  for (const auto& s : strings)
    value(w, std::string_view{s});
  w.EndArray();
}
template <std::integral I>
void value(writer& w, const std::vector<I>& numbers) {
  w.StartArray();
  for (auto n : numbers)
    value(w, n);
  w.EndArray();
}
template <class T>
void value(writer& w, const std::optional<T>& v) {
  if (v)
    value(w, *v);
  else
    w.Null();
}

inline void members(writer&) {}
template <class V, class... Rest>
void members(writer& w, std::string_view key, const V& v, const Rest&... rest) {
  value(w, key); // a key is a string: escaped as `json::quote` does, like the values
  value(w, v);
  members(w, rest...);
}

} // namespace detail

/// Writes one member of the object `w` is in: `key` and `v` as `json::object` writes them.
template <class V>
void field(writer& w, std::string_view key, const V& v) {
  detail::members(w, key, v);
}

/// Writes several members (alternating keys and values) into the object `w` is in.
template <class... KeysAndValues>
void fields(writer& w, const KeysAndValues&... kv) {
  static_assert(sizeof...(kv) % 2 == 0, "json::fields takes keys and values in pairs");
  detail::members(w, kv...);
}

namespace detail {

/// The buffer and writer `build` writes with: one pair per thread, reused (the buffer keeps its
/// capacity, the writer its level stack), so a text costs one allocation, its result's. A
/// `build` inside another's `fn` gets a pair of its own.
/// Measured: a fresh buffer per text grew (reallocated) a few times per step's payload, and a
/// fresh writer allocated its level stack (two allocations per text); those allocations from
/// every scheduler thread contended on malloc's arenas (bench/ab.sh, SQLite C=64: 13 % fewer
/// steps/s for the buffer alone).
class build_scope {
 public:
  build_scope() : out_(depth_++ == 0 ? shared() : own_.emplace()) {
    out_.buf.Clear();
    out_.w.Reset(out_.buf);
  }
  ~build_scope() {
    if (--depth_ == 0 && out_.buf.GetSize() > max_kept_bytes)
      out_.buf = rapidjson::StringBuffer{}; // a rare large text: not kept for the thread's life
  }
  build_scope(const build_scope&) = delete;
  build_scope& operator=(const build_scope&) = delete;
  writer& w() { return out_.w; }
  std::string text() const { return {out_.buf.GetString(), out_.buf.GetSize()}; }

 private:
  struct output {
    output() : w(buf) {} // spelled out: clang does not see a nested member initializer here
    rapidjson::StringBuffer buf;
    writer w;
  };
  static constexpr std::size_t max_kept_bytes = 64 * 1024;
  static output& shared() {
    thread_local output out;
    return out;
  }
  static inline thread_local int depth_ = 0;
  std::optional<output> own_; // before out_, which may refer to it
  output& out_;
};

} // namespace detail

/// The compact JSON text `fn(writer&)` writes.
template <class Fn>
[[nodiscard]] std::string build(Fn&& fn) {
  detail::build_scope b;
  fn(b.w());
  return b.text();
}

/// Writes an object of alternating keys and values into `w`.
template <class... KeysAndValues>
void write_object(writer& w, const KeysAndValues&... kv) {
  static_assert(sizeof...(kv) % 2 == 0, "json::object takes keys and values in pairs");
  w.StartObject();
  detail::members(w, kv...);
  w.EndObject();
}

/// An object of alternating keys and values as compact JSON text.
template <class... KeysAndValues>
[[nodiscard]] std::string object(const KeysAndValues&... kv) {
  return build([&](writer& w) { write_object(w, kv...); });
}

/// An array of the elements of `range`, each written by `each(writer&, element)`.
template <class Range, class Each>
[[nodiscard]] std::string array(const Range& range, Each&& each) {
  return build([&](writer& w) {
    w.StartArray();
    for (const auto& e : range)
      each(w, e);
    w.EndArray();
  });
}

} // namespace sreh::json
