#include "actors/tools/tool_spec.hpp"

#include <memory>
#include <utility>

namespace sreh::actors {

namespace {

/// The tool a `tool_spec` declares.
class declared_tool final : public tool {
 public:
  explicit declared_tool(tool_spec s) : spec_(std::move(s)) {}

  const std::string& name() const override { return spec_.name; }
  const std::string& description() const override { return spec_.description; }
  const std::string& schema() const override { return spec_.schema; }
  risk_class risk() const override { return spec_.risk; }
  bool idempotent() const override { return spec_.risk == risk_class::read_only; }
  bool blocking() const override { return spec_.blocking; }
  std::chrono::milliseconds timeout() const override { return spec_.timeout; }

  tool_result execute(const tool_call& call) override {
    if (call.parsed && call.parsed->IsObject()) // checked by the kernel
      return spec_.run(*call.parsed, tool_context{spec_.name, call});
    auto args = json::parse_object(call.args.empty() ? "{}" : call.args);
    if (!args)
      return tool_result::failure(spec_.name + ": " + args.error().message);
    return spec_.run(*args, tool_context{spec_.name, call});
  }

  bool compensable() const override { return static_cast<bool>(spec_.compensate); }
  tool_result compensate(const tool_call& original) override {
    return spec_.compensate ? spec_.compensate(original) : tool::compensate(original);
  }
  action_scope scope(std::string_view args) const override {
    return spec_.scope ? spec_.scope(args) : tool::scope(args);
  }
  reconcile_result reconcile(std::string_view key) override {
    return spec_.reconcile ? spec_.reconcile(key) : reconcile_result{};
  }
  std::vector<obs::capability> provides() const override { return spec_.provides; }
  obs::observations observe(std::string_view args, std::string_view result) const override {
    return spec_.observe ? spec_.observe(args, result) : obs::observations{};
  }

 private:
  tool_spec spec_;
};

} // namespace

tool_ptr make_tool(tool_spec spec) {
  return std::make_shared<declared_tool>(std::move(spec));
}

void add_tools(tool_registry& out, std::vector<tool_spec> specs) {
  for (auto& s : specs)
    out.add(make_tool(std::move(s)));
}

} // namespace sreh::actors
