// The services' supervisor: one detached child actor per service incarnation, restarts with
// backoff within a budget, an ordered stop.
#include "actors/runtime/service_supervisor.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace sreh::actors {

namespace {

using svc_started_atom = caf::atom_constant<caf::atom("svcstarted")>;
using svc_failed_atom = caf::atom_constant<caf::atom("svcfailed")>;
using svc_respawn_atom = caf::atom_constant<caf::atom("svcrespawn")>;
using svc_stop_atom = caf::atom_constant<caf::atom("svcstop")>;

using impl_actor = service_supervisor_actor::extend<caf::reacts_to<svc_started_atom, std::string>,
                                                    caf::reacts_to<svc_respawn_atom, std::string>>;

constexpr const char* parent_name = "services";

/// One service and its current incarnation.
struct child {
  service_spec spec; // `started` is null once the first start went through
  restart_budget budget;
  caf::actor incarnation;    // null while it waits for its restart
  bool ever_started = false; // its first start went through
  bool stop_sent = false;
};

struct supervisor_state {
  supervision_table* table = nullptr;
  std::shared_ptr<spdlog::logger> log;
  std::map<std::string, child> children;
  std::vector<std::string> order; // oldest first
  bool stopping = false;
  static inline const char* name = "sreh.services";
};

using self_ptr = impl_actor::stateful_pointer<supervisor_state>;

/// The text of an incarnation's exit reason (the service's own words when it gave any).
std::string reason_text(caf::actor_system& sys, const caf::error& reason) {
  const auto& ctx = reason.context();
  if (ctx.match_elements<std::string>())
    return ctx.get_as<std::string>(0);
  return sys.render(reason);
}

/// One incarnation of a service, on a thread of its own: starts it, and stops it when it
/// reports a failure (then quits with the failure as its exit reason), when the supervisor stops
/// it (svc_stop_atom: not an exit message, which would unlink it from the supervisor, so that
/// its end would go unseen), or when the supervisor dies (the link's exit message).
caf::behavior service_child(caf::event_based_actor* self, service_ptr svc,
                            std::shared_ptr<std::promise<sreh::error>> first, impl_actor parent) {
  auto me = caf::actor_cast<caf::actor_addr>(self->address());
  // The service may call this from any of its threads until stop() returns.
  failure_handler report = [me](std::string why) {
    if (auto a = caf::actor_cast<caf::actor>(me))
      caf::anon_send(a, svc_failed_atom::value, std::move(why));
  };
  sreh::error err{errc::internal, "the service's start threw"};
  try {
    err = svc->start(std::move(report));
  } catch (const std::exception& e) {
    err.message += std::string{": "} + e.what();
  } catch (...) {
  }
  if (err) {
    // A first start that failed is answered here; one that went through is answered by the
    // supervisor, once its table shows the service running.
    if (first)
      first->set_value(err);
    self->quit(caf::make_error(caf::sec::runtime_error, "cannot start: " + err.message));
    return {};
  }
  self->send(parent, svc_started_atom::value, svc->name());
  self->set_exit_handler([self, svc](caf::exit_msg& msg) {
    svc->stop();
    self->quit(msg.reason);
  });
  return {
    [self, svc](svc_failed_atom, std::string& why) {
      svc->stop();
      self->quit(caf::make_error(caf::sec::runtime_error, std::move(why)));
    },
    [self, svc](svc_stop_atom) {
      svc->stop();
      self->quit(caf::exit_reason::user_shutdown);
    },
  };
}

void spawn_incarnation(self_ptr self, const std::string& name) {
  auto& c = self->state.children.at(name);
  c.stop_sent = false;
  c.incarnation = self->spawn<caf::detached + caf::linked>(
    service_child, c.spec.svc, c.spec.started, caf::actor_cast<impl_actor>(self));
}

/// Stops the newest child that still has an incarnation; quits when none has.
void stop_next(self_ptr self) {
  auto& st = self->state;
  for (auto it = st.order.rbegin(); it != st.order.rend(); ++it) {
    auto& c = st.children.at(*it);
    if (!c.incarnation)
      continue;
    if (!c.stop_sent) {
      c.stop_sent = true;
      caf::anon_send(c.incarnation, svc_stop_atom::value);
    }
    return; // its exit message brings us back here
  }
  st.table->stop_all();
  self->quit(caf::exit_reason::user_shutdown);
}

/// An incarnation died: restart it after its backoff, or give it up.
void on_death(self_ptr self, const std::string& name, child& c, const caf::error& reason) {
  auto& st = self->state;
  const auto why = reason == caf::exit_reason::normal ? std::string{"stopped on its own"}
                                                      : reason_text(self->system(), reason);
  const auto wait = child_died(c.budget, name, why, st.table, *st.log,
                               "the node stays not ready until it is started again");
  if (!wait)
    return;
  self->delayed_send(self, *wait, svc_respawn_atom::value, name);
}

void on_exit(self_ptr self, caf::exit_msg& msg) {
  auto& st = self->state;
  auto it = std::find_if(st.children.begin(), st.children.end(), [&](const auto& kv) {
    return kv.second.incarnation && kv.second.incarnation.address() == msg.source;
  });
  if (it == st.children.end()) { // not a child: we are asked to stop
    st.stopping = true;
    return stop_next(self);
  }
  auto& [name, c] = *it;
  c.incarnation = nullptr;
  if (st.stopping)
    return stop_next(self);
  if (!c.ever_started) { // the first start failed: supervise() returned its error
    st.table->remove(name);
    std::erase(st.order, name);
    st.children.erase(it);
    return;
  }
  on_death(self, name, c, msg.reason);
}

impl_actor::behavior_type supervisor_behavior(self_ptr self, supervision_table* table) {
  self->state.table = table;
  self->state.log = logger("node");
  self->set_exit_handler([self](caf::exit_msg& msg) { on_exit(self, msg); });
  return {
    [self](supervise_atom, service_spec& spec) {
      auto& st = self->state;
      auto name = spec.svc->name();
      if (st.stopping || st.children.count(name) != 0) {
        spec.started->set_value(
          {errc::conflict, st.stopping ? "the node is stopping"
                                       : "a service named '" + name + "' is supervised already"});
        return;
      }
      st.table->add(name, parent_name);
      restart_budget budget{spec.policy};
      st.children.emplace(name, child{std::move(spec), budget, {}, false, false});
      st.order.push_back(name);
      spawn_incarnation(self, name);
    },
    [self](svc_started_atom, const std::string& name) {
      auto& st = self->state;
      auto it = st.children.find(name);
      if (it == st.children.end())
        return;
      auto& c = it->second;
      if (c.ever_started)
        st.log->info("{} restarted", name);
      c.ever_started = true;
      st.table->set_state(name, child_state::running);
      if (auto first = std::exchange(c.spec.started, nullptr))
        first->set_value({});
    },
    [self](svc_respawn_atom, const std::string& name) {
      auto& st = self->state;
      auto it = st.children.find(name);
      if (!st.stopping && it != st.children.end() && !it->second.incarnation)
        spawn_incarnation(self, name);
    },
  };
}

} // namespace

service_supervisor_actor spawn_service_supervisor(caf::actor_system& sys,
                                                  supervision_table& table) {
  return caf::actor_cast<service_supervisor_actor>(sys.spawn(supervisor_behavior, &table));
}

sreh::error supervise(const service_supervisor_actor& sup, service_ptr svc, restart_policy policy) {
  if (!svc)
    return {errc::invalid_argument, "supervise: no service"};
  auto started = std::make_shared<std::promise<sreh::error>>();
  auto done = started->get_future();
  caf::anon_send(sup, supervise_atom::value,
                 service_spec{std::move(svc), policy, std::move(started)});
  try {
    return done.get();
  } catch (const std::future_error&) { // the message was dropped: no supervisor
    return {errc::unavailable, "the node's service supervisor is not running"};
  }
}

void stop_services(caf::actor_system& sys, const service_supervisor_actor& sup) {
  caf::scoped_actor self{sys};
  self->send_exit(sup, caf::exit_reason::user_shutdown);
  self->wait_for(sup);
}

} // namespace sreh::actors
