// Bearer tokens: roles, SHA-256 digests, the constant-time token table and the check of one
// request's Authorization header.
#include "net/http/auth.hpp"

#include <openssl/crypto.h>

#include <cctype>

#include "core/base/sha256.hpp"

namespace sreh::net {

const char* to_string(access a) {
  switch (a) {
  case access::open:
    return "open";
  case access::viewer:
    return "viewer";
  case access::operator_:
    return "operator";
  case access::approver:
    return "approver";
  case access::admin:
    return "admin";
  }
  return "open";
}

std::optional<access> parse_role(std::string_view s) {
  if (s == "viewer")
    return access::viewer;
  if (s == "operator")
    return access::operator_;
  if (s == "approver")
    return access::approver;
  if (s == "admin")
    return access::admin;
  return std::nullopt;
}

token_table token_table::disabled() {
  token_table t;
  t.enabled_ = false;
  return t;
}

void token_table::add(std::string name, access role, const digest& d) {
  entries_.push_back(entry{identity{std::move(name), role}, d});
}

std::optional<identity> token_table::find(std::string_view token) const {
  auto d = sha256(token);
  const entry* found = nullptr;
  for (const auto& e : entries_) {
    // No early exit: every digest is compared, whatever matched before.
    bool same = CRYPTO_memcmp(d.data(), e.hash.data(), d.size()) == 0;
    if (same && !found)
      found = &e;
  }
  OPENSSL_cleanse(d.data(), d.size());
  if (!found)
    return std::nullopt;
  return found->who;
}

namespace {

/// The token of "Bearer <token>" (scheme case-insensitive, one or more spaces); empty when the
/// value is not of that form or the token has characters outside RFC 6750's b64token.
std::string_view bearer_token(std::string_view v) {
  constexpr std::string_view scheme = "bearer";
  if (v.size() <= scheme.size())
    return {};
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(v[i])) != scheme[i])
      return {};
  v.remove_prefix(scheme.size());
  if (v.front() != ' ')
    return {};
  while (!v.empty() && v.front() == ' ')
    v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ')
    v.remove_suffix(1);
  if (v.empty() || v.size() > 1024)
    return {};
  for (unsigned char c : v)
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
          c == '='))
      return {};
  return v;
}

} // namespace

auth_result authenticate(const token_table& tokens, const std::string* authorization, access need,
                         std::string_view what) {
  auth_result r;
  if (!tokens.enabled()) {
    r.who = identity{"local", access::admin};
    return r;
  }
  if (need == access::open) {
    r.who = identity{"anonymous", access::viewer};
    return r;
  }
  if (!authorization) {
    r.status = 401;
    r.detail = "missing Authorization header: send 'Authorization: Bearer <token>'";
    return r;
  }
  auto token = bearer_token(*authorization);
  if (token.empty()) {
    r.status = 401;
    r.detail = "malformed Authorization header: expected 'Bearer <token>'";
    return r;
  }
  auto who = tokens.find(token);
  if (!who) {
    r.status = 401;
    r.detail = "unknown token";
    return r;
  }
  if (static_cast<int>(who->role) < static_cast<int>(need)) {
    r.status = 403;
    r.detail = std::string("role ") + to_string(who->role) + " may not " + std::string(what) +
               " (needs " + to_string(need) + ")";
    return r;
  }
  r.who = std::move(*who);
  return r;
}

} // namespace sreh::net
