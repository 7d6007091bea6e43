#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "config/flows/flow_file.hpp"
#include "config/node/node_config.hpp"
#include "config/node/sections.hpp"
#include "config/templates/template_file.hpp"

namespace sreh::config {

namespace {

/// A template whose runs follow a flow names one of the node's flows, only inputs it has, and
/// every input it requires.
sreh::error check_template_flows(const node_config& cfg) {
  for (const auto& t : cfg.works.loaded) {
    if (t.flow.empty())
      continue;
    const flows::flow* f = nullptr;
    std::string names;
    for (const auto& x : cfg.flows.loaded) {
      names += (names.empty() ? "" : ", ") + x.name;
      if (x.name == t.flow)
        f = &x;
    }
    auto fail = [&](const std::string& what) {
      return sreh::error{errc::invalid_argument,
                         fmt::format("{}: run.flow: {}", t.flow_where, what)};
    };
    if (f == nullptr)
      return fail(fmt::format("no flow '{}' (the node's flows: {})", t.flow,
                              names.empty() ? "none; set flows: DIR" : names));
    for (const auto& [name, _] : t.flow_inputs)
      if (f->input(name) == nullptr)
        return fail(fmt::format("flow {} has no input '{}'", f->name, name));
    for (const auto& in : f->inputs)
      if (in.required() && t.flow_inputs.count(in.name) == 0)
        return fail(fmt::format("flow {} requires input '{}' (run.inputs)", f->name, in.name));
  }
  return {};
}

error check_one_of(const std::string& value, std::string_view field,
                   std::initializer_list<std::string_view> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end())
    return {};
  return field_error(field,
                     fmt::format("expected one of {}, got '{}'", fmt::join(allowed, ", "), value));
}

} // namespace

namespace {

/// Cluster mode: loads the topology; this node must be a member, and its listen address and
/// default data_dir follow from that.
error apply_topology(node_config& cfg) {
  auto topo = load_topology(cfg.cluster.topology);
  if (!topo)
    return field_error("cluster.topology", topo.error().message);
  const auto* self = topo->find(cfg.node_id);
  if (self == nullptr) {
    std::vector<std::string_view> ids;
    for (const auto& m : topo->nodes)
      ids.push_back(m.id);
    return field_error("node_id", fmt::format("'{}' is not in topology {} (nodes: {})", cfg.node_id,
                                              topo->source, fmt::join(ids, ", ")));
  }
  if (cfg.store.kind != "postgres")
    return field_error("store.kind", "a cluster needs the shared PostgreSQL store: set "
                                     "store.kind: postgres");
  if (cfg.nats.url.empty())
    return field_error("nats.url", "required in a cluster: SSE across nodes and the relay need "
                                   "JetStream (nats://host:port)");
  if (cfg.listen_given && cfg.listen != self->http)
    return field_error("listen", fmt::format("{} differs from {}, the http address of node '{}' "
                                             "in topology {}: leave listen out (a cluster node "
                                             "listens on its topology address) or make them equal",
                                             cfg.listen, self->http, self->id, topo->source));
  cfg.listen = self->http;
  if (!cfg.data_dir_given)
    cfg.data_dir = "./data/" + cfg.node_id;
  cfg.cluster.topo = std::move(*topo);
  return {};
}

error check_auth(const auth_config& auth, const std::string& listen_host) {
  if (auto err = check_one_of(auth.mode, "auth.mode", {"tokens", "none"}))
    return err;
  if (auth.mode == "none" && !is_loopback_host(listen_host))
    return field_error("auth.mode",
                       fmt::format("none is allowed only when listen is a loopback address "
                                   "(127.0.0.0/8, ::1, localhost), but listen host is '{}'",
                                   listen_host));
  return {};
}

} // namespace

error finalize(node_config& cfg, const works::kind_registry* kinds,
               const section_registry* sections) {
  if (cfg.node_id.empty())
    return field_error("node_id", "must not be empty");
  cfg.cluster.topo.reset();
  if (!cfg.cluster.topology.empty())
    if (auto err = apply_topology(cfg))
      return err;
  std::string host;
  std::uint16_t port = 0;
  if (auto err = parse_listen(cfg.listen, "listen", host, port))
    return err;
  if (cfg.data_dir.empty())
    return field_error("data_dir", "must not be empty");
  if (auto err = check_auth(cfg.auth, host))
    return err;
  for (auto err :
       {check_one_of(cfg.policy_mode, "policy_mode", {"read_only", "review", "autonomous"}),
        check_one_of(cfg.store.kind, "store.kind", {"sqlite", "postgres"}),
        check_one_of(cfg.store.synchronous, "store.synchronous", {"normal", "full"}),
        check_one_of(cfg.logging.level, "logging.level",
                     {"trace", "debug", "info", "warn", "error", "critical", "off"}),
        check_one_of(cfg.logging.format, "logging.format", {"text", "json"}),
        check_one_of(cfg.model.provider, "model.provider",
                     {"builtin", "scripted", "openai", "anthropic"})})
    if (err)
      return err;
  if (cfg.store.path.empty()) {
    auto dir = cfg.data_dir;
    while (dir.size() > 1 && dir.back() == '/')
      dir.pop_back();
    cfg.store.path = dir == "/" ? "/sreh.db" : dir + "/sreh.db";
  }
  if (cfg.store.kind == "postgres" && cfg.store.url.empty())
    return field_error("store.url", "required when store.kind is postgres");
  if (cfg.model.provider == "scripted" && cfg.model.script.empty())
    return field_error("model.script", "required (at least one step) when model.provider is "
                                       "scripted");
  cfg.works.loaded.clear();
  if (!cfg.works.templates.empty()) {
    auto t = load_template_dir(cfg.works.templates, template_options{kinds});
    if (!t)
      return t.error().code == errc::not_found ? field_error("works.templates", t.error().message)
                                               : t.error();
    cfg.works.loaded = std::move(*t);
  }
  cfg.flows.loaded.clear();
  if (!cfg.flows.dir.empty()) {
    auto f = load_flow_dir(cfg.flows.dir);
    if (!f)
      return f.error().code == errc::not_found ? field_error("flows", f.error().message)
                                               : f.error();
    cfg.flows.loaded = std::move(*f);
  }
  if (auto err = check_template_flows(cfg))
    return err;
  if (sections != nullptr)
    for (const auto& s : sections->all())
      if (s.check)
        if (auto err = s.check(cfg))
          return err;
  return {};
}

} // namespace sreh::config
