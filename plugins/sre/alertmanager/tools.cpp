#include "plugins/sre/alertmanager/tools.hpp"

#include <fmt/format.h>

#include <memory>

#include "actors/tools/tool_spec.hpp"
#include "core/base/clock.hpp"
#include "core/base/duration.hpp"
#include "core/base/http_url.hpp"
#include "core/base/json.hpp"
#include "net/client/http_client.hpp"

namespace sreh::plugins::alertmanager {

namespace {

using actors::reconcile_result;
using actors::risk_class;
using actors::tool_call;
using actors::tool_result;

constexpr std::int64_t max_silence_s = 7 * 24 * 3600;

/// The server and its limits, shared by the tools.
class server {
 public:
  explicit server(const settings& c) : cfg_(c) {}
  [[nodiscard]] const settings& cfg() const { return cfg_; }

  /// `method` `path` (with an already encoded query): the JSON body of a 2xx, or the error in
  /// words (`unavailable` for the network and 5xx, `invalid_argument` for a 4xx).
  [[nodiscard]] expected<rapidjson::Document> call(const std::string& tool,
                                                   const std::string& method,
                                                   const std::string& path,
                                                   const std::string& body = {}) const {
    std::map<std::string, std::string> headers{{"Accept", "application/json"}};
    if (!body.empty())
      headers["Content-Type"] = "application/json";
    auto res = net::http_request(cfg_.host, cfg_.port, method, cfg_.path_prefix + path, body,
                                 headers, std::chrono::milliseconds{cfg_.timeout_ms});
    if (!res)
      return sreh::error{errc::unavailable, fmt::format("{}: Alertmanager at {} is unreachable: {}",
                                                        tool, cfg_.url, res.error().message)};
    if (res->status < 200 || res->status > 299)
      return sreh::error{res->status >= 500 ? errc::unavailable : errc::invalid_argument,
                         fmt::format("{}: Alertmanager answered HTTP {}: {}", tool, res->status,
                                     res->body.substr(0, 300))};
    auto doc = json::parse(res->body.empty() ? "{}" : res->body);
    if (!doc)
      return sreh::error{errc::unavailable,
                         fmt::format("{}: Alertmanager answered HTTP {} with no JSON: {}", tool,
                                     res->status, res->body.substr(0, 200))};
    return doc;
  }

 private:
  settings cfg_;
};

/// "" when `labels` is an object of at most 20 string values, else what is wrong with it.
std::string check_labels(const rapidjson::Value& labels) {
  if (!labels.IsObject())
    return "labels: expected an object of label names to values";
  if (labels.MemberCount() > 20)
    return "labels: at most 20 labels";
  for (const auto& m : labels.GetObject())
    if (!m.value.IsString() || m.value.GetStringLength() > 256 || m.name.GetStringLength() == 0)
      return fmt::format("labels.{}: expected a string of at most 256 bytes", m.name.GetString());
  return {};
}

/// `{"service": "checkout"}` as Alertmanager's filter matchers: service="checkout".
std::string filter_query(const rapidjson::Value& labels) {
  std::string q;
  for (const auto& m : labels.GetObject()) {
    auto matcher = fmt::format("{}={}", m.name.GetString(), json::quote(m.value.GetString()));
    q += (q.empty() ? "" : "&") + std::string{"filter="} + percent_encode(matcher);
  }
  return q;
}

// -- alertmanager.alerts -----------------------------------------------------------------------

tool_result list_alerts(const server& srv, const std::string& name, const rapidjson::Value& args) {
  std::string q;
  if (auto l = args.FindMember("labels"); l != args.MemberEnd()) {
    if (auto bad = check_labels(l->value); !bad.empty())
      return tool_result::failure(name + ": " + bad);
    q = filter_query(l->value);
  }
  for (const char* flag : {"active", "silenced", "inhibited"})
    if (auto f = args.FindMember(flag); f != args.MemberEnd())
      q +=
        (q.empty() ? "" : "&") + std::string{flag} + "=" + (f->value.GetBool() ? "true" : "false");
  auto doc = srv.call(name, "GET", "/api/v2/alerts" + (q.empty() ? "" : "?" + q));
  if (!doc)
    return tool_result::failure(doc.error().message);
  if (!doc->IsArray())
    return tool_result::failure(name + ": Alertmanager's answer is not a list of alerts");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("alerts");
  w.StartArray();
  std::size_t n = 0;
  const auto max = static_cast<std::size_t>(srv.cfg().max_alerts_listed);
  for (const auto& a : doc->GetArray()) {
    if (n++ >= max || !a.IsObject())
      continue;
    w.StartObject();
    for (const char* key :
         {"fingerprint", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "status"})
      if (auto m = a.FindMember(key); m != a.MemberEnd()) {
        w.Key(key);
        m->value.Accept(w);
      }
    w.EndObject();
  }
  w.EndArray();
  w.Key("total"), w.Uint64(n);
  w.Key("truncated"), w.Bool(n > max);
  w.EndObject();
  return tool_result::success({buf.GetString(), buf.GetSize()});
}

// -- alertmanager.silence ----------------------------------------------------------------------

/// The mark of a call in a silence's comment, by which reconcile and compensate find it.
std::string key_mark(std::string_view key) {
  return fmt::format("[sreh:{}]", key);
}

/// What a silence of these arguments acts on: its first service, alertname, instance or job.
actors::action_scope silence_scope(std::string_view args) {
  actors::action_scope s;
  if (auto doc = json::parse_object(args))
    if (auto l = doc->FindMember("labels"); l != doc->MemberEnd() && l->value.IsObject())
      for (const char* key : {"service", "alertname", "instance", "job"})
        if (auto v = l->value.FindMember(key); v != l->value.MemberEnd() && v->value.IsString()) {
          s.target = v->value.GetString();
          break;
        }
  return s;
}

/// The body of POST /api/v2/silences: `labels` as equality matchers from `now` for `secs`.
std::string silence_body(const rapidjson::Value& labels, std::int64_t now, std::int64_t secs,
                         const std::string& comment) {
  char from[32], to[32];
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("matchers");
  w.StartArray();
  for (const auto& m : labels.GetObject()) {
    w.StartObject();
    w.Key("name"), w.String(m.name.GetString());
    w.Key("value"), w.String(m.value.GetString());
    w.Key("isRegex"), w.Bool(false);
    w.Key("isEqual"), w.Bool(true);
    w.EndObject();
  }
  w.EndArray();
  w.Key("startsAt"), w.String(std::string{format_rfc3339(now, from)}.c_str());
  w.Key("endsAt"), w.String(std::string{format_rfc3339(now + secs * 1'000'000, to)}.c_str());
  w.Key("createdBy"), w.String("sreh");
  w.Key("comment"), w.String(comment.c_str(), static_cast<rapidjson::SizeType>(comment.size()));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

tool_result silence(const server& srv, const std::string& name, const rapidjson::Value& args,
                    const tool_call& call) {
  const auto& labels = args["labels"];
  if (auto bad = check_labels(labels); !bad.empty())
    return tool_result::failure(name + ": " + bad);
  if (labels.ObjectEmpty())
    return tool_result::failure(name + ": labels: a silence needs at least one matcher");
  const std::string duration = args["duration"].GetString();
  auto secs = parse_duration_s(duration);
  if (!secs || *secs <= 0 || *secs > max_silence_s)
    return tool_result::failure(
      fmt::format("{}: duration: expected 1s to 7d, like 30m or 2h, got '{}'", name, duration));
  std::string comment = "silenced by sreh";
  if (auto c = args.FindMember("comment"); c != args.MemberEnd())
    comment = c->value.GetString();
  const auto now = system_clock{}.now_us();
  auto body = silence_body(labels, now, *secs, comment + " " + key_mark(call.idempotency_key));
  auto doc = srv.call(name, "POST", "/api/v2/silences", body);
  if (!doc)
    return tool_result::failure(doc.error().message);
  auto id = doc->IsObject() && doc->HasMember("silenceID") && (*doc)["silenceID"].IsString()
              ? std::string{(*doc)["silenceID"].GetString()}
              : std::string{};
  if (id.empty())
    return tool_result::failure(name + ": Alertmanager's answer names no silenceID");
  char to[32];
  return tool_result::success(
    fmt::format(R"({{"silence_id":{},"ends_at":{},"matchers":{}}})", json::quote(id),
                json::quote(format_rfc3339(now + *secs * 1'000'000, to)), json::stringify(labels)));
}

/// The id of the silence the call with `key` made and that is not expired ("" for none).
expected<std::string> find_silence(const server& srv, const std::string& name,
                                   std::string_view key) {
  auto doc = srv.call(name, "GET", "/api/v2/silences");
  if (!doc)
    return doc.error();
  if (!doc->IsArray())
    return sreh::error{errc::unavailable, name + ": Alertmanager's answer is not a list"};
  const auto mark = key_mark(key);
  for (const auto& s : doc->GetArray()) {
    if (!s.IsObject() || !s.HasMember("comment") || !s["comment"].IsString() ||
        !s.HasMember("id") || !s["id"].IsString())
      continue;
    std::string_view comment{s["comment"].GetString(), s["comment"].GetStringLength()};
    if (comment.find(mark) == std::string_view::npos)
      continue;
    auto st = s.FindMember("status");
    if (st != s.MemberEnd() && st->value.IsObject() && st->value.HasMember("state") &&
        st->value["state"].IsString() &&
        std::string_view{st->value["state"].GetString()} == "expired")
      continue;
    return std::string{s["id"].GetString()};
  }
  return std::string{};
}

reconcile_result reconcile_silence(const server& srv, const std::string& name,
                                   std::string_view key) {
  auto found = find_silence(srv, name, key);
  if (!found)
    return {}; // cannot tell: Alertmanager is away
  if (found->empty())
    return {reconcile_result::not_happened, "{}"};
  return {reconcile_result::happened,
          fmt::format(R"({{"silence_id":{},"reconciled":true}})", json::quote(*found))};
}

/// Expires the silence the call `original` made.
tool_result expire_silence(const server& srv, const std::string& name, const tool_call& original) {
  auto found = find_silence(srv, name, original.idempotency_key);
  if (!found)
    return tool_result::failure(found.error().message);
  if (found->empty())
    return tool_result::success(R"({"expired":false,"reason":"no active silence of this call"})");
  auto r = srv.call(name, "DELETE", "/api/v2/silence/" + percent_encode(*found));
  if (!r)
    return tool_result::failure(r.error().message);
  return tool_result::success(
    fmt::format(R"({{"expired":true,"silence_id":{}}})", json::quote(*found)));
}

constexpr const char* labels_schema = R"({"type":"object"})"; // values checked by the tools

} // namespace

void add_alertmanager_tools(actors::tool_registry& out, const settings& cfg) {
  auto srv = std::make_shared<const server>(cfg);
  const std::string silence_name = "alertmanager.silence";
  const auto timeout = std::chrono::milliseconds{cfg.timeout_ms * 3 + 1000};
  actors::add_tools(
    out,
    {{.name = "alertmanager.alerts",
      .description = "The alerts Alertmanager knows: labels, annotations, state (active, silenced, "
                     "inhibited), since when. `labels` filters by exact label values.",
      .schema =
        fmt::format(R"({{"type":"object","properties":{{"labels":{},"active":{{"type":"boolean"}},)"
                    R"("silenced":{{"type":"boolean"}},"inhibited":{{"type":"boolean"}}}},)"
                    R"("additionalProperties":false}})",
                    labels_schema),
      .blocking = true,
      .timeout = timeout,
      .run = [srv](const rapidjson::Value& args,
                   const actors::tool_context& c) { return list_alerts(*srv, c.name, args); }},
     {.name = silence_name,
      .description = "Silences the alerts whose labels equal `labels` for `duration` (30m, 2h; at "
                     "most 7d). Mutating (risk low): policy applies. Undone by expiring the "
                     "silence.",
      .schema =
        fmt::format(R"({{"type":"object","properties":{{"labels":{},"duration":{{"type":"string",)"
                    R"("maxLength":16}},"comment":{{"type":"string","maxLength":1024}}}},)"
                    R"("required":["labels","duration"],"additionalProperties":false}})",
                    labels_schema),
      .risk = risk_class::low,
      .blocking = true,
      .timeout = timeout,
      .run = [srv](const rapidjson::Value& args,
                   const actors::tool_context& c) { return silence(*srv, c.name, args, c.call); },
      .scope = silence_scope,
      .reconcile = [srv, silence_name](
                     std::string_view key) { return reconcile_silence(*srv, silence_name, key); },
      .compensate =
        [srv, silence_name](const tool_call& original) {
          return expire_silence(*srv, silence_name, original);
        }}});
}

} // namespace sreh::plugins::alertmanager
