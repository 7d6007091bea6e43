#include "net/node/node_parts.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>

#include "core/base/json.hpp"
#include "persistence/postgres/postgres_store.hpp"
#include "persistence/sqlite/sqlite_store.hpp"

namespace sreh::net {

expected<std::unique_ptr<node_parts>>
node_parts::start(const config::node_config& cfg, std::shared_ptr<actors::tool_registry> tools,
                  policy::policy_set policy, actors::model_provider_ptr provider) {
  std::unique_ptr<node_parts> p{new node_parts(cfg)};
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec)
    return sreh::error{errc::invalid_argument,
                       "cannot create data dir '" + cfg.data_dir + "': " + ec.message()};
  auto store = cfg.store.kind == "postgres"
                 ? persistence::open_postgres_store({cfg.store.url, {}, 4})
                 : persistence::open_sqlite_store({cfg.store.path, cfg.store.synchronous});
  if (!store)
    return store.error();
  p->store_ = std::move(*store);
  p->writer_ = std::make_unique<persistence::group_writer>(*p->store_);
  auto* hub = &p->hub_;
  // One node: the hub gets this node's commits straight from the writer. A cluster: it gets
  // every node's commits, in the cluster-wide seq order, from the JetStream feed.
  const bool clustered = cfg.cluster.topo.has_value();
  if (!clustered)
    p->writer_->set_events_listener([hub](const std::vector<event>& evs) { hub->publish(evs); });
  p->writer_->start();
  if (auto err = p->record_config(policy))
    return err;
  if (clustered) {
    auto last = p->store_->stats();
    if (!last)
      return last.error();
    net::event_feed_options fo;
    fo.url = cfg.nats.url;
    fo.stream = cfg.nats.stream;
    fo.subject_prefix = cfg.nats.subject_prefix;
    fo.client_name = "sreh-feed-" + cfg.node_id;
    p->feed_ = std::make_unique<net::event_feed>(
      *p->store_, std::move(fo), [hub](const std::vector<event>& evs) { hub->publish(evs); });
    if (auto err = p->feed_->start(last->last_event_seq))
      return err;
  }
  p->tools_ = std::move(tools);
  p->node_ =
    std::make_unique<actors::node>(cfg, *p->store_, *p->writer_, *p->tools_, std::move(policy),
                                   std::move(provider), p->clock_, p->ids_);
  if (auto err = p->node_->start())
    return err;
  if (auto err = p->start_relay())
    return err;
  return p;
}

sreh::error node_parts::start_relay() {
  if (cfg_.nats.url.empty())
    return {};
  if (cfg_.cluster.topo && !cfg_.cluster.topo->find(cfg_.node_id)->has_role("relay"))
    return {}; // this member never publishes the log
  net::relay_options ro;
  ro.url = cfg_.nats.url;
  ro.stream = cfg_.nats.stream;
  ro.subject_prefix = cfg_.nats.subject_prefix;
  // A shared store may have several nodes with a relay: the lock keeps one of them active.
  if (cfg_.store.kind == "postgres")
    relay_lock_ = persistence::make_postgres_relay_lock({cfg_.store.url, {}, 1}, ro.name);
  relay_ = std::make_shared<net::relay>(*store_, cfg_.cluster.topo ? nullptr : &hub_, std::move(ro),
                                        relay_lock_.get());
  return node_->supervise(relay_);
}

sreh::error node_parts::record_config(const policy::policy_set& policy) {
  // The audit trail records which configuration and policy every start ran with.
  std::string text;
  if (!cfg_.source.empty()) {
    std::ifstream in{cfg_.source};
    text.assign(std::istreambuf_iterator<char>{in}, {});
  }
  std::uint64_t h = 1469598103934665603ull; // FNV-1a of the config file's text
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  event e;
  e.id = ids_.next("evt");
  e.kind = "node.config";
  e.at = clock_.now_us();
  e.data =
    fmt::format(R"({{"node":{},"config_file":{},"config_fnv1a":"{:016x}","listen":{},)"
                R"("store":{},"policy_mode":{},"policy_version":{},"rules":{}}})",
                json::quote(cfg_.node_id), json::quote(cfg_.source), h, json::quote(cfg_.listen),
                json::quote(cfg_.store.kind), json::quote(policy::to_string(policy.default_mode)),
                json::quote(policy.version), policy.rules.size());
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
