// What a run decides and acts with besides the node's own: a fork's policy (docs/fork.md) and the
// versions it pinned when it began (docs/evolve.md), loaded once per incarnation of its actor.
#include "actors/evolve/versions.hpp"

#include <fmt/format.h>

#include "actors/kernel/run/actor_impl.hpp"
#include "config/policy/policy_config.hpp"
#include "core/evolve/candidate.hpp"
#include "core/model/fork_origin.hpp"

namespace sreh::actors::run_impl {

namespace {

/// A fork with a policy of its own decides with it, on every incarnation of its actor.
void load_own_policy(run_state_t& st) {
  auto origin = fork_origin_of(st.journal.r);
  if (!origin || origin->policy.empty())
    return;
  auto p = config::load_request_policy(origin->policy, "the fork's policy");
  if (p)
    st.own_policy = std::make_shared<const policy::policy_set>(std::move(*p));
  else
    st.own_policy_error =
      fmt::format("the fork's own policy no longer loads: {}", p.error().message);
}

/// A goal run reasons with the knowledge base, prompt and model route and acts under the policy it
/// pinned when it began, on every incarnation (a fork's own policy, loaded before, wins over its
/// pinned one).
void load_pinned_versions(run_state_t& st) {
  if (!st.rt->versions || st.journal.r.kind != "goal")
    return;
  const auto& spec = st.journal.r.spec;
  auto pins = reasoner_pins::pinned_in(spec);
  if (!pins.all_config()) {
    auto p = st.rt->versions->provider(pins);
    if (p)
      st.provider = std::move(*p);
    else
      st.provider_error =
        fmt::format("the run's pinned versions do not load here: {}", p.error().message);
  }
  auto pol = evolve::pinned_version(spec, evolve::artefact::policy);
  if (pol == evolve::config_version || st.own_policy || !st.own_policy_error.empty())
    return;
  st.own_policy = st.rt->versions->policy(pol);
  if (!st.own_policy)
    st.own_policy_error =
      fmt::format("the run pinned policy {}, which this node does not have", pol);
}

} // namespace

void load_run_versions(run_state_t& st) {
  load_own_policy(st);
  load_pinned_versions(st);
}

} // namespace sreh::actors::run_impl
