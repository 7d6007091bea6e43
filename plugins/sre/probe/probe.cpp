// http.probe: one HTTP request to an allow-listed host, reported as an observation — status,
// latency, whether the status and body are as expected — rather than failing the step when the
// endpoint is down (that is what the probe is for). Read-only, idempotent, blocking.
#include <fmt/format.h>

#include <chrono>
#include <regex>

#include "actors/tools/tool_spec.hpp"
#include "core/base/http_url.hpp"
#include "core/base/json.hpp"
#include "net/client/http_client.hpp"
#include "plugins/register.hpp"
#include "plugins/sre/probe/settings.hpp"

namespace sreh::plugins {

namespace {

using actors::tool_call;
using actors::tool_result;

bool allowed(const std::vector<std::string>& allow, const std::string& host) {
  for (const auto& a : allow) {
    if (a.rfind("*.", 0) == 0) {
      auto domain = a.substr(1); // ".example.com"
      if (host.size() > domain.size() &&
          host.compare(host.size() - domain.size(), domain.size(), domain) == 0)
        return true;
    } else if (a == host) {
      return true;
    }
  }
  return false;
}

tool_result probe(const http_probe::settings& cfg, const rapidjson::Value& args) {
  std::string url = args["url"].GetString();
  auto u = parse_http_url(url, false, false);
  if (!u)
    return tool_result::failure(fmt::format("http.probe: url '{}': {}", url, u.error().message));
  if (!allowed(cfg.allow, u->host))
    return tool_result::failure(
      fmt::format("http.probe: host '{}' is not in tools.http_probe.allow ({})", u->host,
                  fmt::join(cfg.allow, ", ")));
  std::string method = args.HasMember("method") ? args["method"].GetString() : "GET";
  int expect = args.HasMember("expect_status") ? args["expect_status"].GetInt() : 0;
  std::optional<std::regex> match;
  std::string match_text;
  if (args.HasMember("body_match")) {
    match_text = args["body_match"].GetString();
    try {
      match.emplace(match_text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return tool_result::failure(fmt::format(
        "http.probe: body_match '{}' is not a regular expression: {}", match_text, e.what()));
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  auto res = net::http_request(u->host, u->port, method, u->path.empty() ? "/" : u->path, {},
                               {{"User-Agent", "sreh-http-probe"}},
                               std::chrono::milliseconds{cfg.timeout_ms});
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("url");
  w.String(url);
  w.Key("latency_ms");
  w.Double(std::round(ms.count() * 100) / 100);
  if (!res) {
    w.Key("ok");
    w.Bool(false);
    w.Key("error");
    w.String(res.error().message);
  } else {
    auto body = res->body.substr(0, static_cast<std::size_t>(cfg.max_body_bytes));
    bool status_ok = expect != 0 ? res->status == expect : res->status >= 200 && res->status < 400;
    bool body_ok = !match || std::regex_search(body, *match);
    w.Key("ok");
    w.Bool(status_ok && body_ok);
    w.Key("status");
    w.Int(res->status);
    w.Key("status_ok");
    w.Bool(status_ok);
    if (match) {
      w.Key("body_matched");
      w.Bool(body_ok);
    }
    w.Key("bytes");
    w.Uint64(res->body.size());
    w.Key("body_excerpt");
    auto excerpt = body.substr(0, 256);
    w.String(excerpt.data(), static_cast<rapidjson::SizeType>(excerpt.size()));
  }
  w.EndObject();
  return tool_result::success({buf.GetString(), buf.GetSize()});
}

actors::tool_spec probe_tool(const http_probe::settings& cfg) {
  return {
    .name = "http.probe",
    .description = "Sends one HTTP request to an allow-listed host and reports status, latency "
                   "and whether the status and body are as expected.",
    .schema =
      R"({"type":"object","properties":{"url":{"type":"string","minLength":8,"maxLength":2048},)"
      R"("method":{"type":"string","enum":["GET","HEAD"]},)"
      R"("expect_status":{"type":"integer","minimum":100,"maximum":599},)"
      R"("body_match":{"type":"string","minLength":1,"maxLength":512}},)"
      R"("required":["url"],"additionalProperties":false})",
    .blocking = true,
    .timeout = std::chrono::milliseconds{cfg.timeout_ms + 1000},
    .run = [cfg](const rapidjson::Value& args,
                 const actors::tool_context&) { return probe(cfg, args); },
  };
}

} // namespace

void register_http_probe(actors::toolset_registry& r) {
  r.add({"http_probe",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           const auto& p = cfg.section<http_probe::settings>();
           if (p.allow.empty())
             return std::string{};
           out.add(actors::make_tool(probe_tool(p)));
           return fmt::format("  tools: http.probe to {}\n", fmt::join(p.allow, ", "));
         }});
}

} // namespace sreh::plugins
