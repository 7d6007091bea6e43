#include <fmt/format.h>

#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "config/node/section_readers.hpp"

namespace sreh::config {

namespace {

using namespace detail;
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
  using f = int_field<limits_config>;
  static constexpr f fields[] = {
    {"max_body_bytes", &limits_config::max_body_bytes, 1, unbounded},
    {"max_header_bytes", &limits_config::max_header_bytes, 1, unbounded},
    {"max_json_depth", &limits_config::max_json_depth, 1, 512},
    {"max_connections", &limits_config::max_connections, 1, 1'000'000},
    {"max_connections_per_client", &limits_config::max_connections_per_client, 0, 1'000'000},
    {"header_timeout_ms", &limits_config::header_timeout_ms, 1, 3'600'000},
    {"idle_timeout_ms", &limits_config::idle_timeout_ms, 1, 3'600'000},
    {"max_commit_backlog", &limits_config::max_commit_backlog, 1, unbounded},
    {"sse_queue_events", &limits_config::sse_queue_events, 1, unbounded},
    {"sse_heartbeat_ms", &limits_config::sse_heartbeat_ms, 1, unbounded},
    {"http_threads", &limits_config::http_threads, 1, 256},
    {"handler_threads", &limits_config::handler_threads, 1, 256},
    {"scheduler_threads", &limits_config::scheduler_threads, 1, 256},
    {"tool_threads", &limits_config::tool_threads, 1, 256},
    {"store_threads", &limits_config::store_threads, 1, 256},
  };
  auto entries =
    r.entries(section, {"max_body_bytes", "max_header_bytes", "max_json_depth", "max_connections",
                        "max_connections_per_client", "header_timeout_ms", "idle_timeout_ms",
                        "max_commit_backlog", "sse_queue_events", "sse_heartbeat_ms",
                        "http_threads", "handler_threads", "scheduler_threads", "scheduler_policy",
                        "tool_threads", "store_threads"});
  for (const auto& e : entries)
    if (!read_int_field(r, e, fields, out))
      out.scheduler_policy = r.one_of(e, {"sharing", "stealing"});
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

void read_cluster(reader& r, const entry& section, const std::string& config_file,
                  cluster_config& out) {
  for (const auto& e : r.entries(section, {"topology"}))
    out.topology = read_path(r, e, config_file);
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

void read_node_id(reader& r, const entry& e, node_config& cfg) {
  cfg.node_id = r.string(e);
  if (cfg.node_id.empty())
    r.fail(e, "must not be empty");
}

void read_listen(reader& r, const entry& e, node_config& cfg) {
  cfg.listen = r.string(e);
  std::string host;
  std::uint16_t port = 0;
  if (auto err = parse_listen(cfg.listen, e.path, host, port))
    throw yaml::load_error{fmt::format("{}: {}", r.where(e.mark), err.message)};
  cfg.listen_given = true;
}

void read_data_dir(reader& r, const entry& e, node_config& cfg) {
  cfg.data_dir = r.non_empty_string(e);
  cfg.data_dir_given = true;
}

void read_tls(reader& r, const entry& e, node_config& cfg) {
  for (const auto& x : r.entries(e, {"cert_file", "key_file", "client_ca_file"}))
    (x.key == "cert_file"  ? cfg.tls.cert_file
     : x.key == "key_file" ? cfg.tls.key_file
                           : cfg.tls.client_ca_file) = read_path(r, x, cfg.source);
  if (cfg.tls.cert_file.empty() || cfg.tls.key_file.empty())
    r.fail(e, "needs cert_file and key_file (PEM files of the certificate and its key)");
}

void read_works(reader& r, const entry& e, node_config& cfg) {
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
}

void read_evolve(reader& r, const entry& e, node_config& cfg) {
  for (const auto& x : r.entries(e, {"suites", "replay_last", "approvals", "mode"}))
    if (x.key == "suites") {
      cfg.evolve.suites.clear();
      for (const auto& item : r.non_empty_items(x))
        cfg.evolve.suites.push_back(read_path(r, item, cfg.source));
    } else if (x.key == "replay_last")
      cfg.evolve.replay_last = r.integer(x, 0, 500);
    else if (x.key == "approvals")
      cfg.evolve.approvals = r.integer(x, 1, 9);
    else
      cfg.evolve.mode = r.one_of(x, {"autonomous", "review"});
}

/// A top-level key of the node config and its reader.
struct own_section {
  std::string_view name;
  void (*read)(reader&, const entry&, node_config&);
};

/// The top-level keys of the node's own sections, in the order an unknown key's error lists
/// them (the plugins' follow). `model` and `tools` have no reader here: `model` is read after
/// `models`, whose routes its fallback names, and `tools` holds plugins' sections too.
constexpr own_section own_sections[] = {
  {"node_id", read_node_id},
  {"listen", read_listen},
  {"data_dir", read_data_dir},
  {"policy_mode",
   [](reader& r, const entry& e, node_config& cfg) {
     cfg.policy_mode = r.one_of(e, {"read_only", "review", "autonomous"});
   }},
  {"policy_file", [](reader& r, const entry& e,
                     node_config& cfg) { cfg.policy_file = read_path(r, e, cfg.source); }},
  {"store", [](reader& r, const entry& e, node_config& cfg) { read_store(r, e, cfg.store); }},
  {"logging", [](reader& r, const entry& e, node_config& cfg) { read_logging(r, e, cfg.logging); }},
  {"limits", [](reader& r, const entry& e, node_config& cfg) { read_limits(r, e, cfg.limits); }},
  {"budget", [](reader& r, const entry& e, node_config& cfg) { read_budget(r, e, cfg.budget); }},
  {"model", nullptr},
  {"tools", nullptr},
  {"auth", [](reader& r, const entry& e, node_config& cfg) { read_auth(r, e, cfg.auth); }},
  {"nats",
   [](reader& r, const entry& e, node_config& cfg) { read_nats(r, e, cfg.nats, cfg.source); }},
  {"cluster", [](reader& r, const entry& e,
                 node_config& cfg) { read_cluster(r, e, cfg.source, cfg.cluster); }},
  {"works", read_works},
  {"flows", [](reader& r, const entry& e,
               node_config& cfg) { cfg.flows.dir = read_path(r, e, cfg.source); }},
  {"memory",
   [](reader& r, const entry& e, node_config& cfg) {
     for (const auto& x : r.entries(e, {"recall", "postmortems"}))
       if (x.key == "recall")
         cfg.memory.recall = r.integer(x, 0, 10);
       else
         cfg.memory.postmortems = r.boolean(x);
   }},
  {"evolve", read_evolve},
  {"tls", read_tls},
  {"models",
   [](reader& r, const entry& e, node_config& cfg) { read_models(r, e, cfg.source, cfg.model); }},
};

const own_section* own_section_of(std::string_view key) {
  for (const auto& s : own_sections)
    if (s.name == key && s.read != nullptr)
      return &s;
  return nullptr;
}

/// A plugin's section `e` into `cfg.sections`.
void read_plugin_section(reader& r, const entry& e, const section_spec& s, node_config& cfg) {
  cfg.sections.insert_or_assign(s.path, s.read(r, e, section_context{cfg.source}));
}

/// `tools:`: the testkit, what the toolsets offer and the node does not, and the plugins'
/// sections under it (`tools.http_probe`, `tools.shell`).
void read_tools(reader& r, const entry& section, const section_registry& plugins,
                node_config& cfg) {
  std::vector<std::string_view> names{"testkit", "record_file", "disable"};
  for (auto key : plugins.keys_under("tools"))
    names.push_back(key);
  for (const auto& e : r.entries(section, names)) {
    if (e.key == "testkit")
      cfg.tools.testkit = r.boolean(e);
    else if (e.key == "record_file")
      cfg.tools.record_file = r.string(e);
    else if (e.key == "disable")
      for (const auto& x : r.items(e))
        cfg.tools.disable.push_back(r.non_empty_string(x));
    else
      read_plugin_section(r, e, *plugins.find(e.path), cfg);
  }
}

void read_top(reader& r, const entry& root, const section_registry& plugins, node_config& cfg) {
  std::vector<std::string_view> names;
  for (const auto& s : own_sections)
    names.push_back(s.name);
  for (auto key : plugins.keys_under(""))
    names.push_back(key);
  std::optional<entry> model_entry;
  for (const auto& e : r.entries(root, names)) {
    if (e.key == "model")
      model_entry = e;
    else if (e.key == "tools")
      read_tools(r, e, plugins, cfg);
    else if (const auto* s = own_section_of(e.key))
      s->read(r, e, cfg);
    else
      read_plugin_section(r, e, *plugins.find(e.path), cfg);
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
                                  const overrides& o, const works::kind_registry* kinds,
                                  const section_registry* sections) {
  static const section_registry no_sections;
  node_config cfg;
  cfg.source = name;
  reader r{name, {.substitute_env = true}};
  try {
    auto root = r.parse(text);
    if (!root.value.is_null() && !root.value.is_mapping())
      r.fail(root, "expected a mapping of settings");
    read_top(r, root, sections != nullptr ? *sections : no_sections, cfg);
  } catch (const yaml::load_error& e) {
    return error{errc::invalid_argument, e.message};
  }
  apply_overrides(o, cfg);
  if (auto err = finalize(cfg, kinds, sections)) {
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
                                const works::kind_registry* kinds,
                                const section_registry* sections) {
  auto text = yaml::read_text_file(path);
  if (!text)
    return text.error();
  return load_string(*text, path, o, kinds, sections);
}

} // namespace sreh::config
