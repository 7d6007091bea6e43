// The world sync: keeps world state in step with the node's world sources. Every
// `works.world_sync_ms`, and at once after a mutating action succeeded, it observes every
// source (on the tool pool: a source may block), publishes the graph to the Works' world view
// and records in the store the entities that changed meaningfully — each change a new version
// with what made it (a sync, or the action: "run_…/4 deploy.rollback").

#include <fmt/format.h>

#include <cmath>

#include "actors/works/orchestrator.hpp"
#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

struct world_sync_state {
  works_env_ptr env;
  pending_calls calls;
  std::vector<world::entity> stored; // the current versions in the store, by id
  bool loaded = false;
  bool busy = false;
  /// An action seen while an observation was in flight: observed again right after it.
  std::optional<std::string> pending_action;
  std::string last_error;
  static inline const char* name = "sreh.world_sync";
};

using world_sync_self = world_sync_actor::stateful_pointer<world_sync_state>;

/// Metrics move a little with every observation (noise, time); a new version is recorded when
/// one changed by more than 5% (relative, or 0.001 absolute near zero), appeared or vanished,
/// or when a property or an edge changed. The view always has the fresh values.
bool meaningful(const world::entity& stored, const world::entity& seen) {
  if (stored.kind != seen.kind || stored.props != seen.props ||
      stored.depends_on != seen.depends_on || stored.metrics.size() != seen.metrics.size())
    return true;
  for (const auto& [k, v] : seen.metrics) {
    auto i = stored.metrics.find(k);
    if (i == stored.metrics.end())
      return true;
    const double scale = std::max(std::abs(v), std::abs(i->second));
    if (std::abs(v - i->second) > std::max(0.05 * scale, 0.001))
      return true;
  }
  return false;
}

void sort_by_id(std::vector<world::entity>& xs) {
  std::sort(xs.begin(), xs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
}

/// Reads the stored versions (at start, and again after a failed commit); the first read
/// starts the observations.
void reload(world_sync_self self) {
  auto& rt = *self->state.env->rt;
  read_store(
    world_sync_actor{self}, self->state.calls, rt.store, rt.store_pool,
    [](persistence::world_store& s) { return s.world_entities(); },
    [self](expected<std::vector<world::entity>> got) {
      auto& st = self->state;
      if (got) {
        st.stored = std::move(*got);
        sort_by_id(st.stored);
      } else {
        st.env->log->warn("world state: reading the stored graph failed ({})", got.error().message);
      }
      if (!st.loaded) {
        st.loaded = true;
        self->send(self, sync_atom::value);
      }
    });
}

struct observed {
  std::vector<world::entity> entities;
  timestamp_us observed_at = 0;
  std::uint64_t generation = 0;
  timestamp_us begun_at = 0;
  std::string error; // the first source that failed
};

void observe(world_sync_self self, std::string changed_by, world::change_source source);

/// Every world source, read on the tool pool (blocking).
observed read_sources(const runtime& rt, world_view& world) {
  observed out;
  out.generation = world.begin_observation();
  out.begun_at = rt.clock.now_us();
  for (const auto& src : rt.tools.world_sources()) {
    auto o = src->observe(rt.clock.now_us());
    if (!o) {
      if (out.error.empty())
        out.error = src->name() + ": " + o.error().message;
      continue;
    }
    out.observed_at = std::max(out.observed_at, o->observed_at);
    for (auto& e : o->entities)
      out.entities.push_back(std::move(e));
  }
  sort_by_id(out.entities);
  return out;
}

/// The observation is over: observe again now if an action asked meanwhile.
void observed_done(world_sync_self self) {
  auto& st = self->state;
  st.busy = false;
  if (st.pending_action) {
    auto by = std::move(*st.pending_action);
    st.pending_action.reset();
    observe(self, std::move(by), world::change_source::action);
  }
}

/// The stored versions after `changed` committed.
void keep_stored(std::vector<world::entity>& stored, const std::vector<world::entity>& changed) {
  for (const auto& c : changed) {
    auto cur = std::lower_bound(stored.begin(), stored.end(), c.id,
                                [](const auto& x, const std::string& id) { return x.id < id; });
    if (cur != stored.end() && cur->id == c.id)
      *cur = c;
    else
      stored.insert(cur, c);
  }
}

/// Publishes an observation to the flows' world view and commits its meaningful changes as
/// versions (the others keep their stored values).
void take_observation(world_sync_self self, observed o, const std::string& changed_by,
                      world::change_source source) {
  auto& st = self->state;
  if (!o.error.empty() && o.error != st.last_error)
    st.env->log->warn("world state: observing {} failed", o.error);
  st.last_error = o.error;
  for (auto& e : o.entities)
    std::sort(e.depends_on.begin(), e.depends_on.end());
  auto snap = std::make_shared<world_snapshot>();
  snap->entities = o.entities;
  snap->world_at = o.observed_at;
  snap->generation = o.generation;
  snap->begun_at = o.begun_at;
  st.env->world->set(std::move(snap));
  std::vector<world::entity> seen;
  for (const auto& e : o.entities) {
    auto cur = std::lower_bound(st.stored.begin(), st.stored.end(), e.id,
                                [](const auto& x, const std::string& id) { return x.id < id; });
    if (cur == st.stored.end() || cur->id != e.id || meaningful(*cur, e))
      seen.push_back(e);
  }
  auto changed = world::changes(st.stored, seen, source, changed_by, st.env->rt->clock.now_us());
  if (changed.empty())
    return observed_done(self);
  persistence::write_batch b;
  b.entities = changed;
  commit_batch(world_sync_actor{self}, st.calls, st.env->rt->writer, std::move(b),
               [self, changed](persistence::commit_result res) {
                 auto& st = self->state;
                 if (res.err) {
                   st.env->rt->commit_errors.log(*st.env->log, spdlog::level::err,
                                                 "world state: commit failed: {}", res.err.message);
                   // Another writer (a cluster member's sync) may have added versions: go on
                   // from what the store holds.
                   reload(self);
                 } else {
                   keep_stored(st.stored, changed);
                 }
                 observed_done(self);
               });
}

void observe(world_sync_self self, std::string changed_by, world::change_source source) {
  auto& st = self->state;
  if (st.busy) {
    if (source == world::change_source::action)
      st.pending_action = std::move(changed_by);
    return;
  }
  st.busy = true;
  auto rt = st.env->rt;
  call_blocking(
    world_sync_actor{self}, st.calls, rt->pool,
    [rt, world = st.env->world] { return read_sources(*rt, *world); },
    [self, changed_by, source](observed o) {
      take_observation(self, std::move(o), changed_by, source);
    });
}

/// A mutating tool's successful outcome, from a step.outcome event: "run_…/4 deploy.rollback".
std::optional<std::pair<std::int64_t, std::string>> mutating_outcome(const tool_registry& tools,
                                                                     const event& e) {
  if (e.kind != "step.outcome" || e.data.find("\"kind\":\"tool\"") == std::string::npos ||
      e.data.find("\"state\":\"succeeded\"") == std::string::npos)
    return std::nullopt;
  auto doc = json::parse(e.data);
  if (!doc || !doc->IsObject() || !doc->HasMember("tool") || !(*doc)["tool"].IsString() ||
      !doc->HasMember("n") || !(*doc)["n"].IsInt64())
    return std::nullopt;
  std::string tool = (*doc)["tool"].GetString();
  auto t = tools.find(tool);
  if (!t || t->risk() == risk_class::read_only)
    return std::nullopt;
  return std::pair{(*doc)["n"].GetInt64(), tool};
}

world_sync_actor::behavior_type world_sync_behavior(world_sync_self self, works_env_ptr env,
                                                    event_hub* hub) {
  self->state.env = std::move(env);
  auto rt = self->state.env->rt;
  auto handle = world_sync_actor{self};
  auto token = hub->subscribe([handle, rt](const event_hub::batch& b) {
    for (const auto& e : b->events)
      if (auto a = mutating_outcome(rt->tools, e))
        caf::anon_send(handle, action_atom::value, e.run_id, a->first, a->second);
  });
  self->attach_functor([hub, token] { hub->unsubscribe(token); });
  // The stored versions first, so that versions go on where the last start left them.
  reload(self);
  return {
    [=](sync_atom) {
      if (!self->state.loaded)
        return;
      observe(self, "sync", world::change_source::sync);
      self->delayed_send(self,
                         std::chrono::milliseconds(self->state.env->rt->cfg.works.world_sync_ms),
                         sync_atom::value);
    },
    [=](action_atom, const std::string& run_id, std::int64_t n, const std::string& tool) {
      if (self->state.loaded)
        observe(self, fmt::format("{}/{} {}", run_id, n, tool), world::change_source::action);
    },
    [=](called_atom, std::uint64_t token) { self->state.calls.complete(token); },
  };
}

} // namespace

world_sync_actor spawn_world_sync(caf::local_actor* parent, works_env_ptr env, event_hub& hub) {
  return parent->spawn<caf::linked>(world_sync_behavior, std::move(env), &hub);
}

} // namespace sreh::actors
