#include "actors/node/node.hpp"

#include <fmt/format.h>

#include <functional>
#include <string>

#include "actors/cluster/cluster.hpp"
#include "actors/kernel/kernel.hpp"
#include "actors/kernel/kernel_facade.hpp"
#include "actors/kernel/messages.hpp"
#include "actors/runtime/runtime.hpp"
#include "actors/runtime/service_supervisor.hpp"
#include "actors/runtime/thread_marks.hpp"
#include "actors/works/orchestrator.hpp"
#include "actors/works/works_facade.hpp"

namespace sreh::actors {

struct node::impl {
  caf::actor_system_config caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<blocking_pool> pool;
  std::unique_ptr<blocking_pool> store_pool;
  runtime_ptr rt;
  kernel_actor sup;
  supervision_table tree;
  service_supervisor_actor services;
  std::unique_ptr<cluster_member> cluster;
  metrics::registry* metrics = nullptr;
  std::unique_ptr<kernel_facade> facade;
  event_hub* hub = nullptr;
  std::shared_ptr<world_view> world;
  caf::actor works_sup;
  std::unique_ptr<works_facade> works;
  const config::node_config& cfg;
  persistence::store& store;
  persistence::commit_queue& writer;
  const tool_registry& tools;
  policy::policy_set policy;
  model_provider_ptr provider;
  const sreh::clock& clock;
  id_generator& ids;
  memory_service memory;
  postmortem_service postmortems;
  std::shared_ptr<const version_registry> versions;
  replay_hooks replay;
  std::function<void(std::string)> fatal;
  caf::actor kernel_watch; // watch_kernel's

  impl(const config::node_config& c, persistence::store& s, persistence::commit_queue& w,
       const tool_registry& t, policy::policy_set pol, model_provider_ptr p, const sreh::clock& clk,
       id_generator& i)
    : cfg(c), store(s), writer(w), tools(t), policy(std::move(pol)), provider(std::move(p)),
      clock(clk), ids(i), memory(s, w, clk, i), postmortems(s, memory, t.mutating()) {}
};

node::node(const config::node_config& cfg, persistence::store& store,
           persistence::commit_queue& writer, const tool_registry& tools, policy::policy_set policy,
           model_provider_ptr provider, const sreh::clock& clock, id_generator& ids)
  : impl_(std::make_unique<impl>(cfg, store, writer, tools, std::move(policy), std::move(provider),
                                 clock, ids)) {}

node::~node() {
  stop();
}

void node::use_metrics(metrics::registry& r) {
  impl_->metrics = &r;
}

void node::use_versions(std::shared_ptr<const version_registry> versions) {
  impl_->versions = std::move(versions);
}

void node::use_replay(replay_hooks hooks) {
  impl_->replay = std::move(hooks);
}

void node::on_fatal(std::function<void(std::string why)> f) {
  impl_->fatal = std::move(f);
}

void node::use_hub(event_hub& hub, std::shared_ptr<world_view> world) {
  impl_->hub = &hub;
  impl_->world = std::move(world);
}

namespace {

/// What every actor of the node shares (actors/runtime/runtime.hpp), over the node's pools.
runtime_ptr make_runtime(node::impl& d) {
  auto rt = std::shared_ptr<runtime>(new runtime{d.cfg,
                                                 d.store,
                                                 d.writer,
                                                 d.tools,
                                                 d.provider,
                                                 d.clock,
                                                 d.ids,
                                                 *d.pool,
                                                 *d.store_pool,
                                                 d.policy,
                                                 logger("kernel"),
                                                 {},
                                                 {},
                                                 {}});
  rt->children = &d.tree;
  if (d.cfg.memory.postmortems)
    rt->run_ended = [&d](const std::string& id, const std::string& kind) {
      if (kind != "goal")
        return; // a flow's runs are its steps: the flow is the runbook, not the incident
      d.store_pool->post([&d, id] {
        auto e = d.postmortems.remember(id);
        if (!e)
          logger("memory")->warn("run {}: its postmortem was not written into memory: {}", id,
                                 e.error().message);
      });
    };
  rt->world = d.world;
  rt->hub = d.hub;
  rt->versions = d.versions;
  rt->replay = d.replay;
  if (d.metrics != nullptr) {
    rt->metrics.step_seconds = &d.metrics->histogram(
      "sreh_step_duration_seconds", "Time from a step's intent to its outcome, by tool.", {"tool"});
    rt->metrics.runs_finished = &d.metrics->counter(
      "sreh_runs_finished_total", "Runs that ended on this node, by final state.", {"state"});
  }
  return rt;
}

/// Watches the kernel's supervisor: when it quits with an error (the kernel died more often than
/// its budget allows), the node cannot run goals any more, and `fatal` says so.
void watch_kernel(node::impl& d) {
  if (!d.fatal)
    return;
  // Held by the node: an actor nothing refers to is destroyed, its monitor with it.
  d.kernel_watch =
    d.sys->spawn([sup = d.sup, fatal = d.fatal](caf::event_based_actor* self) -> caf::behavior {
      self->monitor(sup);
      self->set_down_handler([self, fatal](caf::down_msg& msg) {
        if (msg.reason && msg.reason != caf::exit_reason::user_shutdown)
          fatal(fmt::format("the kernel died more often than its restart budget allows (last: "
                            "{}); this node can run no goals",
                            self->system().render(msg.reason)));
        self->quit();
      });
      return {[](const std::string&) {}}; // nothing to handle: it lives for the down message
    });
}

/// The Works control plane: the orchestrator and, when the tools came with world sources, the
/// world sync, sharing the templates of works.templates.
void start_works(node::impl& d) {
  auto env = std::make_shared<works_env>();
  env->rt = d.rt;
  env->kernel = d.sup;
  env->log = logger("works");
  if (d.world)
    env->world = d.world;
  env->check_every_us = d.cfg.works.check_every_ms * 1000;
  env->passivate_after_us = d.cfg.works.passivate_after_ms * 1000;
  for (const auto& t : d.cfg.works.loaded)
    env->templates.emplace(t.name, t);
  if (d.cfg.memory.postmortems)
    env->work_closed = [&d](const std::string& id) {
      d.store_pool->post([&d, id] {
        auto e = d.postmortems.remember_work(id);
        if (!e)
          logger("memory")->warn("work {}: its postmortem was not written into memory: {}", id,
                                 e.error().message);
      });
    };
  if (auto* c = d.cluster.get())
    env->routing =
      work_routing{[c](const std::string& n) { return c->alive(n); },
                   [c](const std::string& n) { return caf::actor_cast<caf::actor>(c->peer(n)); },
                   [c] { return c->claim_orphan_works(); }};
  d.works = std::make_unique<works_facade>(*d.sys);
  auto* facade = d.works.get();
  d.works_sup = spawn_works_supervisor(*d.sys, env, *d.hub, d.tree,
                                       [facade](orchestrator_actor a) { facade->set(a); });
  if (d.cluster) {
    d.cluster->serve_works([facade] { return caf::actor_cast<caf::actor>(facade->current()); });
    d.cluster->adopt_works([facade](const std::string& id) {
      if (auto orch = facade->current())
        caf::anon_send(orch, adopt_atom::value, id);
    });
  }
}

} // namespace

sreh::error node::start() {
  auto& d = *impl_;
  d.caf_cfg.set("scheduler.max-threads", static_cast<std::size_t>(d.cfg.limits.scheduler_threads));
  d.caf_cfg.set("scheduler.policy", d.cfg.limits.scheduler_policy == "stealing"
                                      ? caf::atom("stealing")
                                      : caf::atom("sharing"));
  d.caf_cfg.set("logger.verbosity", caf::atom("quiet"));
  mark_scheduler_threads(d.caf_cfg); // a store call from an actor's handler is caught
  const bool clustered = d.cfg.cluster.topo.has_value();
  if (clustered && d.store.cluster() == nullptr)
    return {errc::invalid_argument,
            "cluster: the store cannot be shared (use store.kind: postgres)"};
  if (clustered)
    add_cluster_message_types(d.caf_cfg, *d.cfg.cluster.topo, d.cfg.node_id);
  d.sys = std::make_unique<caf::actor_system>(d.caf_cfg);
  d.pool = std::make_unique<blocking_pool>(static_cast<std::size_t>(d.cfg.limits.tool_threads));
  d.store_pool =
    std::make_unique<blocking_pool>(static_cast<std::size_t>(d.cfg.limits.store_threads));
  if (!d.world)
    d.world = std::make_shared<world_view>();
  d.rt = make_runtime(d);
  d.tree.add("kernel", "node");
  if (clustered) {
    d.cluster =
      std::make_unique<cluster_member>(*d.sys, *d.cfg.cluster.topo, d.rt, *d.store.cluster());
    if (auto err = d.cluster->enter())
      return err;
  }
  d.sup = spawn_supervisor(*d.sys, d.rt);
  watch_kernel(d);
  if (clustered)
    if (auto err = d.cluster->open(d.sup))
      return err;
  d.facade = make_kernel_facade(*d.sys, d.sup, d.rt, d.cluster.get());
  d.services = spawn_service_supervisor(*d.sys, d.tree);
  if (d.hub != nullptr)
    start_works(d);
  return {};
}

void node::stop() {
  auto& d = *impl_;
  if (!d.sys)
    return;
  if (d.services) { // the front stops taking requests before the kernel goes
    stop_services(*d.sys, d.services);
    d.services = nullptr;
  }
  if (d.facade)
    d.facade->reset();
  if (d.cluster)
    d.cluster->adopt_works(nullptr);
  if (d.works_sup)
    caf::anon_send_exit(d.works_sup, caf::exit_reason::user_shutdown);
  d.works_sup = nullptr;
  if (d.cluster)
    d.cluster->leave();
  d.rt->shutdown.request_stop(); // in-flight tools return now; their steps resume after restart
  caf::anon_send_exit(d.sup, caf::exit_reason::user_shutdown);
  d.sup = nullptr;
  d.kernel_watch = nullptr; // it quits on the supervisor's down message
  d.sys->await_all_actors_done();
  d.pool->stop();
  d.store_pool->stop(); // runs the reads still queued; their replies find no actor
  d.sys.reset();
  d.tree.stop_all();
}

sreh::error node::supervise(service_ptr svc, restart_policy policy) {
  if (!impl_->services)
    return {errc::unavailable, "the node is not running"};
  return actors::supervise(impl_->services, std::move(svc), policy);
}

const supervision_table& node::tree() const {
  return impl_->tree;
}

kernel_api& node::kernel() {
  return *impl_->facade;
}

works_api* node::works() {
  return impl_->works.get();
}

memory_service& node::memory() {
  return impl_->memory;
}

postmortem_service& node::postmortems() {
  return impl_->postmortems;
}

} // namespace sreh::actors
