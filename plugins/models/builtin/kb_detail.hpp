#pragma once
// Private to the knowledge base's two files (reasoner_kb_model.cpp, reasoner_kb.cpp).

#include <optional>
#include <string_view>

namespace sreh::plugins::reasoner::detail {

/// A plain decimal number, or nothing.
[[nodiscard]] std::optional<double> to_number(std::string_view s);

} // namespace sreh::plugins::reasoner::detail
