#include "node_parts.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>

#include "sreh/core/json.hpp"
#include "sreh/persistence/postgres_store.hpp"
#include "sreh/persistence/sqlite_store.hpp"

namespace sreh::app {

expected<std::unique_ptr<node_parts>> node_parts::start(const config::node_config& cfg,
                                                        std::shared_ptr<actors::tool_registry> tools,
                                                        policy::policy_set policy,
                                                        actors::model_provider_ptr provider) {
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
  p->writer_->set_events_listener([hub](const std::vector<event>& evs) { hub->publish(evs); });
  p->writer_->start();
  if (auto err = p->record_config(policy))
    return err;
  if (!cfg.nats.url.empty()) {
    net::relay_options ro;
    ro.url = cfg.nats.url;
    ro.stream = cfg.nats.stream;
    ro.subject_prefix = cfg.nats.subject_prefix;
    p->relay_ = std::make_unique<net::relay>(*p->store_, hub, std::move(ro));
    if (auto err = p->relay_->start())
      return err;
  }
  p->tools_ = std::move(tools);
  p->node_ = std::make_unique<actors::node>(cfg, *p->store_, *p->writer_, *p->tools_,
                                            std::move(policy), std::move(provider), p->clock_,
                                            p->ids_);
  if (auto err = p->node_->start())
    return err;
  return p;
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
  e.data = fmt::format(R"({{"node":{},"config_file":{},"config_fnv1a":"{:016x}","listen":{},)"
                       R"("store":{},"policy_mode":{},"policy_version":{},"rules":{}}})",
                       json::quote(cfg_.node_id), json::quote(cfg_.source), h,
                       json::quote(cfg_.listen), json::quote(cfg_.store.kind),
                       json::quote(policy::to_string(policy.default_mode)),
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
    node_->stop();
  if (writer_)
    writer_->stop();
  if (relay_)
    relay_->stop();
}

} // namespace sreh::app
