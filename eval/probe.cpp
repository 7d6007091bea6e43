#include "eval/probe.hpp"

#include "actors/tools/forwarding_tool.hpp"

namespace sreh::eval {

namespace {

/// A tool whose every call is followed by a check of the probe.
class probed_tool final : public actors::forwarding_tool {
 public:
  probed_tool(actors::tool_ptr inner, std::shared_ptr<mitigation_probe> probe)
    : forwarding_tool(std::move(inner)), probe_(std::move(probe)) {}

  actors::tool_result execute(const actors::tool_call& call) override {
    auto r = inner()->execute(call);
    probe_->check();
    return r;
  }

 private:
  std::shared_ptr<mitigation_probe> probe_;
};

} // namespace

mitigation_probe::mitigation_probe(plugins::sandbox::world_ptr w, std::string expr)
  : world_(std::move(w)), expr_(std::move(expr)) {}

void mitigation_probe::check() {
  if (expr_.empty() || held_at_.load() >= 0)
    return;
  auto now = world_->now();
  auto held = world_->evaluate(expr_);
  if (held && *held) {
    std::int64_t unset = -1;
    held_at_.compare_exchange_strong(unset, now - plugins::sandbox::epoch);
  }
}

std::optional<std::int64_t> mitigation_probe::first_held_after_s() const {
  auto at = held_at_.load();
  return at >= 0 ? std::optional<std::int64_t>{at} : std::nullopt;
}

void add_probed_tools(actors::tool_registry& out, const actors::tool_registry& inner,
                      std::shared_ptr<mitigation_probe> probe) {
  for (auto& t : inner.all())
    out.add(std::make_shared<probed_tool>(t, probe));
}

} // namespace sreh::eval
