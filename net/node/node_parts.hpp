#pragma once

#include <functional>
#include <memory>
#include <string>

#include "actors/gateway/model_provider.hpp"
#include "actors/hub/event_hub.hpp"
#include "actors/node/node.hpp"
#include "actors/notify/notifier.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/base/id.hpp"
#include "core/base/metrics.hpp"
#include "core/policy/policy.hpp"
#include "net/nats/event_feed.hpp"
#include "net/nats/relay.hpp"
#include "persistence/postgres/postgres_store.hpp"
#include "persistence/store/group_writer.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {
class version_registry;
}

namespace sreh::net {

/// The store `s` names: SQLite (created when absent) or PostgreSQL.
[[nodiscard]] expected<persistence::store_ptr> open_store(const config::store_config& s);

/// A running node without its HTTP front: store → group-commit writer (feeding the event hub)
/// → actors, and the relay supervised by the node. `serve` adds the HTTP front (supervise);
/// `eval` and the benchmark drive `kernel()` directly. Destruction stops the supervised services
/// and the actors, then the writer, then closes the store.
class node_parts {
 public:
  /// Wraps each tool of a finished registry (replay's recorded tools: eval/replay.hpp).
  using tool_decorator = std::function<actors::tool_ptr(actors::tool_ptr)>;
  /// What a replay's scratch node answers from the recording (eval/replay.hpp): each tool
  /// wrapped by `tools`, and `hooks` (a flow's checks; timers at once). Empty: a real node.
  struct recorded_answers {
    tool_decorator tools;
    actors::replay_hooks hooks;
  };

  /// Opens the store, starts the writer and the actors. `tools` and `provider` are the node's
  /// (app/serve/plugins.hpp: make_tools_and_provider). With `recorded.tools`, the node's
  /// tools (`tools`, world.get and flow.run, less `tools.disable`) are what it makes of each.
  /// `on_fatal`: called once when the kernel's supervisor gave up (actors::node::on_fatal).
  [[nodiscard]] static expected<std::unique_ptr<node_parts>>
  start(const config::node_config& cfg, std::shared_ptr<actors::tool_registry> tools,
        policy::policy_set policy, actors::model_provider_ptr provider,
        const recorded_answers& recorded = {},
        std::shared_ptr<const actors::version_registry> versions = {},
        std::function<void(std::string why)> on_fatal = {});
  ~node_parts();

  actors::kernel_api& kernel() { return node_->kernel(); }
  /// The Works control plane.
  actors::works_api* works() { return node_->works(); }
  /// Long-term memory.
  actors::memory_service& memory() { return node_->memory(); }
  /// Postmortems of finished runs.
  actors::postmortem_service& postmortems() { return node_->postmortems(); }
  persistence::store& store() { return *store_; }
  persistence::group_writer& writer() { return *writer_; }
  actors::event_hub& hub() { return hub_; }
  const sreh::clock& clock() const { return clock_; }
  id_generator& ids() { return ids_; }
  const actors::tool_registry& tools() const { return *tools_; }
  /// The JetStream relay; null when no `nats.url` is configured.
  net::relay* relay() { return relay_.get(); }
  /// The notifier; null when the config has no `notify:` receivers and routes.
  actors::notifier* notifier() { return notifier_.get(); }
  /// Supervises `svc` with the node's other children (see actors::node::supervise).
  [[nodiscard]] sreh::error supervise(actors::service_ptr svc, actors::restart_policy policy = {}) {
    return node_->supervise(std::move(svc), policy);
  }
  /// The children of the node's supervisors: the kernel, the relay, the HTTP front.
  [[nodiscard]] const actors::supervision_table& tree() const { return node_->tree(); }
  /// The cluster's event feed (JetStream → hub); null on a single node.
  net::event_feed* feed() { return feed_.get(); }
  /// The node's metrics (GET /metrics): what the actors, the writer and the front keep, and
  /// what is read at scrape time (runs, commits, SSE clients, the relay).
  metrics::registry& metrics() { return metrics_; }

 private:
  node_parts(const config::node_config& cfg) : cfg_(cfg), ids_(clock_) {}
  /// The scrape-time readings of the kernel's counters, the writer, the hub and the relay.
  void add_collectors();
  /// Writes a node.config event: the config file's hash and the policy this start runs with.
  sreh::error record_config(const policy::policy_set& policy);
  /// The JetStream relay, when `nats.url` is set (and, in a cluster, this member has the relay
  /// role); with PostgreSQL behind the relay lock. Supervised by the node: after node_ started.
  sreh::error start_relay();
  /// The notifier, when `notify:` has receivers and routes; with PostgreSQL behind a lock of
  /// its own, so one node of a cluster notifies. Supervised by the node.
  sreh::error start_notifier();

  const config::node_config& cfg_;
  metrics::registry metrics_; // before everything that keeps a reference into it
  system_clock clock_;
  id_generator ids_;
  actors::event_hub hub_;
  persistence::store_ptr store_;
  std::unique_ptr<persistence::group_writer> writer_;
  std::shared_ptr<actors::tool_registry> tools_;
  std::unique_ptr<actors::node> node_;
  std::unique_ptr<persistence::relay_lock> relay_lock_;
  std::shared_ptr<net::relay> relay_;     // owned with the node's service supervisor
  std::unique_ptr<net::event_feed> feed_; // a cluster's events, into the hub
  std::unique_ptr<persistence::relay_lock> notify_lock_;
  std::shared_ptr<actors::notifier> notifier_; // owned with the node's service supervisor
};

} // namespace sreh::net
