#pragma once
// The Prometheus server of the toolset (docs/prometheus.md), shared by its tools: its limits,
// the PromQL allow/deny rules and one GET of its HTTP API. Internal to plugins/sre/prometheus.

#include <fmt/format.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/base/http_url.hpp"
#include "core/base/json.hpp"
#include "net/client/http_client.hpp"
#include "plugins/sre/prometheus/settings.hpp"

namespace sreh::plugins::prometheus {

using params = std::vector<std::pair<std::string, std::string>>;

/// The server, its limits and the PromQL rules, shared by the five tools.
class server {
 public:
  explicit server(const settings& c) : cfg_(c) {
    for (const auto& a : c.allow)
      allow_.emplace_back(a, std::regex{a, std::regex::ECMAScript});
    for (const auto& d : c.deny)
      deny_.emplace_back(d, std::regex{d, std::regex::ECMAScript});
  }

  [[nodiscard]] const settings& cfg() const { return cfg_; }

  /// "" when `promql` may run, else why not.
  [[nodiscard]] std::string refuse(const std::string& promql) const {
    for (const auto& [text, re] : deny_)
      if (std::regex_search(promql, re))
        return fmt::format("query '{}' is denied by prometheus.deny ('{}')", promql, text);
    if (allow_.empty())
      return {};
    for (const auto& [text, re] : allow_)
      if (std::regex_search(promql, re))
        return {};
    return fmt::format("query '{}' matches nothing in prometheus.allow", promql);
  }

  /// GET `path` with `ps`: the `data` of a success, or the error in words.
  [[nodiscard]] expected<rapidjson::Document> get(const std::string& tool, const std::string& path,
                                                  const params& ps) const {
    std::string target = cfg_.path_prefix + path;
    char sep = '?';
    for (const auto& [k, v] : ps) {
      target += sep + k + "=" + percent_encode(v);
      sep = '&';
    }
    auto res =
      net::http_request(cfg_.host, cfg_.port, "GET", target, {}, {{"Accept", "application/json"}},
                        std::chrono::milliseconds{cfg_.timeout_ms});
    if (!res)
      return sreh::error{errc::unavailable, fmt::format("{}: Prometheus at {} is unreachable: {}",
                                                        tool, cfg_.url, res.error().message)};
    auto doc = json::parse_object(res->body);
    if (!doc)
      return sreh::error{errc::unavailable,
                         fmt::format("{}: Prometheus at {} answered HTTP {} with no JSON: {}", tool,
                                     cfg_.url, res->status, res->body.substr(0, 200))};
    auto str = [&](const char* key) -> std::string {
      auto m = doc->FindMember(key);
      return m != doc->MemberEnd() && m->value.IsString() ? m->value.GetString() : "";
    };
    if (str("status") != "success") {
      auto type = str("errorType");
      return sreh::error{type == "bad_data" ? errc::invalid_argument : errc::unavailable,
                         fmt::format("{}: Prometheus {} (HTTP {}): {}", tool,
                                     type.empty() ? "error" : type, res->status, str("error"))};
    }
    return doc;
  }

 private:
  settings cfg_;
  std::vector<std::pair<std::string, std::regex>> allow_, deny_;
};

/// The string or number `key` of `args` as text; "" when absent or of another type.
inline std::string arg(const rapidjson::Value& args, const char* key) {
  auto m = args.FindMember(key);
  if (m == args.MemberEnd())
    return {};
  if (m->value.IsString())
    return m->value.GetString();
  if (m->value.IsNumber())
    return json::stringify(m->value);
  return {};
}

/// `v[key]`, or null when `v` is not an object or has no such member.
inline const rapidjson::Value& member(const rapidjson::Value& v, const char* key) {
  static const rapidjson::Value null;
  if (!v.IsObject())
    return null;
  auto m = v.FindMember(key);
  return m == v.MemberEnd() ? null : m->value;
}

} // namespace sreh::plugins::prometheus
