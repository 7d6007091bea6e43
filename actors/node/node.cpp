#include "actors/node/node.hpp"

#include <fmt/format.h>

#include "actors/cluster/cluster.hpp"
#include "actors/kernel/kernel.hpp"
#include "actors/kernel/messages.hpp"
#include "actors/node/runtime.hpp"
#include "actors/node/service_supervisor.hpp"
#include "actors/node/thread_marks.hpp"
#include "actors/works/orchestrator.hpp"
#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

using done_fn = std::function<void(const kernel_reply&)>;

/// Sends one request `xs...` to `target` (the supervisor, the orchestrator, or a peer's actor)
/// from a non-actor thread and hands the reply (or the error, in the reply's `err`) to `done`
/// on an actor thread.
template <class Reply, class Handle, class... Ts>
void ask_for(caf::actor_system& sys, Handle target, std::function<void(const Reply&)> done,
             Ts... xs) {
  sys.spawn([target, done = std::move(done), xs...](caf::event_based_actor* self) {
    self->request(target, std::chrono::seconds(30), xs...)
      .then(
        [done](const Reply& rep) { done(rep); },
        [done, self](const caf::error& err) {
          Reply rep;
          rep.err = {errc::unavailable, fmt::format("no answer: {}", self->system().render(err))};
          done(rep);
        });
  });
}

template <class Handle, class... Ts>
void ask(caf::actor_system& sys, Handle target, done_fn done, Ts... xs) {
  ask_for<kernel_reply>(sys, std::move(target), std::move(done), std::move(xs)...);
}

template <class T>
using reply_fn = std::function<void(expected<T>)>;

/// `done` with the reply's error, or with `value(reply)`.
template <class T, class Value>
done_fn answer(reply_fn<T> done, Value value) {
  return [done = std::move(done), value = std::move(value)](const kernel_reply& rep) {
    if (rep.err)
      return done(rep.err);
    done(value(rep));
  };
}

class kernel_facade final : public kernel_api {
 public:
  kernel_facade(caf::actor_system& sys, kernel_actor sup, runtime_ptr rt, cluster_member* cluster)
    : sys_(sys), sup_(std::move(sup)), rt_(std::move(rt)), cluster_(cluster) {}

  void submit(goal_request req, std::function<void(expected<submit_reply>)> done) override {
    auto reply = answer<submit_reply>(std::move(done), [](const kernel_reply& rep) {
      return submit_reply{rep.run_id, rep.created};
    });
    if (cluster_ == nullptr)
      return local(std::move(reply), submit_atom::value, std::move(req));
    const auto target = cluster_->place();
    if (target.empty())
      return reply(
        reply_error(errc::unavailable, "no live worker node to place the run on; retry shortly"));
    auto peer = target == cluster_->self_id() ? peer_actor{} : cluster_->peer(target);
    if (!peer)
      return local(std::move(reply), submit_atom::value, std::move(req));
    // Placed on a peer. Should it not answer, the run is created here instead: the same
    // idempotency key then finds the peer's run if it did create one (a request without a key
    // gets one for this purpose, so a peer dying mid-request never doubles a run).
    if (req.idempotency_key.empty())
      req.idempotency_key = rt_->ids.next("placement");
    auto retry_here = [this, req, reply, target](const kernel_reply& rep) mutable {
      if (rep.err.code != errc::unavailable || !cluster_->self_is_worker())
        return reply(rep);
      rt_->log->warn("placing a run on {} failed ({}); running it here", target, rep.err.message);
      local(std::move(reply), submit_atom::value, std::move(req));
    };
    ask(sys_, peer, std::move(retry_here), submit_atom::value, std::move(req));
  }

  void cancel(std::string run_id, std::string by,
              std::function<void(expected<run_state>)> done) override {
    auto reply =
      answer<run_state>(std::move(done), [](const kernel_reply& rep) { return rep.state; });
    auto owner = owner_of_run(run_id);
    route(owner, std::move(reply), cancel_atom::value, std::move(run_id), std::move(by));
  }

  void decide(std::string approval_id, approval_vote vote,
              std::function<void(expected<approval>)> done) override {
    auto reply =
      answer<approval>(std::move(done), [](const kernel_reply& rep) { return rep.decided; });
    std::string owner;
    if (cluster_ != nullptr)
      if (auto a = rt_->store.get_approval(approval_id); a && a->has_value())
        owner = owner_of_run((*a)->run_id);
    route(owner, std::move(reply), decide_atom::value, std::move(approval_id), std::move(vote));
  }

  cluster_view cluster() const override {
    if (cluster_ != nullptr)
      return cluster_->view();
    cluster_view v;
    v.self_id = rt_->cfg.node_id;
    cluster_node_info self;
    self.id = rt_->cfg.node_id;
    self.http = rt_->cfg.listen;
    self.roles = {"api", "worker", "relay"};
    self.self = true;
    self.state = "alive";
    self.connected = true;
    self.heartbeat_age_ms = 0;
    self.active_runs = rt_->counters.active.load();
    self.parked_runs = rt_->counters.parked.load();
    v.nodes.push_back(std::move(self));
    return v;
  }

  kernel_stats stats() const override {
    auto& c = rt_->counters;
    return {c.active.load(), c.started.load(), c.finished.load(),         c.recovered.load(),
            c.steps.load(),  c.parked.load(),  c.pending_approvals.load()};
  }

  bool ready() const override { return rt_->ready.load(); }

  void reset() { sup_ = nullptr; }

 private:
  template <class... Ts>
  void local(done_fn reply, Ts... xs) {
    ask(sys_, sup_, std::move(reply), std::move(xs)...);
  }

  /// The node that owns the run in the store ("" when standalone, unknown or not found: the
  /// local kernel then answers, with not_found where that applies).
  std::string owner_of_run(const std::string& run_id) const {
    if (cluster_ == nullptr)
      return {};
    auto r = rt_->store.get_run(run_id);
    return r && r->has_value() ? (*r)->node_id : std::string{};
  }

  /// Sends a request about a run to the kernel of the node that owns it.
  template <class... Ts>
  void route(const std::string& owner, done_fn reply, Ts... xs) {
    if (owner.empty() || cluster_ == nullptr || owner == cluster_->self_id())
      return local(std::move(reply), std::move(xs)...);
    if (auto peer = cluster_->peer(owner))
      return ask(sys_, peer, std::move(reply), std::move(xs)...);
    reply(reply_error(errc::unavailable,
                      fmt::format("the run belongs to node '{}', which this node cannot reach{}; "
                                  "retry shortly",
                                  owner,
                                  cluster_->alive(owner)
                                    ? ""
                                    : " (its lease is expiring: a survivor takes its "
                                      "runs over)")));
  }

  caf::actor_system& sys_;
  kernel_actor sup_;
  runtime_ptr rt_;
  cluster_member* cluster_;
};

/// The Works control plane's facade: requests to the current orchestrator incarnation.
class works_facade final : public works_api {
 public:
  explicit works_facade(caf::actor_system& sys) : sys_(sys) {}

  void create(new_work req, std::function<void(work_reply)> done) override {
    auto orch = current();
    if (!orch)
      return done(restarting());
    ask_for<work_reply>(
      sys_, orch, [done = std::move(done)](const work_reply& r) { done(r); }, create_atom::value,
      std::move(req));
  }
  void command(std::string id, works::work_command c, std::string by, std::string text,
               std::function<void(work_reply)> done) override {
    auto orch = current();
    if (!orch)
      return done(restarting());
    ask_for<work_reply>(
      sys_, orch, [done = std::move(done)](const work_reply& r) { done(r); }, command_atom::value,
      std::move(id), static_cast<std::int32_t>(c), std::move(by), std::move(text));
  }
  void set(orchestrator_actor a) {
    std::lock_guard lk{mtx_};
    orch_ = std::move(a);
  }
  [[nodiscard]] orchestrator_actor current() const {
    std::lock_guard lk{mtx_};
    return orch_;
  }

 private:
  static work_reply restarting() {
    work_reply r;
    r.err = {errc::unavailable, "the orchestrator is restarting; retry shortly"};
    return r;
  }
  caf::actor_system& sys_;
  mutable std::mutex mtx_;
  orchestrator_actor orch_;
};

} // namespace

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

  impl(const config::node_config& c, persistence::store& s, persistence::commit_queue& w,
       const tool_registry& t, policy::policy_set pol, model_provider_ptr p, const sreh::clock& clk,
       id_generator& i)
    : cfg(c), store(s), writer(w), tools(t), policy(std::move(pol)), provider(std::move(p)),
      clock(clk), ids(i) {}
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

void node::use_hub(event_hub& hub, std::shared_ptr<world_view> world) {
  impl_->hub = &hub;
  impl_->world = std::move(world);
}

sreh::error node::start() {
  auto& d = *impl_;
  d.caf_cfg.set("scheduler.max-threads", static_cast<std::size_t>(d.cfg.limits.scheduler_threads));
  d.caf_cfg.set("scheduler.policy", d.cfg.limits.scheduler_policy == "stealing"
                                      ? caf::atom("stealing")
                                      : caf::atom("sharing"));
  d.caf_cfg.set("logger.verbosity", caf::atom("quiet"));
  mark_scheduler_threads(d.caf_cfg); // a store call from an actor's handler is caught
  const auto* cs = d.store.cluster();
  const bool clustered = d.cfg.cluster.topo.has_value();
  if (clustered && cs == nullptr)
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
  d.rt = std::shared_ptr<runtime>(new runtime{d.cfg,
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
  d.rt->children = &d.tree;
  d.rt->world = d.world;
  d.rt->hub = d.hub;
  if (d.metrics != nullptr) {
    d.rt->metrics.step_seconds = &d.metrics->histogram(
      "sreh_step_duration_seconds", "Time from a step's intent to its outcome, by tool.", {"tool"});
    d.rt->metrics.runs_finished = &d.metrics->counter(
      "sreh_runs_finished_total", "Runs that ended on this node, by final state.", {"state"});
  }
  d.tree.add("kernel", "node");
  if (clustered) {
    d.cluster =
      std::make_unique<cluster_member>(*d.sys, *d.cfg.cluster.topo, d.rt, *d.store.cluster());
    if (auto err = d.cluster->enter())
      return err;
  }
  d.sup = spawn_supervisor(*d.sys, d.rt);
  if (clustered)
    if (auto err = d.cluster->open(d.sup))
      return err;
  d.facade = std::make_unique<kernel_facade>(*d.sys, d.sup, d.rt, d.cluster.get());
  d.services = spawn_service_supervisor(*d.sys, d.tree);
  if (d.hub != nullptr) {
    // The Works control plane: the orchestrator and, when the tools came with world sources,
    // the world sync, sharing the templates of works.templates.
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
    d.works = std::make_unique<works_facade>(*d.sys);
    auto* facade = d.works.get();
    d.works_sup = spawn_works_supervisor(*d.sys, env, *d.hub, d.tree,
                                         [facade](orchestrator_actor a) { facade->set(a); });
    if (d.cluster)
      d.cluster->adopt_works([facade](const std::string& id) {
        if (auto orch = facade->current())
          caf::anon_send(orch, adopt_atom::value, id);
      });
  }
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

} // namespace sreh::actors
