#include "actors/kernel/kernel_facade.hpp"

#include "actors/runtime/ask.hpp"

namespace sreh::actors {

namespace {

using reply_done_fn = std::function<void(const kernel_reply&)>;

template <class Handle, class... Ts>
void ask(caf::actor_system& sys, Handle target, reply_done_fn done, Ts... xs) {
  ask_for<kernel_reply>(sys, std::move(target), std::move(done), std::move(xs)...);
}

template <class T>
using reply_fn = std::function<void(expected<T>)>;

/// `done` with the reply's error, or with `value(reply)`.
template <class T, class Value>
reply_done_fn answer(reply_fn<T> done, Value value) {
  return [done = std::move(done), value = std::move(value)](const kernel_reply& rep) {
    if (rep.err)
      return done(rep.err);
    done(value(rep));
  };
}

class kernel_facade_impl final : public kernel_facade {
 public:
  kernel_facade_impl(caf::actor_system& sys, kernel_actor sup, runtime_ptr rt, run_routing* cluster)
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
    auto peer = target == cluster_->self_id() ? run_requests_actor{} : cluster_->kernel_of(target);
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

  void fork(journal::fork_request req, std::function<void(expected<submit_reply>)> done) override {
    // The fork is a new run of this node: its steps are copied here, from the shared store.
    if (cluster_ != nullptr && !cluster_->self_is_worker())
      return done(sreh::error{errc::unavailable,
                              "this node runs no runs (it is not a worker): ask a worker node "
                              "to fork the run"});
    local(answer<submit_reply>(std::move(done),
                               [](const kernel_reply& rep) {
                                 return submit_reply{rep.run_id, true};
                               }),
          fork_atom::value, std::move(req));
  }

  void say(conversation::message m, std::function<void(expected<say_reply>)> done) override {
    auto reply = answer<say_reply>(std::move(done), [](const kernel_reply& rep) {
      say_reply out{rep.said, std::nullopt, rep.created};
      if (!rep.answered.id.empty())
        out.answer = rep.answered;
      return out;
    });
    auto owner = owner_of_run(m.run_id);
    route(owner, std::move(reply), say_atom::value, std::move(m));
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

  void reset() override { sup_ = nullptr; }

 private:
  template <class... Ts>
  void local(reply_done_fn reply, Ts... xs) {
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
  void route(const std::string& owner, reply_done_fn reply, Ts... xs) {
    if (owner.empty() || cluster_ == nullptr || owner == cluster_->self_id())
      return local(std::move(reply), std::move(xs)...);
    if (auto peer = cluster_->kernel_of(owner))
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
  run_routing* cluster_;
};

} // namespace

std::unique_ptr<kernel_facade> make_kernel_facade(caf::actor_system& sys, kernel_actor sup,
                                                  runtime_ptr rt, run_routing* cluster) {
  return std::make_unique<kernel_facade_impl>(sys, std::move(sup), std::move(rt), cluster);
}

} // namespace sreh::actors
