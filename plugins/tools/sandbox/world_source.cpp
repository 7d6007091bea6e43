// The sandbox world as a world state source (actors/tools/world_source.hpp): its services,
// databases, hosts, GPU nodes, jobs and flags with their metrics now, the calls between
// services, what runs on which host, and what the actions changed (versions, replicas,
// cordons, flag values). With `sandbox.time_scale` the simulated clock moves with the wall
// clock while the node serves.

#include <cmath>

#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox {

namespace {

class sandbox_world_source final : public actors::world_source {
 public:
  sandbox_world_source(world_ptr w, double time_scale) : w_(std::move(w)), scale_(time_scale) {}

  std::string name() const override { return "sandbox"; }

  std::string exposition() const override { return detail::exposition(*w_); }

  [[nodiscard]] const world_ptr& world() const { return w_; }

  expected<actors::world_observation> observe(timestamp_us wall_now) override {
    move_clock(wall_now);
    auto lock = detail::world_access::lock(*w_);
    const auto& st = detail::world_access::state(*w_);
    const auto live = st.live_at(st.now);
    const auto fr = st.frame_at(st.now);
    const auto& model = st.spec->world;
    actors::world_observation out;
    out.observed_at = st.now * 1'000'000;
    auto metrics_of = [&fr](const std::string& name) {
      std::map<std::string, double> m;
      if (auto i = fr.metrics.find(name); i != fr.metrics.end())
        for (const auto& [k, v] : i->second)
          m[k] = v;
      return m;
    };
    std::map<std::string, std::vector<std::string>> hosts_of;
    for (const auto& h : model.hosts)
      for (const auto& s : h.services)
        hosts_of[s].push_back(h.name);
    for (const auto& s : model.services) {
      sreh::world::entity e;
      e.id = s.name;
      e.kind = to_string(s.kind);
      e.metrics = metrics_of(s.name);
      e.props["tier"] = to_string(s.tier);
      if (auto l = live.services.find(s.name); l != live.services.end()) {
        e.props["version"] = l->second.version;
        e.props["replicas"] = std::to_string(l->second.replicas);
      }
      e.depends_on = s.calls;
      for (const auto& h : hosts_of[s.name])
        e.depends_on.push_back(h);
      out.entities.push_back(std::move(e));
    }
    for (const auto& h : model.hosts) {
      sreh::world::entity e;
      e.id = h.name;
      e.kind = h.kind == host_kind::gpu ? "gpu_node" : "host";
      e.metrics = metrics_of(h.name);
      if (auto l = live.hosts.find(h.name); l != live.hosts.end()) {
        e.props["cordoned"] = l->second.cordoned ? "true" : "false";
        e.props["drained"] = l->second.drained ? "true" : "false";
      }
      if (h.gpus > 0)
        e.props["gpus"] = std::to_string(h.gpus);
      out.entities.push_back(std::move(e));
    }
    for (const auto& j : model.jobs) {
      sreh::world::entity e;
      e.id = j.name;
      e.kind = "job";
      e.metrics = metrics_of(j.name);
      e.props["type"] = to_string(j.kind);
      if (auto l = live.jobs.find(j.name); l != live.jobs.end())
        e.depends_on = l->second.hosts;
      out.entities.push_back(std::move(e));
    }
    for (const auto& [name, initial] : model.flags) {
      sreh::world::entity e;
      e.id = name;
      e.kind = "flag";
      bool value = initial;
      if (auto l = live.flags.find(name); l != live.flags.end())
        value = l->second.value;
      e.props["value"] = value ? "true" : "false";
      e.metrics["value"] = value ? 1 : 0;
      out.entities.push_back(std::move(e));
    }
    return out;
  }

 private:
  /// Advances the simulated clock by `time_scale` × the wall time since the last observation.
  void move_clock(timestamp_us wall_now) {
    if (scale_ > 0 && last_wall_ > 0 && wall_now > last_wall_) {
      carry_ += static_cast<double>(wall_now - last_wall_) / 1e6 * scale_;
      const auto whole = static_cast<std::int64_t>(std::floor(carry_));
      if (whole > 0) {
        w_->advance(whole);
        carry_ -= static_cast<double>(whole);
      }
    }
    last_wall_ = wall_now;
  }

  world_ptr w_;
  double scale_;
  timestamp_us last_wall_ = 0;
  double carry_ = 0;
};

} // namespace

actors::world_source_ptr make_world_source(world_ptr w, double time_scale) {
  return std::make_shared<sandbox_world_source>(std::move(w), time_scale);
}

world_ptr world_of(const actors::world_source_ptr& source) {
  const auto* s = dynamic_cast<const sandbox_world_source*>(source.get());
  return s ? s->world() : nullptr;
}

} // namespace sreh::plugins::sandbox
