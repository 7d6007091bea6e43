#include "actors/kernel/flow_tool.hpp"

#include <fmt/format.h>

#include <future>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/flows/inputs.hpp"
#include "core/flows/runner.hpp"

namespace sreh::actors {

namespace {

class flow_tool final : public tool {
 public:
  flow_tool(const config::node_config& cfg, persistence::run_store& store,
            std::shared_ptr<flow_kernel> kernel)
    : cfg_(cfg), store_(store), kernel_(std::move(kernel)) {
    std::vector<std::string> names;
    for (const auto& f : cfg.flows.loaded)
      names.push_back(f.name);
    auto properties =
      json::object("flow", json::raw_text{json::object("type", "string", "enum", names)}, "inputs",
                   json::raw_text{json::object("type", "object")});
    schema_ = json::object("type", "object", "required", std::vector<std::string>{"flow"},
                           "properties", json::raw_text{properties}, "additionalProperties", false);
    for (const auto& f : cfg.flows.loaded)
      description_ += fmt::format("; {}: {}", f.name, f.description);
  }

  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override { return risk_class::high; }
  bool idempotent() const override { return false; }
  bool blocking() const override { return true; } // waits for the kernel's answer

  tool_result execute(const tool_call& call) override {
    auto args = json::parse_object(call.args);
    if (!args)
      return tool_result::failure("flow.run: " + args.error().message);
    std::string name = (*args)["flow"].GetString();
    const flows::flow* f = nullptr;
    for (const auto& x : cfg_.flows.loaded)
      if (x.name == name)
        f = &x;
    if (f == nullptr)
      return tool_result::failure(fmt::format("flow.run: no flow '{}' on this node", name));
    auto in = args->HasMember("inputs") ? json::stringify((*args)["inputs"]) : std::string{"{}"};
    auto inputs = flows::resolve_inputs(*f, in);
    if (!inputs)
      return tool_result::failure(fmt::format("flow.run {}: {}", name, inputs.error().message));
    auto* k = kernel_->kernel.load();
    if (k == nullptr)
      return tool_result::failure("flow.run: the node is not started");
    goal_request req;
    req.goal = "flow " + f->name;
    req.kind = "flow";
    req.spec = flows::pin(*f, *inputs);
    req.parent = call.run_id;
    req.idempotency_key = call.idempotency_key;
    auto parent = store_.get_run(call.run_id);
    req.submitter = parent && parent->has_value() ? (*parent)->submitter : "flow.run";
    req.budget = cfg_.budget;
    req.budget.max_steps = std::max<std::int64_t>(req.budget.max_steps, flows::max_run_steps);
    auto done = std::make_shared<std::promise<expected<submit_reply>>>();
    auto answer = done->get_future();
    k->submit(std::move(req), [done](expected<submit_reply> r) { done->set_value(std::move(r)); });
    if (answer.wait_for(std::chrono::seconds(30)) != std::future_status::ready)
      return tool_result::failure("flow.run: the kernel did not answer within 30 s");
    auto r = answer.get();
    if (!r)
      return tool_result::failure(fmt::format("flow.run {}: {}", name, r.error().message));
    return tool_result::success(json::object("run", r->run_id, "flow", f->name, "version",
                                             f->version, "started", r->created));
  }

  /// The call took effect when a run holds its idempotency key.
  reconcile_result reconcile(std::string_view key) override {
    auto id = store_.find_by_idempotency_key(key);
    if (!id)
      return {};
    if (!id->has_value())
      return {reconcile_result::not_happened, "{}"};
    return {reconcile_result::happened, json::object("run", **id, "started", false)};
  }

 private:
  const config::node_config& cfg_;
  persistence::run_store& store_;
  std::shared_ptr<flow_kernel> kernel_;
  std::string name_ = "flow.run";
  std::string description_ = "Start a run of one of the node's flows (runbooks) with inputs";
  std::string schema_;
};

} // namespace

tool_ptr make_flow_tool(const config::node_config& cfg, persistence::run_store& store,
                        std::shared_ptr<flow_kernel> kernel) {
  return std::make_shared<flow_tool>(cfg, store, std::move(kernel));
}

} // namespace sreh::actors
