#include <fmt/format.h>

#include "config/node/section_readers.hpp"

namespace sreh::config::detail {

using yaml::entry;
using yaml::reader;

namespace {

void read_script(reader& r, const entry& section, std::vector<scripted_step>& out) {
  if (section.value.is_null())
    return;
  if (!section.value.is_sequence())
    r.fail(section, "expected a sequence of {tool, args}");
  for (const auto& whole : r.items(section)) {
    if (!whole.value.is_mapping())
      r.fail(whole, "expected a mapping with 'tool' and 'args'");
    scripted_step s;
    bool has_tool = false;
    for (const auto& e : r.entries(whole, {"tool", "args"})) {
      if (e.key == "tool") {
        s.tool = r.string(e);
        has_tool = !s.tool.empty();
        if (!has_tool)
          r.fail(e, "must not be empty");
      } else {
        s.args = r.json_object(e);
      }
    }
    if (!has_tool)
      r.fail(whole, "missing key 'tool'");
    out.push_back(std::move(s));
  }
}

/// The text of a secret file (an API key), without its trailing newline. The error never
/// quotes the content.
std::string read_secret_file(reader& r, const entry& e, const std::string& config_file) {
  auto path = read_path(r, e, config_file);
  auto text = yaml::read_text_file(path);
  if (!text)
    r.fail(e, fmt::format("cannot read '{}'", path));
  auto key = *text;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (key.empty())
    r.fail(e, fmt::format("'{}' is empty", path));
  return key;
}

/// One field of a model route; false when `e` is not one.
bool read_route_field(reader& r, const entry& e, const std::string& config_file, model_route& out) {
  using f = int_field<model_route>;
  static constexpr f ints[] = {
    {"max_tokens", &model_route::max_tokens, 1, 1'000'000},
    {"max_input_tokens", &model_route::max_input_tokens, 256, 100'000'000},
    {"connect_timeout_ms", &model_route::connect_timeout_ms, 1, 600'000},
    {"read_timeout_ms", &model_route::read_timeout_ms, 1, 3'600'000},
    {"total_timeout_ms", &model_route::total_timeout_ms, 1, 3'600'000},
    {"max_attempts", &model_route::max_attempts, 1, 10},
    {"max_concurrency", &model_route::max_concurrency, 1, 1'000'000},
    {"max_queue", &model_route::max_queue, 0, 10'000'000},
  };
  if (read_int_field(r, e, ints, out))
    return true;
  if (e.key == "base_url") {
    out.base_url = r.non_empty_string(e);
    if (!out.base_url.starts_with("http://") && !out.base_url.starts_with("https://"))
      r.fail(e, "expected an http:// or https:// URL");
    while (out.base_url.size() > 8 && out.base_url.back() == '/')
      out.base_url.pop_back();
  } else if (e.key == "model") {
    out.model = r.non_empty_string(e);
  } else if (e.key == "api_key") {
    out.api_key_unset.clear();
    out.api_key = r.secret(e, out.api_key_unset);
  } else if (e.key == "api_key_file") {
    out.api_key_unset.clear();
    out.api_key = read_secret_file(r, e, config_file);
  } else if (e.key == "stream") {
    out.stream = r.boolean(e);
  } else if (e.key == "max_completion_tokens") {
    out.max_completion_tokens = r.boolean(e);
  } else if (e.key == "ca_file") {
    out.ca_file = read_path(r, e, config_file);
  } else if (e.key == "price") {
    for (const auto& x : r.entries(e, {"input", "output"})) {
      auto v = r.number(x);
      if (v < 0)
        r.fail(x, "expected a price per million tokens, 0 or more");
      (x.key == "input" ? out.input_price : out.output_price) = v;
    }
  } else {
    return false;
  }
  return true;
}

/// A route's provider, base_url and model, once its section is read.
void check_route(reader& r, const entry& section, const model_route& m) {
  if (m.provider != "openai" && m.provider != "anthropic")
    return;
  if (m.base_url.empty())
    r.fail(section, fmt::format("provider {} needs base_url", m.provider));
  if (m.model.empty())
    r.fail(section, fmt::format("provider {} needs model", m.provider));
}

} // namespace

void read_model(reader& r, const entry& section, const std::string& config_file,
                model_config& out) {
  out.main.name = "main";
  auto entries = r.entries(section, {"provider",
                                     "script",
                                     "kb",
                                     "fallback",
                                     "system_prompt",
                                     "max_repairs",
                                     "keep_last",
                                     "base_url",
                                     "model",
                                     "api_key",
                                     "api_key_file",
                                     "stream",
                                     "max_tokens",
                                     "max_input_tokens",
                                     "connect_timeout_ms",
                                     "read_timeout_ms",
                                     "total_timeout_ms",
                                     "max_attempts",
                                     "ca_file",
                                     "price",
                                     "max_concurrency",
                                     "max_queue",
                                     "max_completion_tokens",
                                     "by_label"});
  for (const auto& e : entries) {
    if (read_route_field(r, e, config_file, out.main))
      continue;
    if (e.key == "provider") {
      out.provider = r.one_of(e, {"builtin", "scripted", "openai", "anthropic"});
      out.main.provider = out.provider;
    } else if (e.key == "kb") {
      out.kb = read_path(r, e, config_file);
    } else if (e.key == "fallback") {
      for (const auto& x : r.items(e)) {
        auto name = r.non_empty_string(x);
        if (name != "builtin" && !out.routes.contains(name))
          r.fail(x, fmt::format("no route '{}' in models (nor builtin)", name));
        out.fallback.push_back(std::move(name));
      }
    } else if (e.key == "by_label") {
      for (const auto& x : r.items(e)) {
        label_route lr;
        for (const auto& f : r.entries(x, {"label", "value", "route"})) {
          auto& dst = f.key == "label" ? lr.label : f.key == "value" ? lr.value : lr.route;
          dst = f.key == "value" ? r.string(f) : r.non_empty_string(f);
        }
        if (lr.label.empty() || lr.route.empty())
          r.fail(x, "expected {label: NAME, value: TEXT, route: ROUTE}");
        if (lr.route != "main" && !out.routes.contains(lr.route))
          r.fail(x, fmt::format("no route '{}' in models (nor main)", lr.route));
        out.by_label.push_back(std::move(lr));
      }
    } else if (e.key == "system_prompt") {
      out.system_prompt = r.string(e);
    } else if (e.key == "max_repairs") {
      out.max_repairs = r.integer(e, 0, 100);
    } else if (e.key == "keep_last") {
      out.keep_last = r.integer(e, 0, 1000);
    } else {
      read_script(r, e, out.script);
    }
  }
  check_route(r, section, out.main);
}

/// `models: {NAME: {provider, base_url, …}}`: the routes a fallback chain names.
void read_models(reader& r, const entry& section, const std::string& config_file,
                 model_config& out) {
  for (const auto& x : r.pairs(section)) {
    model_route m;
    m.name = x.key;
    if (x.key == "builtin" || x.key == "main")
      r.fail(x, fmt::format("'{}' is reserved; name the route otherwise", x.key));
    auto entries = r.entries(x, {"provider", "base_url", "model", "api_key", "api_key_file",
                                 "stream", "max_tokens", "max_input_tokens", "connect_timeout_ms",
                                 "read_timeout_ms", "total_timeout_ms", "max_attempts", "ca_file",
                                 "price", "max_concurrency", "max_queue", "max_completion_tokens"});
    for (const auto& e : entries) {
      if (read_route_field(r, e, config_file, m))
        continue;
      m.provider = r.one_of(e, {"openai", "anthropic"});
    }
    if (m.provider.empty())
      r.fail(x, "missing key 'provider' (openai or anthropic)");
    check_route(r, x, m);
    out.routes[x.key] = std::move(m);
  }
}

} // namespace sreh::config::detail
