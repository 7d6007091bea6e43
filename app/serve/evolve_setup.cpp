#include "app/serve/evolve_setup.hpp"

#include "core/base/logger.hpp"
#include "eval/evolve.hpp"
#include "plugins/models/builtin/reasoner.hpp"

namespace sreh::app {

std::shared_ptr<actors::version_registry> make_versions(const config::node_config& cfg,
                                                        actors::model_provider_ptr provider) {
  actors::version_registry::kb_maker make;
  if (cfg.model.provider == "builtin")
    make = [](std::string_view body, std::string_view source) {
      return plugins::make_builtin_reasoner_from_text(body, source);
    };
  auto name = provider->name();
  return std::make_shared<actors::version_registry>(std::move(provider), std::move(name),
                                                    std::move(make));
}

namespace {

/// Evaluates a candidate with eval::evaluate_candidate: the node's suites, then its recent runs.
actors::gate_fn gate_of(net::node_parts& n, const node_registries& regs,
                        const config::node_config& cfg, policy::policy_set policy,
                        std::shared_ptr<actors::version_registry> versions) {
  auto* store = &n.store();
  return [store, &regs, &cfg, policy = std::move(policy), versions](
           const evolve::candidate& c, const std::string& base, const std::atomic<bool>& cancel) {
    eval::gate_inputs in;
    in.base_version = base;
    in.candidate_version = c.id;
    in.base = [versions, base]() -> expected<actors::model_provider_ptr> {
      if (auto p = versions->provider(base))
        return p;
      return sreh::error{errc::not_found, "no version " + base + " on this node"};
    };
    in.candidate = [body = c.body, id = c.id] {
      return plugins::make_builtin_reasoner_from_text(body, id);
    };
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
    in.policy = policy;
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
           policy::policy_set policy, std::shared_ptr<actors::version_registry> versions) {
  actors::gate_settings settings;
  settings.approvals = cfg.evolve.approvals;
  auto gate = gate_of(n, regs, cfg, std::move(policy), versions);
  auto svc = std::make_unique<actors::candidate_service>(
    n.store(), n.writer(), n.clock(), n.ids(), std::move(versions), settings, std::move(gate));
  if (auto err = svc->load())
    return sreh::error{err.code, "evolve: cannot read the candidates: " + err.message};
  if (auto err = n.supervise(svc->evaluator()))
    return sreh::error{err.code, "evolve: " + err.message};
  return svc;
}

} // namespace sreh::app
