#include "sreh/actors/node.hpp"

#include <fmt/format.h>

#include "kernel.hpp"
#include "messages.hpp"
#include "runtime.hpp"
#include "sreh/core/json.hpp"

namespace sreh::actors {

namespace {

using done_fn = std::function<void(const kernel_reply&)>;

/// Sends one request to the supervisor from a non-actor thread and hands the reply (or the
/// error) to `done` on an actor thread.
void ask(caf::actor_system& sys, const kernel_actor& target, caf::message msg, done_fn done) {
  sys.spawn([target, msg = std::move(msg), done = std::move(done)](caf::event_based_actor* self) {
    self->request(caf::actor_cast<caf::actor>(target), std::chrono::seconds(30), msg)
      .then([done](const kernel_reply& rep) { done(rep); },
            [done](const caf::error& err) {
              done(reply_error(errc::unavailable,
                               fmt::format("kernel did not answer: {}", caf::to_string(err))));
            });
  });
}

class kernel_facade final : public kernel_api {
 public:
  kernel_facade(caf::actor_system& sys, kernel_actor sup, runtime_ptr rt)
    : sys_(sys), sup_(std::move(sup)), rt_(std::move(rt)) {}

  void submit(goal_request req, std::function<void(expected<submit_reply>)> done) override {
    ask(sys_, sup_, caf::make_message(submit_atom::value, std::move(req)),
        [done](const kernel_reply& rep) {
          if (rep.code != 0)
            return done(sreh::error{static_cast<errc>(rep.code), rep.message});
          done(submit_reply{rep.run_id, rep.created});
        });
  }

  void cancel(std::string run_id, std::string by,
              std::function<void(expected<run_state>)> done) override {
    ask(sys_, sup_, caf::make_message(cancel_atom::value, std::move(run_id), std::move(by)),
        [done](const kernel_reply& rep) {
          if (rep.code != 0)
            return done(sreh::error{static_cast<errc>(rep.code), rep.message});
          done(static_cast<run_state>(rep.state));
        });
  }

  void decide(std::string approval_id, approval_vote vote,
              std::function<void(expected<approval>)> done) override {
    ask(sys_, sup_, caf::make_message(decide_atom::value, std::move(approval_id), std::move(vote)),
        [done](const kernel_reply& rep) {
          if (rep.code != 0)
            return done(sreh::error{static_cast<errc>(rep.code), rep.message});
          auto a = json::approval_from_json(rep.payload);
          if (!a)
            return done(sreh::error{errc::internal, "kernel reply: " + a.error().message});
          done(std::move(*a));
        });
  }

  kernel_stats stats() const override {
    auto& c = rt_->counters;
    return {c.active.load(),  c.started.load(), c.finished.load(),         c.recovered.load(),
            c.steps.load(),   c.parked.load(),  c.pending_approvals.load()};
  }

  bool ready() const override { return rt_->ready.load(); }

  void reset() { sup_ = nullptr; }

 private:
  caf::actor_system& sys_;
  kernel_actor sup_;
  runtime_ptr rt_;
};

} // namespace

struct node::impl {
  caf::actor_system_config caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<tool_pool> pool;
  runtime_ptr rt;
  kernel_actor sup;
  std::unique_ptr<kernel_facade> facade;
  const config::node_config& cfg;
  persistence::store& store;
  persistence::commit_queue& writer;
  const tool_registry& tools;
  policy::policy_set policy;
  model_provider_ptr provider;
  const sreh::clock& clock;
  id_generator& ids;

  impl(const config::node_config& c, persistence::store& s, persistence::commit_queue& w,
       const tool_registry& t, policy::policy_set pol, model_provider_ptr p,
       const sreh::clock& clk, id_generator& i)
    : cfg(c), store(s), writer(w), tools(t), policy(std::move(pol)), provider(std::move(p)),
      clock(clk), ids(i) {}
};

node::node(const config::node_config& cfg, persistence::store& store,
           persistence::commit_queue& writer, const tool_registry& tools,
           policy::policy_set policy, model_provider_ptr provider, const sreh::clock& clock,
           id_generator& ids)
  : impl_(std::make_unique<impl>(cfg, store, writer, tools, std::move(policy), std::move(provider),
                                 clock, ids)) {}

node::~node() {
  stop();
}

sreh::error node::start() {
  auto& d = *impl_;
  d.caf_cfg.set("scheduler.max-threads", static_cast<std::size_t>(d.cfg.limits.scheduler_threads));
  d.caf_cfg.set("logger.verbosity", caf::atom("quiet"));
  d.sys = std::make_unique<caf::actor_system>(d.caf_cfg);
  d.pool = std::make_unique<tool_pool>(static_cast<std::size_t>(d.cfg.limits.tool_threads));
  d.rt = std::shared_ptr<runtime>(new runtime{d.cfg, d.store, d.writer, d.tools, d.provider,
                                              d.clock, d.ids, *d.pool, d.policy, logger("kernel"), {}, {}, {}});
  d.sup = spawn_supervisor(*d.sys, d.rt);
  d.facade = std::make_unique<kernel_facade>(*d.sys, d.sup, d.rt);
  return {};
}

void node::stop() {
  auto& d = *impl_;
  if (!d.sys)
    return;
  if (d.facade)
    d.facade->reset();
  d.rt->shutdown.request_stop(); // in-flight tools return now; their steps resume after restart
  caf::anon_send_exit(d.sup, caf::exit_reason::user_shutdown);
  d.sup = nullptr;
  d.sys->await_all_actors_done();
  d.pool->stop();
  d.sys.reset();
}

kernel_api& node::kernel() {
  return *impl_->facade;
}

} // namespace sreh::actors
