#pragma once

#include <vector>

#include "actors/gateway/model_provider.hpp"
#include "config/node/node_config.hpp"

namespace sreh::actors {

/// A deterministic provider that calls a fixed list of tools in order and then concludes. It is
/// the in-memory provider of the kernel's tests, the crash tests and the benchmark; it does not
/// reason about results (a failed step does not change the plan, it is reported at the end).
class scripted_provider final : public model_provider {
 public:
  explicit scripted_provider(std::vector<config::scripted_step> script);
  [[nodiscard]] std::string name() const override { return "scripted"; }
  [[nodiscard]] decision decide(const run_context& ctx) override;

 private:
  std::vector<config::scripted_step> script_;
};

} // namespace sreh::actors
