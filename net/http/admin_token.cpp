// The node's token set at start: configured digests, or the generated <data_dir>/admin.token.
#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "net/http/auth.hpp"

namespace sreh::net {

namespace {

sreh::error io_error(const std::string& what, const std::string& path, int code) {
  return {errc::unavailable, what + " " + path + ": " + std::strerror(code)};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Creates the file with a fresh token; `exists` is set when another process (or an earlier
/// start) made it first.
expected<admin_token> create_token_file(const std::string& path, bool& exists) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      exists = true;
      return sreh::error{errc::conflict, "exists"};
    }
    return io_error("cannot create", path, errno);
  }
  auto token = random_token();
  if (!token) {
    ::close(fd);
    ::unlink(path.c_str());
    return token.error();
  }
  bool ok = write_all(fd, *token + "\n") && ::fsync(fd) == 0;
  int code = errno;
  ::close(fd);
  admin_token out{path, sha256(*token), true};
  OPENSSL_cleanse(token->data(), token->size());
  if (!ok) {
    ::unlink(path.c_str());
    return io_error("cannot write", path, code);
  }
  return out;
}

expected<admin_token> read_token_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return io_error("cannot read", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int code = errno;
    ::close(fd);
    return io_error("cannot stat", path, code);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return sreh::error{errc::invalid_argument, path + " is not a regular file"};
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return sreh::error{errc::invalid_argument, path + " has mode " + mode +
                                                 ": group or others may read it; run `chmod 600 " +
                                                 path + "`"};
  }
  std::string text(4096, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    auto n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int code = errno;
      ::close(fd);
      return io_error("cannot read", path, code);
    }
    if (n == 0)
      break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  std::string_view token(text.data(), got);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
    token.remove_suffix(1);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front())))
    token.remove_prefix(1);
  if (token.empty() || token.find_first_of(" \t\r\n") != std::string_view::npos) {
    OPENSSL_cleanse(text.data(), text.size());
    return sreh::error{errc::invalid_argument,
                       path + " holds no token (expected one line; delete it to have a new one "
                              "generated)"};
  }
  admin_token out{path, sha256(token), false};
  OPENSSL_cleanse(text.data(), text.size());
  return out;
}

} // namespace

expected<std::string> random_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    auto n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return sreh::error{errc::internal, std::string("getrandom: ") + std::strerror(errno)};
    got += static_cast<std::size_t>(n);
  }
  auto hex = to_hex(bytes, sizeof bytes);
  OPENSSL_cleanse(bytes, sizeof bytes);
  return hex;
}

std::string admin_token_path(const std::string& data_dir, const std::string& name) {
  auto dir = data_dir;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  return (dir == "/" ? "/" : dir + "/") + name + ".token";
}

expected<admin_token> load_or_create_admin_token(const std::string& data_dir,
                                                 const std::string& name) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec)
    return sreh::error{errc::invalid_argument,
                       "cannot create data dir '" + data_dir + "': " + ec.message()};
  auto path = admin_token_path(data_dir, name);
  bool exists = false;
  auto created = create_token_file(path, exists);
  if (created || !exists)
    return created;
  return read_token_file(path);
}

expected<token_table> make_token_table(const config::node_config& cfg,
                                       std::optional<admin_token>* admin) {
  if (cfg.auth.mode == "none")
    return token_table::disabled();
  token_table t;
  for (const auto& tok : cfg.auth.tokens) {
    auto role = parse_role(tok.role);
    auto d = parse_digest(tok.sha256);
    if (!role || !d)
      return sreh::error{errc::invalid_argument,
                         "auth.tokens: token '" + tok.name + "' has a bad role or sha256"};
    t.add(tok.name, *role, *d);
  }
  if (!cfg.auth.tokens.empty())
    return t;
  // A laptop install gets two identities, so that separation of duties works out of the box:
  // "admin" submits (and administers), "approver" approves what the admin's runs propose.
  auto approver = load_or_create_admin_token(cfg.data_dir, "approver");
  if (!approver)
    return approver.error();
  t.add("approver", access::approver, approver->hash);
  auto a = load_or_create_admin_token(cfg.data_dir, "admin");
  if (!a)
    return a.error();
  t.add("admin", access::admin, a->hash);
  if (admin)
    *admin = std::move(*a);
  return t;
}

} // namespace sreh::net
