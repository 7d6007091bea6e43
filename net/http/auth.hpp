#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/base/sha256.hpp"

namespace sreh::net {

// -- roles ----------------------------------------------------------------------------------------

/// What a route needs: `open` (no token: /healthz, /readyz) or a minimum role. Roles are ordered
/// viewer < operator < approver < admin.
enum class access { open = 0, viewer = 1, operator_ = 2, approver = 3, admin = 4 };

/// "viewer", "operator", "approver", "admin" ("open" for access::open).
[[nodiscard]] const char* to_string(access a);
/// The role of a name; nullopt for anything but the four role names.
[[nodiscard]] std::optional<access> parse_role(std::string_view s);

/// Who is calling: the token's name and role.
struct identity {
  std::string name;
  access role = access::viewer;
};

// -- hashing --------------------------------------------------------------------------------------

// SHA-256 and hex are core's (core/base/sha256.hpp), the one wrapper of OpenSSL's digest.
using digest = sha256_digest;
using sreh::sha256;
using sreh::sha256_hex;
using sreh::to_hex;
inline std::optional<digest> parse_digest(std::string_view hex) {
  return parse_sha256_hex(hex);
}
/// A fresh token: 32 random bytes from the OS, hex-encoded (64 characters).
[[nodiscard]] expected<std::string> random_token();

// -- the token table ------------------------------------------------------------------------------

/// The tokens a node accepts, as SHA-256 digests only (the tokens themselves are never kept).
///
/// Concurrency: built before the server starts, read-only afterwards (thread-safe reads).
class token_table {
 public:
  /// A table that accepts no token at all (mode tokens with nothing configured).
  token_table() = default;

  /// Auth off (`auth: none`): every request is {"local", admin}.
  [[nodiscard]] static token_table disabled();

  /// Adds a token by its digest. Names are expected unique (config validation checks it).
  void add(std::string name, access role, const digest& d);

  [[nodiscard]] bool enabled() const { return enabled_; }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

  /// The identity of `token`, or nullopt when unknown. Compares the token's digest with every
  /// known digest in constant time and without stopping at a match, so timing tells nothing
  /// about which (or whether a) token matched.
  [[nodiscard]] std::optional<identity> find(std::string_view token) const;

 private:
  struct entry {
    identity who;
    digest hash;
  };
  std::vector<entry> entries_;
  bool enabled_ = true;
};

/// The outcome of checking a request's `Authorization` header against a route's need.
struct auth_result {
  int status = 200;   // 200 ok, 401 (no/malformed/unknown token), 403 (role too low)
  identity who;       // when status is 200
  std::string detail; // for 401/403
};

/// Checks an `Authorization` header value (nullptr when absent) for a route that needs `need`,
/// described as `what` ("POST /v1/goals") in a 403's detail.
[[nodiscard]] auth_result authenticate(const token_table& tokens, const std::string* authorization,
                                       access need, std::string_view what);

// -- the node's token set at start ----------------------------------------------------------------

/// A generated token file of a node: `<data_dir>/<name>.token` (admin, approver).
[[nodiscard]] std::string admin_token_path(const std::string& data_dir,
                                           const std::string& name = "admin");

struct admin_token {
  std::string path;
  digest hash{};
  bool created = false; // generated now (else read from an existing file)
};

/// Reads `<data_dir>/admin.token`, or creates it (32 random bytes hex-encoded, mode 0600,
/// O_CREAT|O_EXCL) when absent. Refuses a file that its group or others may read, or that
/// holds no token. Creates `data_dir` when missing.
[[nodiscard]] expected<admin_token> load_or_create_admin_token(const std::string& data_dir,
                                                               const std::string& name = "admin");

/// The token table of a node: none → disabled; configured tokens → those; no tokens → the
/// generated token files: `admin` (role admin) and `approver` (role approver, so that a
/// laptop install can approve what its admin's runs propose). `admin` receives what was done
/// with the admin file, for the start-up message.
[[nodiscard]] expected<token_table> make_token_table(const config::node_config& cfg,
                                                     std::optional<admin_token>* admin);

} // namespace sreh::net
