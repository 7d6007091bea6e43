#include "plugins/tools/sandbox/tools.hpp"

#include <fmt/format.h>

#include <cmath>
#include <condition_variable>
#include <mutex>

#include "actors/tools/tool_spec.hpp"
#include "core/base/duration.hpp"

namespace sreh::plugins::sandbox {

namespace detail {

actors::tool_ptr sandbox_tool(std::string name, std::string description, std::string schema,
                              actors::risk_class risk, world_ptr w, tool_handler handler) {
  auto contract = std::make_shared<const tool_contract>(contract_of(name));
  actors::tool_spec t{
    .name = std::move(name),
    .description = std::move(description),
    .schema = std::move(schema),
    .risk = risk,
    .blocking = w->call_delay_ms > 0, // the delay waits on the tool pool
    .provides = contract->provides,
    .run =
      [w, handler = std::move(handler)](const rapidjson::Value& args,
                                        const actors::tool_context& c) {
        if (w->call_delay_ms > 0) { // sandbox.call_delay_ms; a cancelled run stops waiting
          std::mutex m;
          std::condition_variable_any cv;
          std::unique_lock lk{m};
          cv.wait_for(lk, c.call.cancel, std::chrono::milliseconds(w->call_delay_ms),
                      [] { return false; });
        }
        expected<std::string> res = std::string{};
        try {
          res = handler(*w, args, c.call.idempotency_key);
        } catch (const std::exception& e) { // a bug here must not take the caller down
          res =
            sreh::error{errc::internal, fmt::format("{}: internal error: {}", c.name, e.what())};
        }
        w->advance(seconds_per_call);
        if (!res)
          return actors::tool_result::from_error(res.error());
        return actors::tool_result::success(std::move(*res));
      },
    .observe =
      [contract](std::string_view args, std::string_view result) {
        return sandbox::observe(*contract, args, result);
      },
  };
  if (risk != actors::risk_class::read_only)
    t.reconcile = [w](std::string_view key) { return w->reconcile(key); };
  return actors::make_tool(std::move(t));
}

void write_names(json::writer& out, const std::vector<std::string>& xs) {
  out.StartArray();
  for (const auto& x : xs)
    out.String(x.c_str());
  out.EndArray();
}

void write_metrics(json::writer& out, const metric_map& m) {
  out.StartObject();
  for (const auto& [k, v] : m) {
    out.Key(k.c_str());
    if (v == std::floor(v) && std::fabs(v) < 1e15)
      out.Int64(static_cast<std::int64_t>(v));
    else
      out.Double(std::round(v * 10000) / 10000);
  }
  out.EndObject();
}

std::string string_arg(const rapidjson::Value& args, const char* key, std::string fallback) {
  if (args.IsObject() && args.HasMember(key) && args[key].IsString())
    return args[key].GetString();
  return fallback;
}

expected<std::int64_t> window_arg(const rapidjson::Value& args, std::int64_t fallback,
                                  std::int64_t max) {
  auto s = string_arg(args, "window");
  if (s.empty())
    return fallback;
  auto d = parse_duration_s(s);
  if (!d || *d <= 0)
    return sreh::error{errc::invalid_argument,
                       fmt::format("window '{}' is not a duration like 15m or 2h", s)};
  if (*d > max)
    return sreh::error{errc::invalid_argument,
                       fmt::format("window '{}' is longer than {} h", s, max / 3600)};
  return *d;
}

} // namespace detail

void add_sandbox_tools(actors::tool_registry& reg, world_ptr w) {
  detail::add_read_tools(reg, w);
  detail::add_observe_tools(reg, w);
  detail::add_write_tools(reg, w);
}

} // namespace sreh::plugins::sandbox
