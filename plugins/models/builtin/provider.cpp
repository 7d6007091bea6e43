#include <memory>

#include "plugins/models/builtin/engine.hpp"
#include "plugins/models/builtin/reasoner.hpp"

namespace sreh::plugins {

namespace {

/// The `builtin` provider: a pure function of the run context over an immutable KB, so it is
/// safe to call from several run actors at once.
class builtin_reasoner final : public actors::model_provider {
 public:
  explicit builtin_reasoner(reasoner::knowledge_base kb) : kb_(std::move(kb)) {}
  [[nodiscard]] std::string name() const override { return "builtin"; }
  [[nodiscard]] actors::decision decide(const actors::run_context& ctx) override {
    return reasoner::decide(kb_, ctx);
  }

 private:
  const reasoner::knowledge_base kb_;
};

} // namespace

expected<actors::model_provider_ptr> make_builtin_reasoner(const std::string& kb_path_or_empty) {
  auto kb = kb_path_or_empty.empty() ? reasoner::embedded_knowledge_base()
                                     : reasoner::load_knowledge_base(kb_path_or_empty);
  if (!kb)
    return kb.error();
  return actors::model_provider_ptr{std::make_shared<builtin_reasoner>(std::move(*kb))};
}

expected<actors::model_provider_ptr> make_builtin_reasoner_from_text(std::string_view yaml,
                                                                     std::string_view source) {
  auto kb = reasoner::parse_knowledge_base(yaml, source);
  if (!kb)
    return kb.error();
  return actors::model_provider_ptr{std::make_shared<builtin_reasoner>(std::move(*kb))};
}

} // namespace sreh::plugins
