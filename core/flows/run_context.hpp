#pragma once
// What a flow step's expressions and placeholders read: the flow run's inputs, the steps that
// ended, and world state (private to core/flows: runner.cpp and run_context.cpp).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/flows/reference.hpp"
#include "core/flows/runner.hpp"

namespace sreh::flows {

/// What the journal says so far: how each step ended, in the order they ended.
struct run_progress {
  std::map<std::string, step_result> ended;
  std::vector<std::string> done; // succeeded steps, in the order they did
};

class run_context {
 public:
  run_context(const run_view& v, const run_progress& p) : v_(v), p_(p) {}

  /// A reference's value as JSON text.
  expected<std::string> value_json(const reference& r) const;

  expected<std::string> text(const reference& r) const;

  [[nodiscard]] resolver texts() const;

  expected<std::string> render_text(std::string_view t) const { return render(t, texts()); }

  /// Evaluates an expression of the flow (placeholders first).
  /// `shown` receives the expression as evaluated (placeholders filled in) when it renders.
  expected<bool> holds(const std::string& text, std::string& observed,
                       std::string* shown = nullptr) const;

 private:
  const step_result* find(const std::string& id) const {
    if (auto i = p_.ended.find(id); i != p_.ended.end())
      return &i->second;
    if (auto i = v_.prior.find(id); i != v_.prior.end())
      return &i->second;
    return nullptr;
  }

  const run_view& v_;
  const run_progress& p_;
};

} // namespace sreh::flows
