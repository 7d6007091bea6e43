#pragma once
// A tool that forwards everything to another one: the base of wrappers that change one part of
// a tool and keep the rest (eval's probed tools, replay's recorded tools).

#include <utility>

#include "actors/tools/tool.hpp"

namespace sreh::actors {

class forwarding_tool : public tool {
 public:
  explicit forwarding_tool(tool_ptr inner) : inner_(std::move(inner)) {}

  const std::string& name() const override { return inner_->name(); }
  const std::string& description() const override { return inner_->description(); }
  const std::string& schema() const override { return inner_->schema(); }
  risk_class risk() const override { return inner_->risk(); }
  bool idempotent() const override { return inner_->idempotent(); }
  bool blocking() const override { return inner_->blocking(); }
  std::chrono::milliseconds timeout() const override { return inner_->timeout(); }
  tool_result execute(const tool_call& call) override { return inner_->execute(call); }
  std::optional<postcondition> postcondition_for(std::string_view args) const override {
    return inner_->postcondition_for(args);
  }
  check_result check(std::string_view args) override { return inner_->check(args); }
  bool compensable() const override { return inner_->compensable(); }
  tool_result compensate(const tool_call& original) override {
    return inner_->compensate(original);
  }
  action_scope scope(std::string_view args) const override { return inner_->scope(args); }
  reconcile_result reconcile(std::string_view key) override { return inner_->reconcile(key); }
  std::vector<obs::capability> provides() const override { return inner_->provides(); }
  obs::observations observe(std::string_view args, std::string_view result) const override {
    return inner_->observe(args, result);
  }

 protected:
  [[nodiscard]] const tool_ptr& inner() const { return inner_; }

 private:
  tool_ptr inner_;
};

} // namespace sreh::actors
