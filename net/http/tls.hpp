#pragma once
// HTTPS on the front (`tls: {cert_file, key_file, client_ca_file?}`): the server's certificate
// chain and key, TLS 1.2 or later, and with a client CA, mutual TLS (a client without a
// certificate that CA signed is refused in the handshake). `reload` reads the files again (on
// SIGHUP): new connections get the new certificate, open ones keep theirs. Beast-free: the
// context itself is only seen by the server (net/http/tls_context.hpp).

#include <memory>
#include <mutex>
#include <string>

#include "core/base/expected.hpp"

namespace boost::asio::ssl {
class context;
}

namespace sreh::net {

struct tls_files {
  std::string cert_file;      // PEM: the certificate chain, the server's first
  std::string key_file;       // PEM: its private key
  std::string client_ca_file; // PEM: the CAs a client certificate must chain to; "" = none asked
};

class tls_server_context {
 public:
  /// Loads the files; the error names the file and what OpenSSL said.
  [[nodiscard]] static expected<std::shared_ptr<tls_server_context>> load(tls_files files);

  /// Reads the files again; on an error the context in use stays.
  [[nodiscard]] sreh::error reload();
  /// The context new connections use.
  [[nodiscard]] std::shared_ptr<boost::asio::ssl::context> current() const;
  [[nodiscard]] const tls_files& files() const { return files_; }

 private:
  explicit tls_server_context(tls_files f) : files_(std::move(f)) {}
  tls_files files_;
  mutable std::mutex mtx_;
  std::shared_ptr<boost::asio::ssl::context> ctx_;
};

} // namespace sreh::net
