#include "actors/runtime/supervisor.hpp"

#include <algorithm>

#include "core/base/logger.hpp"

namespace sreh::actors {

namespace {

struct managed_child {
  supervised_child spec;
  caf::actor actor;
  restart_budget budget;
};

struct one_for_one_state {
  supervision_table* tree = nullptr;
  std::shared_ptr<spdlog::logger> log;
  std::vector<managed_child> children;
  static inline const char* name = "sreh.supervisor";
};

using supervisor_self = caf::stateful_actor<one_for_one_state>*;

using restart_child_atom = caf::atom_constant<caf::atom("restartch")>;

void start_child(supervisor_self self, managed_child& c) {
  c.actor = c.spec.spawn(self);
  self->state.tree->set_state(c.spec.name, child_state::running);
}

void on_child_exit(supervisor_self self, const caf::exit_msg& msg) {
  auto& st = self->state;
  auto c = std::find_if(st.children.begin(), st.children.end(),
                        [&](const managed_child& x) { return x.actor.address() == msg.source; });
  if (c == st.children.end()) {
    self->quit(msg.reason); // the node stops: the children (linked) go with us
    return;
  }
  c->actor = nullptr;
  c->spec.spawn(nullptr);
  const auto why = self->system().render(msg.reason);
  if (auto wait = child_died(c->budget, c->spec.name, why, st.tree, *st.log))
    self->delayed_send(self, *wait, restart_child_atom::value, c->spec.name);
}

caf::behavior one_for_one(supervisor_self self, supervision_table* tree,
                          std::shared_ptr<spdlog::logger> log,
                          std::vector<supervised_child> children) {
  auto& st = self->state;
  st.tree = tree;
  st.log = std::move(log);
  for (auto& spec : children) {
    restart_budget budget{spec.policy};
    st.children.push_back({std::move(spec), {}, budget});
  }
  self->set_exit_handler([self](caf::exit_msg& msg) { on_child_exit(self, msg); });
  for (auto& c : st.children)
    start_child(self, c);
  return {[self](restart_child_atom, const std::string& name) {
    for (auto& c : self->state.children)
      if (c.spec.name == name && !c.actor)
        start_child(self, c);
  }};
}

} // namespace

caf::error exit_with_message(caf::scheduled_actor*, std::exception_ptr& x) {
  try {
    std::rethrow_exception(x);
  } catch (const std::exception& e) {
    return caf::make_error(caf::sec::runtime_error, std::string{e.what()});
  } catch (...) {
    return caf::make_error(caf::sec::runtime_error, std::string{"unknown exception"});
  }
}

caf::actor spawn_one_for_one(caf::actor_system& sys, supervision_table& tree, std::string parent,
                             std::shared_ptr<spdlog::logger> log,
                             std::vector<supervised_child> children) {
  for (const auto& c : children)
    tree.add(c.name, parent);
  return sys.spawn(one_for_one, &tree, std::move(log), std::move(children));
}

} // namespace sreh::actors
