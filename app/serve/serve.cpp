// The composition root of a node: config → store → group-commit writer → actors → HTTP front.

#include "app/serve/serve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "actors/tools/tool.hpp"
#include "app/cli/cluster_check.hpp"
#include "app/serve/banner.hpp"
#include "app/serve/evolve_setup.hpp"
#include "app/serve/node_setup.hpp"
#include "app/serve/plugins.hpp"
#include "config/flows/flow_file.hpp"
#include "config/node/node_config.hpp"
#include "config/templates/template_file.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/logger.hpp"
#include "net/http/auth.hpp"
#include "net/http/http_front.hpp"
#include "net/http/routes/models.hpp"
#include "net/http/tls.hpp"
#include "net/node/node_parts.hpp"
#include "persistence/store/data_dir_lock.hpp"

namespace sreh::app {

namespace {

constexpr const char* serve_usage =
  "usage: sreh serve [--config FILE] [--node-id ID] [--listen HOST:PORT] [--data-dir DIR]\n";

struct serve_args {
  std::string config_file;
  config::overrides set; // --node-id, --listen, --data-dir
};

bool parse_args(int argc, char** argv, serve_args& out) {
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sreh serve: %s needs a value\n", argv[i]);
        return false;
      }
      dst = argv[++i];
      return true;
    };
    if (a == "--config") {
      if (!value(out.config_file))
        return false;
    } else if (a == "--node-id") {
      if (!value(out.set.node_id))
        return false;
    } else if (a == "--listen") {
      if (!value(out.set.listen))
        return false;
    } else if (a == "--data-dir") {
      if (!value(out.set.data_dir))
        return false;
    } else {
      std::fprintf(stderr, "sreh serve: unknown option '%s'\n%s", argv[i], serve_usage);
      return false;
    }
  }
  return true;
}

/// The signals the main thread waits for: SIGINT and SIGTERM stop the node, SIGHUP reloads.
sigset_t node_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

/// Blocks until SIGINT or SIGTERM; on SIGHUP reads the TLS files again (when `tls` is set).
void wait_for_signal(net::tls_server_context* tls) {
  const auto set = node_signals();
  int sig = 0;
  while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
    if (tls == nullptr) {
      logger("node")->info("received SIGHUP: nothing to reload (no tls)");
    } else if (auto err = tls->reload()) {
      logger("node")->error(
        "received SIGHUP: TLS reload failed, keeping the certificate in use: {}", err.message);
    } else {
      logger("node")->info("received SIGHUP: TLS certificate reloaded from {}",
                           tls->files().cert_file);
    }
  }
  logger("node")->info("received {}, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
}

int fail(const std::string& what) {
  std::fprintf(stderr, "sreh serve: %s\n", what.c_str());
  return 1;
}

/// Why the node stops on its own: set once, by the node's fatal handler, which then sends this
/// process the SIGTERM that wait_for_signal takes.
class fatal_stop {
 public:
  void operator()(std::string why) {
    {
      std::lock_guard lk{mtx_};
      if (!why_.empty())
        return;
      why_ = std::move(why);
    }
    logger("node")->critical("{}: stopping the node", why_);
    ::kill(::getpid(), SIGTERM);
  }
  [[nodiscard]] std::string why() const {
    std::lock_guard lk{mtx_};
    return why_;
  }

 private:
  mutable std::mutex mtx_;
  std::string why_;
};

/// What the process exits with when the node stopped on its own (EX_SOFTWARE): a service
/// manager restarts it, a person sees a failed unit, never a node that looks up and runs nothing.
constexpr int fatal_exit_code = 70;

/// The exit code of a node that has stopped, after its last line.
int stopped(const fatal_stop& fatal) {
  if (const auto why = fatal.why(); !why.empty()) {
    logger("node")->critical("stopped: {}", why);
    std::fprintf(stderr, "sreh serve: stopped: %s\n", why.c_str());
    return fatal_exit_code;
  }
  logger("node")->info("stopped cleanly");
  return 0;
}

/// Raises the open-files limit to what the connection limits need (two per allowed connection,
/// at most the hard limit), as servers do; warns when the hard limit is lower.
void raise_file_limit(const config::node_config& cfg) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
    return;
  const auto want = static_cast<rlim_t>(2 * cfg.limits.max_connections + 1024);
  if (lim.rlim_cur >= want)
    return;
  auto raised = lim;
  raised.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
  if (raised.rlim_cur > lim.rlim_cur)
    setrlimit(RLIMIT_NOFILE, &raised);
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < want)
    logger("node")->warn("open files limited to {} (ulimit -n); limits.max_connections {} wants "
                         "{}: connections past the limit will fail to be accepted",
                         lim.rlim_cur, cfg.limits.max_connections, want);
}

/// The tokens the node accepts; says where the admin token is, or that auth is off. `admin_file`
/// gets the generated admin token's path (none with configured tokens).
expected<std::shared_ptr<const net::token_table>> load_tokens(const config::node_config& cfg,
                                                              std::string& admin_file) {
  auto log = logger("node");
  std::optional<net::admin_token> admin;
  auto table = net::make_token_table(cfg, &admin);
  if (!table)
    return sreh::error{table.error().code, "auth: " + table.error().message};
  if (admin)
    admin_file = admin->path;
  if (!table->enabled()) {
    log->warn("auth is off (auth.mode: none): every request acts as 'local' with the admin role "
              "(single-user loopback mode on {})",
              cfg.listen);
  } else if (admin && admin->created) {
    auto approver = net::admin_token_path(cfg.data_dir, "approver");
    log->warn("generated an admin token in {} and an approver token in {} (mode 0600); the CLI "
              "reads the admin token from there or from SREH_TOKEN",
              admin->path, approver);
    std::fprintf(stderr,
                 "generated an admin token in %s (mode 0600); the CLI reads it from there or from "
                 "SREH_TOKEN.\nApprovals need another person: the approver token is in %s\n"
                 "  (SREH_TOKEN=$(cat %s) %s approve APPROVAL_ID)\n",
                 admin->path.c_str(), approver.c_str(), approver.c_str(), cli_command().c_str());
  } else if (admin) {
    log->info("auth: admin token from {}", admin->path);
  } else {
    log->info("auth: {} configured token(s)", table->size());
  }
  return std::make_shared<const net::token_table>(std::move(*table));
}

/// `sreh config check FLOW_FILE`: everything but its tools (the node's toolsets decide those)
/// and the flows it calls (its folder decides those).
int check_flow_file(const std::string& path, const std::string& text) {
  auto f = config::load_flow_string(text, path);
  if (!f) {
    std::fprintf(stderr, "%s\n", f.error().message.c_str());
    return 1;
  }
  std::printf("%s: ok (flow '%s', %zu inputs, %zu steps, version %s; its tools are checked when "
              "a node loads it)\n",
              path.c_str(), f->name.c_str(), f->inputs.size(), f->all_steps().size(),
              f->version.c_str());
  return 0;
}

/// The plugins' route groups, and GET /v1/models and POST /v1/models/check over the node's
/// provider.
std::vector<net::route_group> with_model_routes(std::vector<net::route_group> groups,
                                                actors::model_provider_ptr provider) {
  groups.push_back(net::model_routes(std::move(provider)));
  return groups;
}

/// The model routes of `sreh config check`: provider, server and model, and whether a key is
/// set (never the key).
void print_model_routes(const config::model_config& m) {
  if (m.provider != "openai" && m.provider != "anthropic")
    return;
  auto line = [](const config::model_route& r) {
    std::printf("  model route %s: %s %s at %s, api key %s%s\n", r.name.c_str(), r.provider.c_str(),
                r.model.c_str(), r.base_url.c_str(),
                !r.api_key_unset.empty() ? "not set (its variable is unset)"
                : r.api_key.empty()      ? "not set"
                                         : "set",
                r.stream ? ", streamed" : "");
  };
  line(m.main);
  for (const auto& name : m.fallback) {
    if (auto i = m.routes.find(name); i != m.routes.end())
      line(i->second);
    else
      std::printf("  model route builtin: the builtin reasoner (last resort)\n");
  }
}

} // namespace

expected<config::node_config> load_node_config(const std::string& file,
                                               const config::overrides& set,
                                               const node_registries& regs) {
  if (!file.empty())
    return config::load_file(file, set, &regs.kinds, &regs.sections);
  config::node_config cfg;
  config::apply_overrides(set, cfg);
  if (auto err = config::finalize(cfg, &regs.kinds, &regs.sections))
    return err;
  return cfg;
}

int serve_command(int argc, char** argv) {
  serve_args args;
  if (!parse_args(argc, argv, args))
    return 2;
  // Block the node's signals in every thread we start; the main thread waits for them.
  const auto set = node_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const auto regs = registries();
  auto cfg = load_node_config(args.config_file, args.set, regs);
  if (!cfg)
    return fail(cfg.error().message);
  if (auto err = setup_logging(cfg->logging.level, cfg->logging.format))
    return fail("logging: " + err.message);
  auto log = logger("node");
  raise_file_limit(*cfg);
  std::string host;
  std::uint16_t port = 0;
  if (auto err = config::parse_listen(cfg->listen, "listen", host, port))
    return fail(err.message);
  // Every file the config names, parsed before the data dir is touched: a config that is not
  // good leaves nothing behind (no lock, no tokens).
  auto setup = prepare_node(regs, *cfg);
  if (!setup)
    return fail(setup.error().message);
  auto& tls = setup->tls;
  auto& tools = setup->tools;
  const auto& provider = setup->plugins.provider;
  // One node per data dir, claimed before anything in it is read or written.
  auto lock = persistence::data_dir_lock::acquire(cfg->data_dir, cfg->node_id);
  if (!lock)
    return fail(lock.error().message);
  std::string admin_file;
  auto tokens = load_tokens(*cfg, admin_file);
  if (!tokens)
    return fail(tokens.error().message);
  const char* scheme = tls ? "https" : "http";
  auto versions = make_versions(regs, *cfg, provider, setup->policy);
  std::unique_ptr<actors::candidate_service> gate; // outlives the parts, whose child it runs
  auto fatal = std::make_shared<fatal_stop>();
  auto parts = net::node_parts::start(*cfg, tools, std::move(setup->policy), provider, {}, versions,
                                      [fatal](std::string why) { (*fatal)(std::move(why)); });
  if (!parts)
    return fail(parts.error().message);
  auto& n = **parts;
  auto started_gate = start_gate(n, regs, *cfg, versions);
  if (!started_gate)
    return fail(started_gate.error().message);
  gate = std::move(*started_gate);
  const bool api = !cfg->cluster.topo || cfg->cluster.topo->find(cfg->node_id)->has_role("api");
  // The front is a child of the node's supervision tree: restarted on the same port should its
  // io loop fail, stopped (before the kernel) when the node stops.
  auto http = std::make_shared<net::http_front>(
    net::server_context{
      n.store(),   n.kernel(),       n.hub(),    *cfg,
      n.clock(),   n.ids(),          *tokens,    api,
      n.relay(),   n.feed(),         &n.tools(), with_model_routes(regs.routes, provider),
      &n.tree(),   &n.metrics(),     n.works(),  tls,
      &n.memory(), &n.postmortems(), gate.get(), n.notifier()},
    host, port);
  if (!api)
    log->info("no api role: serving only /healthz, /readyz, /v1/stats, /v1/actors and "
              "/v1/cluster/nodes");
  if (auto err = n.supervise(http))
    return fail(err.message);
  log->info("sreh {} node '{}' serving on {}://{}:{}{} (store: {} {}, model: {}, tools: {})",
            SREH_VERSION, cfg->node_id, scheme, host, http->port(),
            tls && !cfg->tls.client_ca_file.empty() ? " (client certificates required)" : "",
            cfg->store.kind, cfg->store.path, provider->name(), tools->all().size());
  if (const auto& topo = cfg->cluster.topo)
    log->info("member of cluster '{}' ({} nodes, topology {}); data dir {}", topo->name,
              topo->nodes.size(), topo->source, cfg->data_dir);
  std::fputs(start_banner({scheme, host, http->port(), cfg->store.path, setup->plugins.banner,
                           (*tokens)->enabled(), admin_file})
               .c_str(),
             stderr);
  wait_for_signal(tls.get());
  parts->reset(); // the front and the relay, the actors, then the writer, then the store
  return stopped(*fatal);
}

int config_check_command(int argc, char** argv) {
  config::overrides set;
  bool ok = argc == 2 || (argc == 4 && std::string_view{argv[2]} == "--node-id");
  if (!ok || std::string_view{argv[0]} != "check") {
    std::fputs(
      "usage: sreh config check FILE [--node-id ID]   (a node config, a Work template or a "
      "flow)\n",
      stderr);
    return 2;
  }
  if (argc == 4)
    set.node_id = argv[3];
  if (auto text = config::yaml::read_text_file(argv[1]);
      text && config::looks_like_template(*text)) {
    const auto regs = registries();
    auto t = config::load_template_string(*text, argv[1], {&regs.kinds});
    if (!t) {
      std::fprintf(stderr, "%s\n", t.error().message.c_str());
      return 1;
    }
    std::printf("%s: ok (Work template '%s', kind %s, %zu fields, version %s, double texting %s)\n",
                argv[1], t->name.c_str(), t->kind.c_str(), t->fields.size(), t->version.c_str(),
                works::to_string(t->on_trigger));
    return 0;
  }
  if (auto text = config::yaml::read_text_file(argv[1]); text && config::looks_like_flow(*text))
    return check_flow_file(argv[1], *text);
  const auto regs = registries();
  // Finalized: the topology, the templates, the plugins' sections and their checks.
  auto cfg = config::load_file(argv[1], set, &regs.kinds, &regs.sections);
  if (!cfg) {
    std::fprintf(stderr, "%s\n", cfg.error().message.c_str());
    return 1;
  }
  // What serve parses before it touches the data dir: the policy, TLS and scenario files, the
  // model provider, the flows' tools. A key variable unset here is a warning: serve needs it.
  auto setup = prepare_node(regs, *cfg, {.require_model_keys = false});
  if (!setup) {
    std::fprintf(stderr, "%s\n", setup.error().message.c_str());
    return 1;
  }
  std::printf("%s: ok (node '%s', listen %s, store %s, data dir %s)\n", argv[1],
              cfg->node_id.c_str(), cfg->listen.c_str(), cfg->store.kind.c_str(),
              cfg->data_dir.c_str());
  print_model_routes(cfg->model);
  if (!cfg->policy_file.empty())
    std::printf("policy %s: %zu rules, default mode %s\n", cfg->policy_file.c_str(),
                setup->policy.rules.size(), policy::to_string(setup->policy.default_mode));
  for (const auto& unset : unset_model_keys(cfg->model))
    std::fprintf(stderr, "warning: %s: `sreh serve` refuses to start until it is set\n",
                 unset.c_str());
  if (cfg->cluster.topo)
    print_topology(*cfg->cluster.topo, cfg->node_id);
  if (!cfg->works.templates.empty()) {
    std::printf("Work templates in %s:", cfg->works.templates.c_str());
    for (const auto& t : cfg->works.loaded)
      std::printf(" %s (%s)", t.name.c_str(), t.kind.c_str());
    std::printf("%s\n", cfg->works.loaded.empty() ? " none" : "");
  }
  if (!cfg->flows.dir.empty()) {
    std::printf("flows in %s:", cfg->flows.dir.c_str());
    for (const auto& f : cfg->flows.loaded)
      std::printf(" %s", f.name.c_str());
    std::printf("%s\n", cfg->flows.loaded.empty() ? " none" : "");
  }
  return 0;
}

} // namespace sreh::app
