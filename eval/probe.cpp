#include "eval/probe.hpp"

namespace sreh::eval {

namespace {

/// Forwards everything to the wrapped tool; `execute` also checks the probe.
class probed_tool final : public actors::tool {
 public:
  probed_tool(actors::tool_ptr inner, std::shared_ptr<mitigation_probe> probe)
    : inner_(std::move(inner)), probe_(std::move(probe)) {}

  const std::string& name() const override { return inner_->name(); }
  const std::string& description() const override { return inner_->description(); }
  const std::string& schema() const override { return inner_->schema(); }
  actors::risk_class risk() const override { return inner_->risk(); }
  bool idempotent() const override { return inner_->idempotent(); }
  bool blocking() const override { return inner_->blocking(); }
  std::chrono::milliseconds timeout() const override { return inner_->timeout(); }
  actors::action_scope scope(std::string_view args) const override { return inner_->scope(args); }
  actors::reconcile_result reconcile(std::string_view key) override {
    return inner_->reconcile(key);
  }
  std::vector<obs::capability> provides() const override { return inner_->provides(); }
  obs::observations observe(std::string_view args, std::string_view result) const override {
    return inner_->observe(args, result);
  }

  actors::tool_result execute(const actors::tool_call& call) override {
    auto r = inner_->execute(call);
    probe_->check();
    return r;
  }

 private:
  actors::tool_ptr inner_;
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
