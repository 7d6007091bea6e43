#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>

#include "config/node/node_config.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/duration.hpp"
#include "core/base/http_url.hpp"

namespace sreh::config {

namespace {

using yaml::entry;
using yaml::reader;

constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max();

void read_store(reader& r, const entry& section, store_config& out) {
  for (const auto& e : r.entries(section, {"kind", "path", "synchronous", "url"})) {
    if (e.key == "kind")
      out.kind = r.one_of(e, {"sqlite", "postgres"});
    else if (e.key == "path")
      out.path = r.string(e);
    else if (e.key == "synchronous")
      out.synchronous = r.one_of(e, {"normal", "full"});
    else
      out.url = r.string(e);
  }
}

void read_logging(reader& r, const entry& section, logging_config& out) {
  for (const auto& e : r.entries(section, {"level", "format"})) {
    if (e.key == "level")
      out.level = r.one_of(e, {"trace", "debug", "info", "warn", "error", "critical", "off"});
    else
      out.format = r.one_of(e, {"text", "json"});
  }
}

void read_limits(reader& r, const entry& section, limits_config& out) {
  struct field {
    std::string_view name;
    std::int64_t max;
    std::int64_t limits_config::*member;
    std::int64_t min = 1;
  };
  static constexpr field fields[] = {
    {"max_body_bytes", unbounded, &limits_config::max_body_bytes},
    {"max_header_bytes", unbounded, &limits_config::max_header_bytes},
    {"max_json_depth", 512, &limits_config::max_json_depth},
    {"max_connections", 1'000'000, &limits_config::max_connections},
    {"max_connections_per_client", 1'000'000, &limits_config::max_connections_per_client, 0},
    {"header_timeout_ms", 3'600'000, &limits_config::header_timeout_ms},
    {"idle_timeout_ms", 3'600'000, &limits_config::idle_timeout_ms},
    {"max_commit_backlog", unbounded, &limits_config::max_commit_backlog},
    {"sse_queue_events", unbounded, &limits_config::sse_queue_events},
    {"sse_heartbeat_ms", unbounded, &limits_config::sse_heartbeat_ms},
    {"http_threads", 256, &limits_config::http_threads},
    {"handler_threads", 256, &limits_config::handler_threads},
    {"scheduler_threads", 256, &limits_config::scheduler_threads},
    {"tool_threads", 256, &limits_config::tool_threads},
    {"store_threads", 256, &limits_config::store_threads},
  };
  auto entries =
    r.entries(section, {"max_body_bytes", "max_header_bytes", "max_json_depth", "max_connections",
                        "max_connections_per_client", "header_timeout_ms", "idle_timeout_ms",
                        "max_commit_backlog", "sse_queue_events", "sse_heartbeat_ms",
                        "http_threads", "handler_threads", "scheduler_threads", "scheduler_policy",
                        "tool_threads", "store_threads"});
  for (const auto& e : entries) {
    if (e.key == "scheduler_policy") {
      out.scheduler_policy = r.one_of(e, {"sharing", "stealing"});
      continue;
    }
    for (const auto& f : fields)
      if (e.key == f.name)
        out.*f.member = r.integer(e, f.min, f.max);
  }
}

void read_budget(reader& r, const entry& section, run_budget& out) {
  for (const auto& e :
       r.entries(section, {"max_steps", "max_tokens", "max_result_bytes", "max_cost"})) {
    if (e.key == "max_steps") {
      out.max_steps = r.integer(e, 1, unbounded);
    } else if (e.key == "max_tokens") {
      out.max_tokens = r.integer(e, 1, unbounded);
    } else if (e.key == "max_result_bytes") {
      out.max_result_bytes = r.integer(e, 1, unbounded);
    } else {
      out.max_cost = r.number(e);
      if (out.max_cost < 0)
        r.fail(e, "expected a number of at least 0 (0: no limit)");
    }
  }
}

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

/// A file named by the config: relative to the config file's directory; it must be readable.
std::string read_path(reader& r, const entry& e, const std::string& config_file) {
  auto path = r.string(e);
  if (path.empty())
    r.fail(e, "must not be empty");
  std::filesystem::path p{path};
  if (p.is_relative())
    p = (std::filesystem::path{config_file}.parent_path() / p).lexically_normal();
  if (::access(p.c_str(), R_OK) != 0)
    r.fail(e, fmt::format("cannot read '{}': {}", p.string(), std::strerror(errno)));
  return p.string();
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
  } else if (e.key == "max_tokens") {
    out.max_tokens = r.integer(e, 1, 1'000'000);
  } else if (e.key == "max_completion_tokens") {
    out.max_completion_tokens = r.boolean(e);
  } else if (e.key == "max_input_tokens") {
    out.max_input_tokens = r.integer(e, 256, 100'000'000);
  } else if (e.key == "connect_timeout_ms") {
    out.connect_timeout_ms = r.integer(e, 1, 600'000);
  } else if (e.key == "read_timeout_ms") {
    out.read_timeout_ms = r.integer(e, 1, 3'600'000);
  } else if (e.key == "total_timeout_ms") {
    out.total_timeout_ms = r.integer(e, 1, 3'600'000);
  } else if (e.key == "max_attempts") {
    out.max_attempts = r.integer(e, 1, 10);
  } else if (e.key == "ca_file") {
    out.ca_file = read_path(r, e, config_file);
  } else if (e.key == "max_concurrency") {
    out.max_concurrency = r.integer(e, 1, 1'000'000);
  } else if (e.key == "max_queue") {
    out.max_queue = r.integer(e, 0, 10'000'000);
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

void read_sandbox(reader& r, const entry& section, const std::string& config_file,
                  sandbox_config& out) {
  for (const auto& e : r.entries(section, {"scenario", "time_scale"})) {
    if (e.key == "scenario") {
      out.scenario = read_path(r, e, config_file);
    } else {
      out.time_scale = r.number(e);
      if (out.time_scale < 0 || out.time_scale > 3600)
        r.fail(e, fmt::format("expected a number from 0 to 3600, got {}", out.time_scale));
    }
  }
}

void read_cluster(reader& r, const entry& section, const std::string& config_file,
                  cluster_config& out) {
  for (const auto& e : r.entries(section, {"topology"}))
    out.topology = read_path(r, e, config_file);
}

void read_http_probe(reader& r, const entry& section, http_probe_config& out) {
  for (const auto& e : r.entries(section, {"allow", "timeout_ms", "max_body_bytes"})) {
    if (e.key == "timeout_ms") {
      out.timeout_ms = r.integer(e, 1, 600'000);
    } else if (e.key == "max_body_bytes") {
      out.max_body_bytes = r.integer(e, 0, 16 << 20);
    } else {
      for (const auto& x : r.items(e)) {
        auto host = r.non_empty_string(x);
        auto name = host.rfind("*.", 0) == 0 ? host.substr(2) : host;
        if (name.empty() || name.find_first_of(" */:@?#") != std::string::npos)
          r.fail(x, fmt::format("'{}' is not a host name or *.domain", host));
        out.allow.push_back(std::move(host));
      }
    }
  }
}

shell_command read_shell_command(reader& r, const entry& e) {
  shell_command c;
  auto entries =
    r.entries(e, {"name", "argv", "risk", "max_args", "arg_pattern", "timeout_ms", "description"});
  for (const auto& x : entries) {
    if (x.key == "name") {
      c.name = r.non_empty_string(x);
      if (c.name.size() > 48 ||
          c.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
        r.fail(x, "expected 1-48 characters of a-z, 0-9, '-' and '_' (the tool is shell.NAME)");
    } else if (x.key == "argv") {
      for (const auto& a : r.non_empty_items(x))
        c.argv.push_back(r.non_empty_string(a));
      if (c.argv.front().front() != '/')
        r.fail(
          x, fmt::format("argv[0] '{}' must be an absolute path (no PATH search)", c.argv.front()));
    } else if (x.key == "risk") {
      c.risk = r.one_of(x, {"read_only", "low", "medium", "high"});
    } else if (x.key == "max_args") {
      c.max_args = r.integer(x, 0, 64);
    } else if (x.key == "arg_pattern") {
      c.arg_pattern = r.non_empty_string(x);
      try {
        std::regex{c.arg_pattern, std::regex::ECMAScript};
      } catch (const std::regex_error& err) {
        r.fail(x, fmt::format("'{}' is not a regular expression: {}", c.arg_pattern, err.what()));
      }
    } else if (x.key == "timeout_ms") {
      c.timeout_ms = r.integer(x, 1, 3'600'000);
    } else {
      c.description = r.string(x);
    }
  }
  if (c.name.empty() || c.argv.empty())
    r.fail(e, "a command needs 'name' and 'argv'");
  return c;
}

void read_shell(reader& r, const entry& section, shell_config& out) {
  for (const auto& e : r.entries(section, {"commands", "max_output_bytes", "env"})) {
    if (e.key == "commands") {
      for (const auto& x : r.items(e)) {
        auto c = read_shell_command(r, x);
        for (const auto& other : out.commands)
          if (other.name == c.name)
            r.fail(x, fmt::format("command '{}' is listed twice", c.name));
        out.commands.push_back(std::move(c));
      }
    } else if (e.key == "max_output_bytes") {
      out.max_output_bytes = r.integer(e, 0, 16 << 20);
    } else {
      out.env.clear();
      for (const auto& p : r.pairs(e))
        out.env.emplace_back(p.key, r.string(p));
    }
  }
}

void read_tools(reader& r, const entry& section, tool_config& out) {
  for (const auto& e :
       r.entries(section, {"testkit", "record_file", "http_probe", "shell", "disable"})) {
    if (e.key == "testkit")
      out.testkit = r.boolean(e);
    else if (e.key == "disable")
      for (const auto& x : r.items(e))
        out.disable.push_back(r.non_empty_string(x));
    else if (e.key == "http_probe")
      read_http_probe(r, e, out.http_probe);
    else if (e.key == "shell")
      read_shell(r, e, out.shell);
    else
      out.record_file = r.string(e);
  }
}

bool is_hex_digest(const std::string& s) {
  if (s.size() != 64)
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
      return false;
  return true;
}

void read_auth_tokens(reader& r, const entry& section, std::vector<auth_token>& out) {
  if (section.value.is_null())
    return;
  if (!section.value.is_sequence())
    r.fail(section, "expected a sequence of {name, role, sha256}");
  for (const auto& whole : r.items(section)) {
    if (!whole.value.is_mapping())
      r.fail(whole, "expected a mapping with 'name', 'role' and 'sha256'");
    auth_token t;
    for (const auto& e : r.entries(whole, {"name", "role", "sha256"})) {
      if (e.key == "name") {
        t.name = r.string(e);
        if (t.name.empty())
          r.fail(e, "must not be empty");
        for (const auto& other : out)
          if (other.name == t.name)
            r.fail(e, fmt::format("duplicate token name '{}'", t.name));
      } else if (e.key == "role") {
        t.role = r.one_of(e, {"viewer", "operator", "approver", "admin"});
      } else {
        t.sha256 = r.string(e);
        if (!is_hex_digest(t.sha256))
          r.fail(e, fmt::format("expected exactly 64 hex digits (the SHA-256 of the token; "
                                "`sreh token hash TOKEN` prints it), got {} characters",
                                t.sha256.size()));
        for (auto& c : t.sha256)
          c = static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
      }
    }
    for (const char* key : {"name", "role", "sha256"})
      if (!whole.value.find(key))
        r.fail(whole, fmt::format("missing key '{}'", key));
    out.push_back(std::move(t));
  }
}

void read_auth(reader& r, const entry& section, auth_config& out) {
  if (section.value.is_scalar()) { // shorthand: `auth: none` / `auth: tokens`
    out.mode = r.one_of(section, {"tokens", "none"});
    return;
  }
  for (const auto& e : r.entries(section, {"mode", "tokens"})) {
    if (e.key == "mode")
      out.mode = r.one_of(e, {"tokens", "none"});
    else
      read_auth_tokens(r, e, out.tokens);
  }
}

/// True when `s` is non-empty and every character is one of [A-Za-z0-9_-] (plus '.' when
/// `dots`), with no empty dot-separated token: a JetStream stream name or a subject prefix.
bool is_nats_name(const std::string& s, bool dots) {
  if (s.empty() || s.front() == '.' || s.back() == '.' || s.find("..") != std::string::npos)
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || (dots && c == '.')))
      return false;
  return true;
}

void read_nats(reader& r, const entry& section, nats_config& out, const std::string& config_file) {
  for (const auto& e : r.entries(
         section, {"url", "stream", "subject_prefix", "ca_file", "cert_file", "key_file"})) {
    if (e.key == "ca_file" || e.key == "cert_file" || e.key == "key_file") {
      (e.key == "ca_file"     ? out.ca_file
       : e.key == "cert_file" ? out.cert_file
                              : out.key_file) = read_path(r, e, config_file);
    } else if (e.key == "url") {
      out.url = r.string(e);
      if (!out.url.empty() && !out.url.starts_with("nats://") && !out.url.starts_with("tls://"))
        r.fail(e, "expected nats://host:port or tls://host:port (or \"\" for no relay)");
    } else if (e.key == "stream") {
      out.stream = r.string(e);
      if (!is_nats_name(out.stream, false))
        r.fail(e, "expected a JetStream stream name: letters, digits, '_' and '-'");
    } else {
      out.subject_prefix = r.string(e);
      if (!is_nats_name(out.subject_prefix, true))
        r.fail(e, "expected dot-separated tokens of letters, digits, '_' and '-' "
                  "(no wildcards), e.g. sreh.events");
    }
  }
  if (out.cert_file.empty() != out.key_file.empty())
    r.fail(section, "cert_file and key_file go together (the client certificate and its key)");
}

/// A server's `url` (http://host:port[/prefix], "" = none) into the section's url, host, port
/// and path_prefix.
template <class Section>
void read_server_url(reader& r, const entry& e, Section& out) {
  out.url = r.string(e);
  if (out.url.empty())
    return;
  auto u = parse_http_url(out.url, true, true);
  if (!u)
    r.fail(e, u.error().message);
  out.host = u->host;
  out.port = u->port;
  out.path_prefix = u->path;
}

void read_alertmanager(reader& r, const entry& section, alertmanager_config& out) {
  for (const auto& e : r.entries(section, {"url", "timeout_ms", "max_alerts_listed", "receiver"})) {
    if (e.key == "url") {
      read_server_url(r, e, out);
      continue;
    }
    if (e.key == "timeout_ms") {
      out.timeout_ms = r.integer(e, 1, 600'000);
      continue;
    }
    if (e.key == "max_alerts_listed") {
      out.max_alerts_listed = r.integer(e, 1, 10'000);
      continue;
    }
    for (const auto& x : r.entries(e, {"template", "fields", "severity", "max_alerts"})) {
      if (x.key == "template") {
        out.receiver_template = r.non_empty_string(x);
      } else if (x.key == "max_alerts") {
        out.max_alerts = r.integer(x, 1, 100'000);
      } else {
        auto& map = x.key == "fields" ? out.fields : out.severity;
        if (x.key == "severity")
          map.clear(); // the file's table replaces the default one
        for (const auto& p : r.pairs(x))
          map[p.key] = r.non_empty_string(p);
      }
    }
  }
}

/// A PromQL template of `prometheus.entities`: it must name the entity (`$entity`).
std::string read_entity_query(reader& r, const entry& e) {
  auto q = r.non_empty_string(e);
  if (q.find("$entity") == std::string::npos)
    r.fail(e, fmt::format("'{}' does not name the entity: write $entity where its name goes "
                          "(service=\"$entity\")",
                          q));
  return q;
}

void read_prometheus_entities(reader& r, const entry& section, prometheus_config& out) {
  for (const auto& kind : r.pairs(section)) {
    static constexpr std::string_view kinds[] = {"service", "database", "cache",
                                                 "queue",   "host",     "job"};
    if (std::find(std::begin(kinds), std::end(kinds), kind.key) == std::end(kinds))
      r.fail(kind, fmt::format("'{}' is not an entity kind the reasoner observes (service, "
                               "database, cache, queue, host, job)",
                               kind.key));
    auto& m = out.entities[kind.key];
    for (const auto& part : r.entries(kind, {"metrics", "fields"})) {
      for (const auto& x : r.pairs(part)) {
        if (part.key == "fields") {
          m.fields[x.key] = read_entity_query(r, x);
          continue;
        }
        auto& metric = m.metrics[x.key];
        if (!x.value.is_mapping()) {
          metric.query = read_entity_query(r, x);
          continue;
        }
        for (const auto& y : r.entries(x, {"query", "baseline"}))
          (y.key == "query" ? metric.query : metric.baseline) = read_entity_query(r, y);
        if (metric.query.empty())
          r.fail(x, "needs a query (or write the PromQL itself as the value)");
      }
    }
    if (m.metrics.empty())
      r.fail(kind, "names no metrics");
  }
}

/// The longest range selector (`[5m]`, a subquery's `[1h:1m]`) of the entity metrics' queries,
/// in ms; 0 when none has one.
std::int64_t longest_range_ms(const prometheus_config& c) {
  static const std::regex range{R"(\[([0-9]+[smhdwy][0-9smhdwy]*)(:[^\]]*)?\])"};
  std::int64_t most = 0;
  for (const auto& [kind, m] : c.entities)
    for (const auto& [name, metric] : m.metrics)
      for (std::sregex_iterator i{metric.query.begin(), metric.query.end(), range}, end; i != end;
           ++i)
        if (auto s = parse_duration_s((*i)[1].str()))
          most = std::max(most, *s * 1000);
  return most;
}

void read_prometheus(reader& r, const entry& section, prometheus_config& out) {
  bool settle_given = false;
  for (const auto& e : r.entries(section, {"url", "timeout_ms", "max_series", "max_points", "allow",
                                           "deny", "entities", "baseline", "settle"})) {
    if (e.key == "settle") {
      out.settle_ms = 1000 * r.duration_s(e);
      settle_given = true;
    } else if (e.key == "entities") {
      read_prometheus_entities(r, e, out);
    } else if (e.key == "baseline") {
      out.baseline = r.string(e);
      if (!out.baseline.empty() && out.baseline.find("$query") == std::string::npos)
        r.fail(e, "must contain $query (the metric's expression), or be \"\" for no baselines");
    } else if (e.key == "url") {
      read_server_url(r, e, out);
    } else if (e.key == "timeout_ms") {
      out.timeout_ms = r.integer(e, 1, 600'000);
    } else if (e.key == "max_series") {
      out.max_series = r.integer(e, 1, 100'000);
    } else if (e.key == "max_points") {
      out.max_points = r.integer(e, 1, 10'000'000);
    } else {
      auto& list = e.key == "allow" ? out.allow : out.deny;
      for (const auto& x : r.items(e)) {
        auto re = r.non_empty_string(x);
        try {
          std::regex{re, std::regex::ECMAScript};
        } catch (const std::regex_error& err) {
          r.fail(x, fmt::format("'{}' is not a regular expression: {}", re, err.what()));
        }
        list.push_back(std::move(re));
      }
    }
  }
  if (!out.entities.empty() && out.url.empty())
    r.fail(section, "entities need the url of the Prometheus to query");
  if (!settle_given)
    if (auto longest = longest_range_ms(out); longest > 0)
      out.settle_ms = longest;
}

void read_top(reader& r, const entry& root, node_config& cfg) {
  auto entries = r.entries(
    root, {"node_id", "listen", "data_dir", "policy_mode", "policy_file",  "store",   "logging",
           "limits",  "budget", "model",    "tools",       "auth",         "sandbox", "nats",
           "cluster", "works",  "flows",    "prometheus",  "alertmanager", "tls",     "models"});
  std::optional<entry> model_entry; // read after `models`, whose routes its fallback names
  for (const auto& e : entries) {
    if (e.key == "node_id") {
      cfg.node_id = r.string(e);
      if (cfg.node_id.empty())
        r.fail(e, "must not be empty");
    } else if (e.key == "listen") {
      cfg.listen = r.string(e);
      std::string host;
      std::uint16_t port = 0;
      if (auto err = parse_listen(cfg.listen, e.path, host, port))
        throw yaml::load_error{fmt::format("{}: {}", r.where(e.mark), err.message)};
      cfg.listen_given = true;
    } else if (e.key == "data_dir") {
      cfg.data_dir = r.non_empty_string(e);
      cfg.data_dir_given = true;
    } else if (e.key == "policy_mode") {
      cfg.policy_mode = r.one_of(e, {"read_only", "review", "autonomous"});
    } else if (e.key == "policy_file") {
      cfg.policy_file = read_path(r, e, cfg.source);
    } else if (e.key == "store") {
      read_store(r, e, cfg.store);
    } else if (e.key == "logging") {
      read_logging(r, e, cfg.logging);
    } else if (e.key == "limits") {
      read_limits(r, e, cfg.limits);
    } else if (e.key == "budget") {
      read_budget(r, e, cfg.budget);
    } else if (e.key == "model") {
      model_entry = e;
    } else if (e.key == "models") {
      read_models(r, e, cfg.source, cfg.model);
    } else if (e.key == "sandbox") {
      read_sandbox(r, e, cfg.source, cfg.sandbox);
    } else if (e.key == "auth") {
      read_auth(r, e, cfg.auth);
    } else if (e.key == "nats") {
      read_nats(r, e, cfg.nats, cfg.source);
    } else if (e.key == "cluster") {
      read_cluster(r, e, cfg.source, cfg.cluster);
    } else if (e.key == "prometheus") {
      read_prometheus(r, e, cfg.prometheus);
    } else if (e.key == "alertmanager") {
      read_alertmanager(r, e, cfg.alertmanager);
    } else if (e.key == "flows") {
      cfg.flows.dir = read_path(r, e, cfg.source);
    } else if (e.key == "tls") {
      for (const auto& x : r.entries(e, {"cert_file", "key_file", "client_ca_file"}))
        (x.key == "cert_file"  ? cfg.tls.cert_file
         : x.key == "key_file" ? cfg.tls.key_file
                               : cfg.tls.client_ca_file) = read_path(r, x, cfg.source);
      if (cfg.tls.cert_file.empty() || cfg.tls.key_file.empty())
        r.fail(e, "needs cert_file and key_file (PEM files of the certificate and its key)");
    } else if (e.key == "works") {
      for (const auto& x :
           r.entries(e, {"templates", "check_every", "world_sync", "passivate_after"})) {
        if (x.key == "templates")
          cfg.works.templates = read_path(r, x, cfg.source);
        else if (x.key == "check_every")
          cfg.works.check_every_ms = 1000 * r.duration_s(x);
        else if (x.key == "world_sync")
          cfg.works.world_sync_ms = 1000 * r.duration_s(x);
        else
          cfg.works.passivate_after_ms = 1000 * r.duration_s(x);
      }
    } else {
      read_tools(r, e, cfg.tools);
    }
  }
  if (model_entry)
    read_model(r, *model_entry, cfg.source, cfg.model);
}

} // namespace

void apply_overrides(const overrides& o, node_config& cfg) {
  if (!o.node_id.empty())
    cfg.node_id = o.node_id;
  if (!o.listen.empty()) {
    cfg.listen = o.listen;
    cfg.listen_given = true;
  }
  if (!o.data_dir.empty()) {
    cfg.data_dir = o.data_dir;
    cfg.data_dir_given = true;
    cfg.store.path.clear(); // the store follows the data dir
  }
}

expected<node_config> load_string(const std::string& text, const std::string& name,
                                  const overrides& o, const works::kind_registry* kinds) {
  node_config cfg;
  cfg.source = name;
  reader r{name, {.substitute_env = true}};
  try {
    auto root = r.parse(text);
    if (!root.value.is_null() && !root.value.is_mapping())
      r.fail(root, "expected a mapping of settings");
    read_top(r, root, cfg);
  } catch (const yaml::load_error& e) {
    return error{errc::invalid_argument, e.message};
  }
  apply_overrides(o, cfg);
  if (auto err = finalize(cfg, kinds)) {
    // finalize names the field ("store.url: ..."); point at where that part was written, unless
    // the command line replaced it.
    auto field = err.message.substr(0, err.message.find(':'));
    bool overridden = (field == "node_id" && !o.node_id.empty()) ||
                      (field == "listen" && !o.listen.empty()) ||
                      (field == "data_dir" && !o.data_dir.empty());
    auto mark = overridden ? yaml::mark{} : r.mark_of(field);
    return error{err.code, fmt::format("{}: {}", r.where(mark), err.message)};
  }
  return cfg;
}

expected<node_config> load_file(const std::string& path, const overrides& o,
                                const works::kind_registry* kinds) {
  auto text = yaml::read_text_file(path);
  if (!text)
    return text.error();
  return load_string(*text, path, o, kinds);
}

} // namespace sreh::config
