#include "core/base/http_url.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/base/sha256.hpp"

namespace sreh {

namespace {} // namespace

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size())
        return std::nullopt;
      int hi = hex_digit(s[i + 1]);
      int lo = hex_digit(s[i + 2]);
      if (hi < 0 || lo < 0)
        return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string percent_encode(std::string_view s) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 15]);
    }
  }
  return out;
}

expected<http_url> parse_http_url(std::string_view url, bool require_port, bool trim_slash) {
  constexpr std::string_view scheme = "http://";
  auto bad = [](std::string what) { return sreh::error{errc::invalid_argument, std::move(what)}; };
  if (url.rfind(scheme, 0) != 0)
    return bad(require_port ? "expected http://host:port[/prefix]"
                            : "expected http://host[:port][/path]");
  auto rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  auto hostport = rest.substr(0, slash);
  http_url out;
  out.path = std::string{slash == std::string_view::npos ? std::string_view{} : rest.substr(slash)};
  if (trim_slash)
    while (!out.path.empty() && out.path.back() == '/')
      out.path.pop_back();
  auto colon = hostport.rfind(':');
  if (colon == std::string_view::npos) {
    if (require_port)
      return bad("expected http://host:port[/prefix] (the port is required)");
    out.host = std::string{hostport};
  } else {
    auto digits = hostport.substr(colon + 1);
    unsigned port = 0;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (res.ec != std::errc{} || res.ptr != digits.data() + digits.size() || port == 0 ||
        port > 65535)
      return bad(fmt::format("'{}' is not a port between 1 and 65535", digits));
    out.host = std::string{hostport.substr(0, colon)};
    out.port = static_cast<std::uint16_t>(port);
  }
  if (out.host.empty() || out.host.find_first_of(" @?#") != std::string::npos)
    return bad(fmt::format("'{}' is not a host name", out.host));
  return out;
}

expected<client_url> parse_client_url(std::string_view url) {
  client_url u;
  if (url.starts_with("https://")) {
    u.tls = true;
    u.port = 443;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    return sreh::error{errc::invalid_argument, "expected an http:// or https:// URL"};
  }
  auto slash = url.find('/');
  auto authority = url.substr(0, slash);
  if (slash != std::string_view::npos)
    u.target = std::string{url.substr(slash)};
  if (authority.starts_with('[')) { // [v6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return sreh::error{errc::invalid_argument, "unclosed '[' in the URL's host"};
    u.host = std::string{authority.substr(1, close - 1)};
    authority.remove_prefix(close + 1);
  } else {
    auto colon = authority.rfind(':');
    u.host = std::string{authority.substr(0, colon)};
    authority.remove_prefix(colon == std::string_view::npos ? authority.size() : colon);
  }
  if (authority.starts_with(':')) {
    int port = 0;
    for (char c : authority.substr(1)) {
      if (c < '0' || c > '9' || port > 65535)
        return sreh::error{errc::invalid_argument, "the URL's port is not a number"};
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535)
      return sreh::error{errc::invalid_argument, "the URL's port is not between 1 and 65535"};
    u.port = static_cast<std::uint16_t>(port);
  }
  if (u.host.empty())
    return sreh::error{errc::invalid_argument, "the URL has no host"};
  return u;
}

} // namespace sreh
