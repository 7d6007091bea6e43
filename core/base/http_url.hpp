#pragma once
// `http://host:port[/path]` as given in config and tool arguments (Prometheus, probes), and the
// percent-encoding of URL parts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"

namespace sreh {

struct http_url {
  std::string host;
  std::uint16_t port = 80;
  std::string path; // "" or "/...", without a trailing slash when `trim_slash`
};

/// Parses `url`; the port defaults to 80 unless `require_port`. Errors (invalid_argument) say
/// what is wrong: "expected http://host:port[/path]", "'x' is not a port between 1 and 65535".
[[nodiscard]] expected<http_url> parse_http_url(std::string_view url, bool require_port,
                                                bool trim_slash);

/// An http:// or https:// URL as a client connects to it.
struct client_url {
  bool tls = false;
  std::string host;        // an IPv6 address without its brackets
  std::uint16_t port = 80; // 80 for http, 443 for https unless given
  std::string target = "/";
};

/// Splits an http:// or https:// URL for a client. Errors (invalid_argument) name what is
/// wrong: the scheme, an unclosed '[', a port that is not a number in 1..65535, no host.
[[nodiscard]] expected<client_url> parse_client_url(std::string_view url);

/// Decodes %XX escapes (and '+' as a space when `plus_is_space`). Nullopt on a bad escape.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

/// Encodes everything but unreserved characters (RFC 3986) as %XX.
[[nodiscard]] std::string percent_encode(std::string_view s);

} // namespace sreh
