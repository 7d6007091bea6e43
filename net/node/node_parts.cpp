#include "net/node/node_parts.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>

#include "actors/kernel/flow_tool.hpp"
#include "actors/memory/memory_tool.hpp"
#include "actors/works/world_tool.hpp"
#include "core/base/hash.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/notify/settings.hpp"
#include "net/client/notify_transport.hpp"
#include "persistence/postgres/postgres_store.hpp"
#include "persistence/sqlite/sqlite_store.hpp"

namespace sreh::net {

expected<persistence::store_ptr> open_store(const config::store_config& s) {
  return s.kind == "postgres" ? persistence::open_postgres_store({s.url, {}, 4})
                              : persistence::open_sqlite_store({s.path, s.synchronous});
}

namespace {

/// `tools` without those `cfg` disables, each wrapped by `decorate` (when given).
expected<std::shared_ptr<actors::tool_registry>>
chosen_tools(const config::node_config& cfg, std::shared_ptr<actors::tool_registry> tools,
             const node_parts::tool_decorator& decorate) {
  for (const auto& name : cfg.tools.disable)
    if (!tools->remove(name)) {
      std::string names;
      for (const auto& t : tools->all())
        names += (names.empty() ? "" : ", ") + t->name();
      return sreh::error{errc::invalid_argument,
                         fmt::format("tools.disable: this node has no tool '{}' (it has: {})", name,
                                     names.empty() ? "none" : names)};
    }
  if (decorate) {
    auto wrapped = std::make_shared<actors::tool_registry>();
    for (const auto& t : tools->all())
      wrapped->add(decorate(t));
    for (const auto& src : tools->world_sources())
      wrapped->add_world_source(src);
    tools = std::move(wrapped);
  }
  return tools;
}

} // namespace

expected<std::unique_ptr<node_parts>>
node_parts::start(const config::node_config& cfg, std::shared_ptr<actors::tool_registry> tools,
                  policy::policy_set policy, actors::model_provider_ptr provider,
                  const recorded_answers& recorded,
                  std::shared_ptr<const actors::version_registry> versions,
                  std::function<void(std::string why)> on_fatal) {
  std::unique_ptr<node_parts> p{new node_parts(cfg)};
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec)
    return sreh::error{errc::invalid_argument,
                       "cannot create data dir '" + cfg.data_dir + "': " + ec.message()};
  auto store = open_store(cfg.store);
  if (!store)
    return sreh::error{store.error().code, "store: " + store.error().message};
  p->store_ = std::move(*store);
  persistence::group_writer_options wo;
  wo.batches_per_commit = &p->metrics_
                             .histogram("sreh_commit_batches",
                                        "Write batches (a step, a run's creation, a vote) per "
                                        "store transaction of the group commit.",
                                        {}, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048})
                             .with({});
  p->writer_ = std::make_unique<persistence::group_writer>(*p->store_, wo);
  auto* hub = &p->hub_;
  // One node: the hub gets this node's commits straight from the writer. A cluster: it gets
  // every node's commits, in the cluster-wide seq order, from the JetStream feed.
  const bool clustered = cfg.cluster.topo.has_value();
  if (!clustered)
    p->writer_->set_events_listener(
      [hub](std::vector<event> evs) { hub->publish(std::move(evs)); });
  p->writer_->start();
  if (auto err = p->record_config(policy))
    return err;
  if (clustered) {
    auto last = p->store_->stats();
    if (!last)
      return last.error();
    net::event_feed_options fo;
    fo.url = cfg.nats.url;
    fo.tls = {cfg.nats.ca_file, cfg.nats.cert_file, cfg.nats.key_file};
    fo.stream = cfg.nats.stream;
    fo.subject_prefix = cfg.nats.subject_prefix;
    fo.client_name = "sreh-feed-" + cfg.node_id;
    p->feed_ = std::make_unique<net::event_feed>(
      *p->store_, std::move(fo), [hub](const std::vector<event>& evs) { hub->publish(evs); });
    if (auto err = p->feed_->start(last->last_event_seq))
      return err;
  }
  // world.get reads what the world sync observes from the tools' world sources.
  auto world = std::make_shared<actors::world_view>();
  if (!tools->world_sources().empty())
    tools->add(actors::make_world_tool(world));
  // flow.run starts the node's flows from a run; it reaches the kernel once the node is up.
  auto flow_kernel = std::make_shared<actors::flow_kernel>();
  if (!cfg.flows.loaded.empty())
    tools->add(actors::make_flow_tool(cfg, *p->store_, flow_kernel));
  // memory.search reads the node's long-term memory (the recall of every goal run uses it).
  auto memory = std::make_shared<actors::memory_link>();
  tools->add(actors::make_memory_tool(memory));
  auto chosen = chosen_tools(cfg, std::move(tools), recorded.tools);
  if (!chosen)
    return chosen.error();
  p->tools_ = std::move(*chosen);
  p->node_ =
    std::make_unique<actors::node>(cfg, *p->store_, *p->writer_, *p->tools_, std::move(policy),
                                   std::move(provider), p->clock_, p->ids_);
  p->node_->use_metrics(p->metrics_);
  p->node_->use_hub(p->hub_, world);
  p->node_->use_versions(std::move(versions));
  p->node_->use_replay(recorded.hooks);
  if (on_fatal)
    p->node_->on_fatal(std::move(on_fatal));
  if (auto err = p->node_->start())
    return err;
  flow_kernel->kernel = &p->node_->kernel();
  memory->service = &p->node_->memory();
  p->add_collectors();
  if (auto err = p->start_relay())
    return err;
  if (auto err = p->start_notifier())
    return err;
  return p;
}

void node_parts::add_collectors() {
  using metrics::collected;
  using metrics::kind;
  auto one = [](std::string name, std::string help, kind k, double v) {
    return collected{std::move(name), std::move(help), k, {{{}, v}}};
  };
  metrics_.add_collector([this, one] {
    auto k = node_->kernel().stats();
    auto w = writer_->stats();
    std::vector<collected> out{
      one("sreh_runs_started_total", "Runs started on this node.", kind::counter,
          static_cast<double>(k.started)),
      one("sreh_runs_recovered_total", "Runs resumed from the store after a restart or crash.",
          kind::counter, static_cast<double>(k.recovered)),
      one("sreh_runs_active", "Runs with a live actor (stepping or about to).", kind::gauge,
          static_cast<double>(k.active_runs)),
      one("sreh_runs_parked", "Runs waiting (an approval, a timer) with no actor.", kind::gauge,
          static_cast<double>(k.parked)),
      one("sreh_approvals_pending", "Approvals waiting for a decision.", kind::gauge,
          static_cast<double>(k.pending_approvals)),
      one("sreh_steps_total", "Tool steps whose outcome was journaled.", kind::counter,
          static_cast<double>(k.steps)),
      one("sreh_commits_total", "Store transactions of the group commit.", kind::counter,
          static_cast<double>(w.commits)),
      one("sreh_commit_rows_total", "Rows the group commit wrote.", kind::counter,
          static_cast<double>(w.rows)),
      one("sreh_commit_failures_total", "Group-commit transactions that failed.", kind::counter,
          static_cast<double>(w.failures)),
      one("sreh_commit_backlog", "Write batches waiting for the writer.", kind::gauge,
          static_cast<double>(writer_->backlog())),
      one("sreh_sse_clients", "Open SSE streams.", kind::gauge,
          static_cast<double>(hub_.subscribers())),
    };
    if (relay_) {
      auto r = relay_->stats();
      out.push_back(one("sreh_relay_lag_events", "Events committed but not yet in JetStream.",
                        kind::gauge, static_cast<double>(r.lag)));
      out.push_back(one("sreh_relay_published_total", "Events handed to JetStream (retries too).",
                        kind::counter, static_cast<double>(r.published)));
      out.push_back(one("sreh_relay_connected", "1 while the relay holds a NATS connection.",
                        kind::gauge, r.connected ? 1.0 : 0.0));
    }
    if (notifier_) {
      auto n = notifier_->stats();
      out.push_back(one("sreh_notifications_delivered_total", "Notifications delivered.",
                        kind::counter, static_cast<double>(n.delivered)));
      out.push_back(one("sreh_notification_attempts_failed_total",
                        "Delivery attempts that failed (retried later or dead-lettered).",
                        kind::counter, static_cast<double>(n.attempts_failed)));
      out.push_back(one("sreh_notifications_dead_total",
                        "Notifications dead-lettered after their attempts.", kind::counter,
                        static_cast<double>(n.dead)));
    }
    return out;
  });
}

sreh::error node_parts::start_relay() {
  if (cfg_.nats.url.empty())
    return {};
  if (cfg_.cluster.topo && !cfg_.cluster.topo->find(cfg_.node_id)->has_role("relay"))
    return {}; // this member never publishes the log
  net::relay_options ro;
  ro.url = cfg_.nats.url;
  ro.tls = {cfg_.nats.ca_file, cfg_.nats.cert_file, cfg_.nats.key_file};
  ro.stream = cfg_.nats.stream;
  ro.subject_prefix = cfg_.nats.subject_prefix;
  // A shared store may have several nodes with a relay: the lock keeps one of them active.
  if (cfg_.store.kind == "postgres")
    relay_lock_ = persistence::make_postgres_relay_lock({cfg_.store.url, {}, 1}, ro.name);
  relay_ = std::make_shared<net::relay>(*store_, *store_, cfg_.cluster.topo ? nullptr : &hub_,
                                        std::move(ro), relay_lock_.get());
  return node_->supervise(relay_);
}

sreh::error node_parts::start_notifier() {
  const auto& ns = cfg_.section<notify::settings>();
  if (!ns.enabled())
    return {};
  actors::notifier_options o;
  o.settings = ns;
  o.link_base = ns.link_base.empty() ? "http://" + cfg_.listen : ns.link_base;
  o.risk_of = [tools = tools_](std::string_view tool) -> std::string {
    auto t = tools->find(tool);
    return t ? actors::to_string(t->risk()) : "";
  };
  if (cfg_.store.kind == "postgres") {
    notify_lock_ = persistence::make_postgres_relay_lock({cfg_.store.url, {}, 1}, "notify");
    o.lead = [lock = notify_lock_.get()] {
      auto held = lock->acquire();
      return held && *held;
    };
  }
  actors::notifier_stores stores{*store_, *store_, *store_, *store_, *store_};
  notifier_ = std::make_shared<actors::notifier>(stores, make_notify_transport(), &hub_,
                                                 std::move(o), clock_);
  return node_->supervise(notifier_);
}

sreh::error node_parts::record_config(const policy::policy_set& policy) {
  // The audit trail records which configuration and policy every start ran with.
  std::string text;
  if (!cfg_.source.empty()) {
    std::ifstream in{cfg_.source};
    text.assign(std::istreambuf_iterator<char>{in}, {});
  }
  event e;
  e.id = ids_.next("evt");
  e.kind = "node.config";
  e.at = clock_.now_us();
  e.data = json::object("node", cfg_.node_id, "config_file", cfg_.source, "config_fnv1a",
                        fnv1a64_hex(text), "listen", cfg_.listen, "store", cfg_.store.kind,
                        "policy_mode", policy::to_string(policy.default_mode), "policy_version",
                        policy.version, "rules", policy.rules.size());
  persistence::write_batch b;
  b.events.push_back(std::move(e));
  std::promise<sreh::error> done;
  writer_->submit(std::move(b),
                  [&done](persistence::commit_result r) { done.set_value(std::move(r.err)); });
  return done.get_future().get();
}

node_parts::~node_parts() {
  if (node_)
    node_->stop(); // the services first (the HTTP front, the relay), then the actors
  if (writer_)
    writer_->stop();
  if (relay_)
    relay_->stop(); // stopped with the node already, unless its first start failed
  if (feed_)
    feed_->stop();
}

} // namespace sreh::net
