#include "app/serve/evolve_setup.hpp"

#include "config/policy/policy_config.hpp"
#include "core/base/logger.hpp"
#include "eval/evolve.hpp"

namespace sreh::app {

std::shared_ptr<actors::version_registry> make_versions(const node_registries& regs,
                                                        const config::node_config& cfg,
                                                        actors::model_provider_ptr provider,
                                                        policy::policy_set policy) {
  return std::make_shared<actors::version_registry>(
    cfg.model, std::move(provider),
    [&regs](const config::model_config& m) { return regs.providers.make(m); },
    std::make_shared<const policy::policy_set>(std::move(policy)),
    [](std::string_view body, std::string_view source) {
      return config::load_request_policy(std::string{body}, std::string{source});
    });
}

namespace {

/// The two versions compared: a reasoning candidate (a knowledge base, prompt or model route) in
/// place of its kind's current version under the scenarios' mode policy, or a policy over the
/// current reasoner.
void versions_of(eval::gate_inputs& in, const evolve::candidate& c, const std::string& base,
                 const std::shared_ptr<actors::version_registry>& versions) {
  auto current = versions->current_reasoner();
  if (evolve::reasoning(c.kind)) {
    auto was = current;
    was.of(c.kind) = base;
    in.base = [versions, was] { return versions->provider(was); };
    in.candidate = [versions, c] { return versions->provider_with(c); };
    return;
  }
  in.base = in.candidate = [versions, current] { return versions->provider(current); };
  in.base_policy = versions->policy(base);
  auto p = config::load_request_policy(c.body, c.id);
  if (p)
    in.candidate_policy = std::make_shared<const policy::policy_set>(std::move(*p));
}

/// Evaluates a candidate with eval::evaluate_candidate: the node's suites, then its recent runs.
actors::gate_fn gate_of(net::node_parts& n, const node_registries& regs,
                        const config::node_config& cfg,
                        std::shared_ptr<actors::version_registry> versions) {
  auto* store = &n.store();
  return [store, &regs, &cfg, versions](const evolve::candidate& c, const std::string& base,
                                        const std::atomic<bool>& cancel) {
    eval::gate_inputs in;
    in.base_version = base;
    in.candidate_version = c.id;
    versions_of(in, c, base, versions);
    if (c.kind == evolve::artefact::policy && !in.candidate_policy)
      return actors::gate_result{"null", {}, c.id + ": the policy no longer loads"};
    in.suites = cfg.evolve.suites;
    in.mode = cfg.evolve.mode;
    in.replay_last = cfg.evolve.replay_last;
    in.store = store;
    in.cfg = &cfg;
    in.make_tools = [&regs, &cfg] {
      auto tools = std::make_shared<actors::tool_registry>();
      if (auto made = make_tools_and_provider(regs, cfg, *tools); !made)
        logger("evolve")->warn("replay tools: {}", made.error().message);
      return tools;
    };
    auto current = versions->policy(versions->current(evolve::artefact::policy));
    in.policy = current ? *current : policy::policy_set{};
    in.cancel = &cancel;
    in.progress = [id = c.id](const std::string& what) {
      logger("evolve")->info("candidate {}: {}", id, what);
    };
    auto v = eval::evaluate_candidate(in);
    return actors::gate_result{std::move(v.report), std::move(v.regressions), std::move(v.error)};
  };
}

} // namespace

expected<std::unique_ptr<actors::candidate_service>>
start_gate(net::node_parts& n, const node_registries& regs, const config::node_config& cfg,
           std::shared_ptr<actors::version_registry> versions) {
  actors::gate_settings settings;
  settings.approvals = cfg.evolve.approvals;
  auto gate = gate_of(n, regs, cfg, versions);
  auto svc = std::make_unique<actors::candidate_service>(
    n.store(), n.writer(), n.clock(), n.ids(), std::move(versions), settings, std::move(gate));
  if (auto err = svc->load())
    return sreh::error{err.code, "evolve: cannot read the candidates: " + err.message};
  if (auto err = n.supervise(svc->evaluator()))
    return sreh::error{err.code, "evolve: " + err.message};
  // A promotion or rollback on another node of the cluster reaches this one as its event (the
  // JetStream feed): the gate then reads which versions are current.
  (void)n.hub().subscribe([g = svc.get()](const actors::event_hub::batch& b) {
    for (const auto& e : b->events)
      if (e.kind.rfind("candidate.", 0) == 0 && e.kind != "candidate.proposed")
        return g->changed();
  });
  return svc;
}

} // namespace sreh::app
