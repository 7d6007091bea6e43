// The world's public face: time, observation and the expression evaluator. Actions live in
// sandbox_actions.cpp.
#include <fmt/format.h>

#include "core/expr/expression.hpp"
#include "plugins/tools/sandbox/expression.hpp"
#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox {

const char* to_string(action_kind k) {
  switch (k) {
  case action_kind::rollback:
    return "rollback";
  case action_kind::restart:
    return "restart";
  case action_kind::scale:
    return "scale";
  case action_kind::set_pool_limit:
    return "set_pool_limit";
  case action_kind::cleanup_disk:
    return "cleanup_disk";
  case action_kind::rotate_cert:
    return "rotate_cert";
  case action_kind::set_flag:
    return "set_flag";
  case action_kind::cordon:
    return "cordon";
  case action_kind::uncordon:
    return "uncordon";
  case action_kind::drain:
    return "drain";
  case action_kind::restart_job:
    return "restart_job";
  }
  return "restart";
}

const char* tool_name(action_kind k) {
  switch (k) {
  case action_kind::rollback:
    return "deploy.rollback";
  case action_kind::restart:
    return "service.restart";
  case action_kind::scale:
    return "service.scale";
  case action_kind::set_pool_limit:
    return "db.set_pool_limit";
  case action_kind::cleanup_disk:
    return "host.cleanup_disk";
  case action_kind::rotate_cert:
    return "cert.rotate";
  case action_kind::set_flag:
    return "flag.set";
  case action_kind::cordon:
    return "host.cordon";
  case action_kind::uncordon:
    return "host.uncordon";
  case action_kind::drain:
    return "host.drain";
  case action_kind::restart_job:
    return "job.restart";
  }
  return "service.restart";
}

world::world(scenario sc)
  : spec_(std::make_shared<const scenario>(std::move(sc))), state_(std::make_unique<state>()) {
  state_->spec = spec_;
  for (const auto& f : spec_->faults)
    state_->at_fault.push_back(state_->live_at(start_of(f.at)));
}

world::~world() = default;

std::int64_t world::now() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return state_->now;
}

void world::advance(std::int64_t seconds) {
  std::lock_guard<std::mutex> lock{mtx_};
  if (seconds > 0)
    state_->now += seconds;
}

expected<double> world::metric(std::string_view entity, std::string_view metric) const {
  return metric_at(entity, metric, now());
}

expected<double> world::metric_at(std::string_view entity, std::string_view metric,
                                  std::int64_t at) const {
  if (auto msg = detail::check_metric(spec_->world, entity, metric); !msg.empty())
    return sreh::error{errc::not_found, msg};
  std::lock_guard<std::mutex> lock{mtx_};
  auto fr = state_->frame_at(at);
  return fr.metrics.find(entity)->second.find(metric)->second;
}

expected<metric_map> world::metrics(std::string_view entity) const {
  auto kind = spec_->world.kind_of(entity);
  if (!kind || *kind == entity_kind::flag)
    return sreh::error{errc::not_found, fmt::format("unknown entity '{}'", entity)};
  std::lock_guard<std::mutex> lock{mtx_};
  return state_->frame_at(state_->now).metrics.find(entity)->second;
}

expected<bool> world::evaluate(std::string_view expr) const {
  std::lock_guard<std::mutex> lock{mtx_};
  auto fr = state_->frame_at(state_->now);
  const auto& w = spec_->world;
  return expr::evaluate(
    expr, [&](const std::string& entity, const std::string& metric) -> expected<double> {
      if (auto msg = detail::check_metric(w, entity, metric); !msg.empty())
        return sreh::error{errc::invalid_argument, msg};
      return fr.metrics.find(entity)->second.find(metric)->second;
    });
}

actors::reconcile_result world::reconcile(std::string_view key) const {
  std::lock_guard<std::mutex> lock{mtx_};
  for (const auto& r : state_->log)
    if (r.key == key)
      return {actors::reconcile_result::happened, r.result};
  if (auto f = state_->forgotten.find(key); f != state_->forgotten.end())
    return {actors::reconcile_result::happened, f->second};
  // The log is the world's whole memory: a key it does not hold never took effect.
  return {actors::reconcile_result::not_happened, "{}"};
}

std::int64_t world::reset() {
  std::lock_guard<std::mutex> lock{mtx_};
  for (const auto& r : state_->log)
    state_->forgotten.emplace(r.key, r.result);
  auto undone = static_cast<std::int64_t>(state_->log.size());
  state_->log.clear();
  ++state_->resets;
  return undone;
}

std::vector<action_record> world::actions() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return state_->log;
}

} // namespace sreh::plugins::sandbox
