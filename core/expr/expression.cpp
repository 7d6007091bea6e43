#include "core/expr/expression.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace sreh::expr {

/// A comparison (index into comparisons_) or an `and` / `or` of two nodes.
struct expression::node {
  enum kind_t { leaf, and_, or_ } kind = leaf;
  std::size_t index = 0;
  std::shared_ptr<const node> lhs, rhs;
};

namespace {

using node = expression::node;

struct token {
  enum kind_t { name, number, string, op, lparen, rparen, and_, or_, end } kind = end;
  std::string text;    // a string's text without its quotes, escapes resolved
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

/// A string quoted with `quote` starting at `s[start]`; `\` escapes the next character.
token quoted(std::string_view s, std::size_t start, std::size_t& i) {
  const char quote = s[start];
  std::string text;
  for (i = start + 1; i < s.size() && s[i] != quote; ++i) {
    if (s[i] == '\\' && i + 1 < s.size())
      ++i;
    text += s[i];
  }
  if (i == s.size())
    throw syntax_error{start, fmt::format("unclosed {}", quote == '"' ? "\"" : "'")};
  ++i;
  return {token::string, std::move(text), start};
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
      auto v = std::strtod(rest.c_str(), &end);
      auto len = static_cast<std::size_t>(end - rest.c_str());
      if (len == 0)
        throw syntax_error{start, fmt::format("unexpected '{}'", c)};
      if (!std::isfinite(v))
        throw syntax_error{start, fmt::format("number '{}' is out of range", rest.substr(0, len))};
      out.push_back({token::number, rest.substr(0, len), start});
      i += len;
    } else if (name_start(c)) {
      while (i < s.size() && name_char(s[i]))
        ++i;
      auto text = std::string{s.substr(start, i - start)};
      auto k = text == "and" ? token::and_ : text == "or" ? token::or_ : token::name;
      out.push_back({k, text, start});
    } else if (c == '"' || c == '\'') {
      out.push_back(quoted(s, start, i));
    } else {
      throw syntax_error{start, fmt::format("unexpected '{}'", c)};
    }
  }
  out.push_back({token::end, "", s.size()});
  return out;
}

class parser {
 public:
  parser(std::vector<token> toks, std::vector<comparison>& out, literals allowed)
    : toks_(std::move(toks)), out_(out), allowed_(allowed) {}

  std::shared_ptr<const node> parse() {
    auto root = or_expr();
    if (peek().kind != token::end)
      throw syntax_error{peek().pos,
                         fmt::format("expected 'and', 'or' or the end, got '{}'", peek().text)};
    return root;
  }

 private:
  const token& peek() const { return toks_[i_]; }
  const token& next() { return toks_[i_ == toks_.size() - 1 ? i_ : i_++]; }

  static std::shared_ptr<const node> join(node::kind_t k, std::shared_ptr<const node> a,
                                          std::shared_ptr<const node> b) {
    auto n = std::make_shared<node>();
    n->kind = k;
    n->lhs = std::move(a);
    n->rhs = std::move(b);
    return n;
  }

  std::shared_ptr<const node> or_expr() {
    auto v = and_expr();
    while (peek().kind == token::or_) {
      next();
      v = join(node::or_, v, and_expr());
    }
    return v;
  }

  std::shared_ptr<const node> and_expr() {
    auto v = primary();
    while (peek().kind == token::and_) {
      next();
      v = join(node::and_, v, primary());
    }
    return v;
  }

  std::shared_ptr<const node> primary() {
    if (peek().kind == token::lparen) {
      auto open = next().pos;
      auto v = or_expr();
      if (peek().kind != token::rparen)
        throw syntax_error{peek().pos,
                           fmt::format("expected ')' to close '(' at position {}", open + 1)};
      next();
      return v;
    }
    return leaf();
  }

  std::shared_ptr<const node> leaf() {
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
    auto rhs = literal(op);
    auto number = std::holds_alternative<double>(rhs) ? std::get<double>(rhs) : 0.0;
    out_.push_back({lhs.text, lhs.text.substr(0, dot), lhs.text.substr(dot + 1), op.text, number,
                    std::move(rhs), lhs.pos});
    auto n = std::make_shared<node>();
    n->index = out_.size() - 1;
    return n;
  }

  /// The value after `op`: a number, or (literals::any) a string or true / false, which only
  /// == and != compare.
  value literal(const token& op) {
    const auto& v = next();
    if (v.kind == token::number)
      return std::strtod(v.text.c_str(), nullptr);
    const bool flag = v.kind == token::name && (v.text == "true" || v.text == "false");
    if (allowed_ == literals::numbers || (v.kind != token::string && !flag))
      throw syntax_error{v.pos, allowed_ == literals::numbers
                                  ? fmt::format("expected a number after '{}'", op.text)
                                  : fmt::format("expected a number, a quoted string, true or "
                                                "false after '{}'",
                                                op.text)};
    if (op.text != "==" && op.text != "!=")
      throw syntax_error{op.pos, fmt::format("'{}' compares numbers; {} compares with == or !=",
                                             op.text, flag ? "a boolean" : "a string")};
    if (flag)
      return v.text == "true";
    return v.text;
  }

  std::vector<token> toks_;
  std::size_t i_ = 0;
  std::vector<comparison>& out_;
  literals allowed_;
};

bool compare(double x, const std::string& op, double y) {
  if (op == "<")
    return x < y;
  if (op == "<=")
    return x <= y;
  if (op == ">")
    return x > y;
  if (op == ">=")
    return x >= y;
  if (op == "==")
    return std::fabs(x - y) < 1e-9;
  return std::fabs(x - y) >= 1e-9;
}

/// `x op y` for values of one kind (strings and booleans: == and != only, checked by the parser).
bool compare(const value& x, const std::string& op, const value& y) {
  if (std::holds_alternative<double>(x))
    return compare(std::get<double>(x), op, std::get<double>(y));
  return (x == y) == (op == "==");
}

bool eval(const node& n, const std::vector<bool>& leaves) {
  switch (n.kind) {
  case node::leaf:
    return leaves[n.index];
  case node::and_:
    return eval(*n.lhs, leaves) && eval(*n.rhs, leaves);
  case node::or_:
    return eval(*n.lhs, leaves) || eval(*n.rhs, leaves);
  }
  return false;
}

sreh::error at(std::size_t pos, std::string_view what) {
  return {errc::invalid_argument, fmt::format("position {}: {}", pos + 1, what)};
}

} // namespace

const char* to_string(value_kind k) {
  switch (k) {
  case value_kind::number:
    return "a number";
  case value_kind::string:
    return "a string";
  case value_kind::boolean:
    return "a boolean";
  }
  return "?";
}

value_kind kind_of(const value& v) {
  return std::holds_alternative<double>(v)        ? value_kind::number
         : std::holds_alternative<std::string>(v) ? value_kind::string
                                                  : value_kind::boolean;
}

expected<expression> parse(std::string_view text, literals allowed) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return at(0, "empty expression");
  expression e;
  e.text_ = std::string{text};
  try {
    e.root_ = parser{tokenize(text), e.comparisons_, allowed}.parse();
  } catch (const syntax_error& err) {
    return at(err.pos, err.what);
  }
  return e;
}

expected<bool> expression::evaluate(const lookup& values) const {
  std::vector<bool> leaves;
  leaves.reserve(comparisons_.size());
  for (const auto& c : comparisons_) {
    if (!std::holds_alternative<double>(c.rhs))
      return at(c.pos, fmt::format("'{}' is a number, compared with {}", c.path,
                                   to_string(kind_of(c.rhs))));
    auto v = values(c.entity, c.metric);
    if (!v)
      return sreh::error{v.error().code, at(c.pos, v.error().message).message};
    leaves.push_back(compare(*v, c.op, c.value));
  }
  return eval(*root_, leaves);
}

expected<bool> expression::evaluate(const value_lookup& values) const {
  std::vector<bool> leaves;
  leaves.reserve(comparisons_.size());
  for (const auto& c : comparisons_) {
    auto v = values(c);
    if (!v) // positioned, with the lookup's own code (unavailable: not observed yet)
      return sreh::error{v.error().code, at(c.pos, v.error().message).message};
    if (kind_of(*v) != kind_of(c.rhs))
      return at(c.pos, fmt::format("'{}' is {}, compared with {}", c.path, to_string(kind_of(*v)),
                                   to_string(kind_of(c.rhs))));
    leaves.push_back(compare(*v, c.op, c.rhs));
  }
  return eval(*root_, leaves);
}

sreh::error expression::check_types(const type_lookup& types) const {
  for (const auto& c : comparisons_) {
    auto k = types(c);
    if (!k)
      return at(c.pos, k.error().message);
    if (*k && **k != kind_of(c.rhs))
      return at(c.pos, fmt::format("'{}' is {}, compared with {}", c.path, to_string(**k),
                                   to_string(kind_of(c.rhs))));
  }
  return {};
}

expected<bool> evaluate(std::string_view text, const lookup& values) {
  auto e = parse(text);
  if (!e)
    return e.error();
  return e->evaluate(values);
}

} // namespace sreh::expr
