#pragma once
// What the postmortem's parts share (private to core/postmortem): JSON members of a kind, and
// texts and times as a postmortem writes them.

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/base/text.hpp"

namespace sreh::postmortem::detail {

inline const rapidjson::Value* object_at(const rapidjson::Value& v, const char* key) {
  const auto* m = json::member(v, key);
  return m != nullptr && m->IsObject() ? m : nullptr;
}

inline const rapidjson::Value* array_at(const rapidjson::Value& v, const char* key) {
  const auto* m = json::member(v, key);
  return m != nullptr && m->IsArray() ? m : nullptr;
}

inline std::string short_text(std::string_view s, std::size_t max = 160) {
  std::string out{utf8_prefix(s, max)};
  for (auto& c : out)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return out.size() < s.size() ? out + "…" : out;
}

inline std::string when(timestamp_us t) {
  if (t <= 0)
    return "—";
  char buf[32];
  return std::string{format_rfc3339(t, buf)};
}

inline std::string minutes(timestamp_us from, timestamp_us to) {
  if (from <= 0 || to < from)
    return "—";
  auto s = (to - from) / 1'000'000;
  if (s < 60)
    return fmt::format("{} s", s);
  if (s < 3600)
    return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
}

/// The run's labels as a map (non-string values left out).

} // namespace sreh::postmortem::detail
