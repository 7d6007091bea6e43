#pragma once
// The TLS context of a client connection (HTTPS, SMTP's STARTTLS): TLS 1.2 or later, the
// server verified against a CA file (else the system's) and the host name, and a client
// certificate when one is given. Internal to net/client.

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

#include "core/base/expected.hpp"
#include "net/client/http_client.hpp"

namespace sreh::net {

[[nodiscard]] expected<std::shared_ptr<boost::asio::ssl::context>>
client_tls_context(const std::string& host, const client_tls& tls);

} // namespace sreh::net
