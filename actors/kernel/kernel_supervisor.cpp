// The kernel's supervisor: the node's kernel actor facade (actors speak to it as to the kernel),
// which restarts the kernel within its budget and answers "restarting" meanwhile.

#include "actors/kernel/kernel.hpp"

namespace sreh::actors {

namespace {

struct supervisor_state {
  runtime_ptr rt;
  kernel_impl_actor kernel;
  restart_budget budget;
  static inline const char* name = "sreh.node";
};

using supervisor_actor = kernel_actor::extend<caf::reacts_to<respawn_atom>>;
using self_ptr = supervisor_actor::stateful_pointer<supervisor_state>;

void start_kernel(self_ptr self) {
  self->state.kernel = spawn_kernel(self, self->state.rt);
  if (auto* t = self->state.rt->children)
    t->set_state("kernel", child_state::running);
}

void on_child_exit(self_ptr self, caf::exit_msg& msg) {
  auto& st = self->state;
  if (msg.source != st.kernel.address()) {
    self->quit(msg.reason); // our own shutdown
    return;
  }
  st.kernel = nullptr;
  st.rt->ready = false;
  if (msg.reason == caf::exit_reason::normal || msg.reason == caf::exit_reason::user_shutdown)
    return;
  const auto wait =
    child_died(st.budget, "kernel", caf::to_string(msg.reason), st.rt->children, *st.rt->log);
  if (!wait) {
    self->quit(msg.reason);
    return;
  }
  self->delayed_send(self, *wait, respawn_atom::value);
}

kernel_reply not_ready() {
  return reply_error(errc::unavailable, "the kernel is restarting; retry shortly");
}

supervisor_actor::behavior_type supervisor_behavior(self_ptr self, runtime_ptr rt,
                                                    int max_restarts) {
  self->state.rt = std::move(rt);
  restart_policy policy;
  policy.max_restarts = max_restarts;
  self->state.budget = restart_budget{policy};
  self->set_exit_handler([=](caf::exit_msg& msg) { on_child_exit(self, msg); });
  start_kernel(self);
  return {
    [=](respawn_atom) {
      if (!self->state.kernel)
        start_kernel(self);
    },
    [=](submit_atom a, goal_request& req) -> caf::result<kernel_reply> {
      if (!self->state.kernel)
        return not_ready();
      return self->delegate(self->state.kernel, a, std::move(req));
    },
    [=](cancel_atom a, std::string& id, std::string& by) -> caf::result<kernel_reply> {
      if (!self->state.kernel)
        return not_ready();
      return self->delegate(self->state.kernel, a, std::move(id), std::move(by));
    },
    [=](decide_atom a, std::string& id, approval_vote& vote) -> caf::result<kernel_reply> {
      if (!self->state.kernel)
        return not_ready();
      return self->delegate(self->state.kernel, a, std::move(id), std::move(vote));
    },
    [=](fork_atom a, journal::fork_request& req) -> caf::result<kernel_reply> {
      if (!self->state.kernel)
        return not_ready();
      return self->delegate(self->state.kernel, a, std::move(req));
    },
    [=](say_atom a, conversation::message& m) -> caf::result<kernel_reply> {
      if (!self->state.kernel)
        return not_ready();
      return self->delegate(self->state.kernel, a, std::move(m));
    },
    [=](adopt_atom a, std::string& run_id) {
      // Without a kernel the run waits: the kernel's recovery at start finds it (it is ours).
      if (self->state.kernel)
        self->send(self->state.kernel, a, std::move(run_id));
    },
  };
}

} // namespace

kernel_actor spawn_supervisor(caf::actor_system& sys, runtime_ptr rt, int max_restarts) {
  return sys.spawn(supervisor_behavior, std::move(rt), max_restarts);
}

} // namespace sreh::actors
