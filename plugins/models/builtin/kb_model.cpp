// The knowledge base as data: condition expressions, lookups and goal cues. The YAML loader is
// in kb.cpp.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugins/models/builtin/knowledge_base.hpp"

namespace sreh::plugins::reasoner {

// -- conditions --------------------------------------------------------------------------------

namespace {

/// A plain decimal number, or nothing.
std::optional<double> to_number(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty())
        out.push_back(std::move(cur)), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(std::move(cur));
  return out;
}

bool is_identifier(std::string_view s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

} // namespace

expected<condition> parse_condition(std::string_view text) {
  static const std::set<std::string, std::less<>> ops{">", ">=", "<", "<=", "==", "!="};
  auto bad = [&](const std::string& why) {
    return sreh::error{errc::invalid_argument, fmt::format("condition '{}': {}", text, why)};
  };
  condition out;
  out.text = std::string{text};
  auto words = split_words(text);
  std::size_t i = 0;
  while (true) {
    if (i + 3 > words.size())
      return bad("expected `<metric> <op> <value>`");
    comparison c;
    c.metric = words[i];
    if (!is_identifier(c.metric))
      return bad(fmt::format("'{}' is not a metric name", c.metric));
    c.op = words[i + 1];
    if (!ops.contains(c.op))
      return bad(fmt::format("unknown operator '{}' (use > >= < <= == !=)", c.op));
    const auto& rhs = words[i + 2];
    i += 3;
    if (auto n = to_number(rhs)) {
      c.constant = *n;
    } else if (is_identifier(rhs)) {
      c.ref = rhs;
    } else if (rhs.size() > 1 && rhs.back() == 'x' && to_number(rhs.substr(0, rhs.size() - 1))) {
      c.factor = *to_number(rhs.substr(0, rhs.size() - 1));
      if (i >= words.size() || !is_identifier(words[i]))
        return bad(fmt::format("expected `baseline` or a field name after '{}'", rhs));
      c.ref = words[i++];
    } else {
      return bad(fmt::format("'{}' is not a number, `Nx baseline` or a field name", rhs));
    }
    out.all.push_back(std::move(c));
    if (i == words.size())
      return out;
    if (words[i] != "and")
      return bad(fmt::format("expected `and`, got '{}'", words[i]));
    ++i;
  }
}

// -- the KB ------------------------------------------------------------------------------------

const failure_mode* knowledge_base::find(std::string_view kind) const {
  for (auto& m : modes)
    if (m.kind == kind)
      return &m;
  return nullptr;
}

bool knowledge_base::is_remedy_tool(std::string_view tool) const {
  for (auto& m : modes)
    for (auto& r : m.remedies)
      for (auto& a : r.actions)
        if (a.tool == tool)
          return true;
  return false;
}

namespace {

/// Lower-cased words of a goal; words that contain '-' or '_' are names, not cue words, and are
/// kept as empty strings so phrases do not match across them.
std::vector<std::string> goal_words(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  bool name = false;
  auto flush = [&] {
    if (!w.empty() || name)
      out.push_back(name ? std::string{} : w);
    w.clear();
    name = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (std::isalnum(c)) {
      w += static_cast<char>(std::tolower(c));
    } else if ((c == '-' || c == '_') && !w.empty() && i + 1 < text.size() &&
               std::isalnum(static_cast<unsigned char>(text[i + 1]))) {
      name = true;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

} // namespace

std::string goal_cue::said() const {
  if (!follow_up_of.empty())
    return fmt::format("run {}, which this run follows up, found {}", follow_up_of, mode->kind);
  if (!memory.empty())
    return fmt::format("memory {} names {} for a case like this", memory, mode->kind);
  return fmt::format("the goal mentions '{}'", phrase);
}

std::vector<goal_cue> knowledge_base::cues_in(std::string_view goal) const {
  auto words = goal_words(goal);
  std::vector<goal_cue> out;
  for (auto& m : modes) {
    goal_cue best;
    for (auto& phrase : m.cues) {
      auto cw = goal_words(phrase);
      if (cw.empty() || cw.size() > words.size())
        continue;
      for (std::size_t i = 0; i + cw.size() <= words.size(); ++i) {
        bool match = true;
        for (std::size_t k = 0; k < cw.size() && match; ++k)
          match = !cw[k].empty() && words[i + k].rfind(cw[k], 0) == 0;
        if (match && static_cast<int>(cw.size()) > best.words) {
          best = {&m, phrase, static_cast<int>(cw.size()), {}, {}};
          break;
        }
      }
    }
    if (best.mode)
      out.push_back(std::move(best));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const goal_cue& a, const goal_cue& b) { return a.words > b.words; });
  return out;
}

} // namespace sreh::plugins::reasoner
