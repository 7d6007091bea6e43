#include "plugins/tools/sandbox/expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace sreh::plugins::sandbox::detail {

namespace {

struct token {
  enum kind_t { name, number, op, lparen, rparen, and_, or_, end } kind = end;
  std::string text;
  std::size_t pos = 0; // 0-based
};

struct syntax_error {
  std::size_t pos;
  std::string what;
};

bool name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

std::vector<token> tokenize(std::string_view s) {
  std::vector<token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    auto start = i;
    if (c == '(' || c == ')') {
      out.push_back({c == '(' ? token::lparen : token::rparen, std::string(1, c), start});
      ++i;
    } else if (c == '<' || c == '>' || c == '=' || c == '!') {
      ++i;
      if (i < s.size() && s[i] == '=')
        ++i;
      auto text = std::string{s.substr(start, i - start)};
      if (text == "=" || text == "!")
        throw syntax_error{start, fmt::format("unknown operator '{}' (use == or !=)", text)};
      out.push_back({token::op, text, start});
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      char* end = nullptr;
      std::string rest{s.substr(start)};
      std::strtod(rest.c_str(), &end);
      auto len = static_cast<std::size_t>(end - rest.c_str());
      if (len == 0)
        throw syntax_error{start, fmt::format("unexpected '{}'", c)};
      out.push_back({token::number, rest.substr(0, len), start});
      i += len;
    } else if (name_start(c)) {
      while (i < s.size() && name_char(s[i]))
        ++i;
      auto text = std::string{s.substr(start, i - start)};
      auto k = text == "and" ? token::and_ : text == "or" ? token::or_ : token::name;
      out.push_back({k, text, start});
    } else {
      throw syntax_error{start, fmt::format("unexpected '{}'", c)};
    }
  }
  out.push_back({token::end, "", s.size()});
  return out;
}

class parser {
 public:
  parser(std::vector<token> toks, const metric_lookup& lookup)
    : toks_(std::move(toks)), lookup_(lookup) {}

  bool parse() {
    bool v = or_expr();
    if (peek().kind != token::end)
      throw syntax_error{peek().pos,
                         fmt::format("expected 'and', 'or' or the end, got '{}'", peek().text)};
    return v;
  }

 private:
  const token& peek() const { return toks_[i_]; }
  const token& next() { return toks_[i_ == toks_.size() - 1 ? i_ : i_++]; }

  bool or_expr() {
    bool v = and_expr();
    while (peek().kind == token::or_) {
      next();
      bool rhs = and_expr(); // always evaluated: validates every comparison
      v = v || rhs;
    }
    return v;
  }

  bool and_expr() {
    bool v = primary();
    while (peek().kind == token::and_) {
      next();
      bool rhs = primary();
      v = v && rhs;
    }
    return v;
  }

  bool primary() {
    if (peek().kind == token::lparen) {
      auto open = next().pos;
      bool v = or_expr();
      if (peek().kind != token::rparen)
        throw syntax_error{peek().pos,
                           fmt::format("expected ')' to close '(' at position {}", open + 1)};
      next();
      return v;
    }
    return comparison();
  }

  bool comparison() {
    const auto& lhs = next();
    if (lhs.kind != token::name)
      throw syntax_error{lhs.pos,
                         lhs.kind == token::end
                           ? std::string{"expected <entity>.<metric>, got the end"}
                           : fmt::format("expected <entity>.<metric>, got '{}'", lhs.text)};
    auto dot = lhs.text.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == lhs.text.size())
      throw syntax_error{lhs.pos, fmt::format("expected <entity>.<metric>, got '{}'", lhs.text)};
    const auto& op = next();
    if (op.kind != token::op)
      throw syntax_error{
        op.pos, fmt::format("expected a comparison (< <= > >= == !=) after '{}'", lhs.text)};
    const auto& num = next();
    if (num.kind != token::number)
      throw syntax_error{num.pos, fmt::format("expected a number after '{}'", op.text)};
    auto value = lookup_(lhs.text.substr(0, dot), lhs.text.substr(dot + 1));
    if (!value)
      throw syntax_error{lhs.pos, value.error().message};
    double x = *value, y = std::strtod(num.text.c_str(), nullptr);
    if (op.text == "<")
      return x < y;
    if (op.text == "<=")
      return x <= y;
    if (op.text == ">")
      return x > y;
    if (op.text == ">=")
      return x >= y;
    if (op.text == "==")
      return std::fabs(x - y) < 1e-9;
    return std::fabs(x - y) >= 1e-9;
  }

  std::vector<token> toks_;
  std::size_t i_ = 0;
  const metric_lookup& lookup_;
};

} // namespace

expected<bool> evaluate_expression(std::string_view expr, const metric_lookup& lookup) {
  try {
    if (expr.find_first_not_of(" \t\n") == std::string_view::npos)
      return sreh::error{errc::invalid_argument, "position 1: empty expression"};
    return parser{tokenize(expr), lookup}.parse();
  } catch (const syntax_error& e) {
    return sreh::error{errc::invalid_argument, fmt::format("position {}: {}", e.pos + 1, e.what)};
  }
}

std::string check_metric(const world_model& w, std::string_view entity, std::string_view metric) {
  auto kind = w.kind_of(entity);
  if (!kind || *kind == entity_kind::flag)
    return fmt::format("unknown entity '{}'", entity);
  auto* h = w.find_host(entity);
  const auto& names = metric_names(*kind, h != nullptr && h->kind == host_kind::gpu);
  if (std::find(names.begin(), names.end(), metric) == names.end())
    return fmt::format("unknown metric '{}' of {} '{}' (expected one of {})", metric,
                       to_string(*kind), entity, fmt::join(names, ", "));
  return {};
}

} // namespace sreh::plugins::sandbox::detail
