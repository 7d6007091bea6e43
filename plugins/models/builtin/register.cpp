#include "plugins/register.hpp"

#include "plugins/models/builtin/reasoner.hpp"

namespace sreh::plugins {

void register_builtin_reasoner(actors::provider_registry& r) {
  r.add("builtin", [](const config::model_config& m) -> expected<actors::model_provider_ptr> {
    if (!m.kb_text.empty()) // its errors name the candidate
      return make_builtin_reasoner_from_text(m.kb_text, m.kb_source);
    auto p = make_builtin_reasoner(m.kb);
    if (!p)
      return sreh::error{p.error().code, "model.kb: " + p.error().message};
    return p;
  });
}

} // namespace sreh::plugins
