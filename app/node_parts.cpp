#include "node_parts.hpp"

#include <filesystem>

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
  if (cfg.store.kind != "sqlite")
    return sreh::error{errc::invalid_argument,
                       "store.kind '" + cfg.store.kind + "' is not available in this build"};
  auto store = persistence::open_sqlite_store({cfg.store.path, cfg.store.synchronous});
  if (!store)
    return store.error();
  p->store_ = std::move(*store);
  p->writer_ = std::make_unique<persistence::group_writer>(*p->store_);
  auto* hub = &p->hub_;
  p->writer_->set_events_listener([hub](const std::vector<event>& evs) { hub->publish(evs); });
  p->writer_->start();
  p->tools_ = std::move(tools);
  p->node_ = std::make_unique<actors::node>(cfg, *p->store_, *p->writer_, *p->tools_,
                                            std::move(policy), std::move(provider), p->clock_,
                                            p->ids_);
  if (auto err = p->node_->start())
    return err;
  return p;
}

node_parts::~node_parts() {
  if (node_)
    node_->stop();
  if (writer_)
    writer_->stop();
}

} // namespace sreh::app
