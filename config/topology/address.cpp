#include "config/topology/address.hpp"

#include <fmt/format.h>

#include <charconv>
#include <string_view>

namespace sreh::config {

error parse_listen(const std::string& s, const std::string& field, std::string& host,
                   std::uint16_t& port) {
  auto bad = [&](std::string_view why) {
    return error{errc::invalid_argument, fmt::format("{}: {}, got '{}'", field, why, s)};
  };
  std::string_view h;
  std::string_view p;
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return bad("expected [IPv6]:port");
    h = std::string_view{s}.substr(1, close - 1);
    p = std::string_view{s}.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string::npos)
      return bad("expected host:port");
    h = std::string_view{s}.substr(0, colon);
    p = std::string_view{s}.substr(colon + 1);
    if (h.find(':') != std::string_view::npos)
      return bad("expected host:port (write IPv6 addresses as [::1]:port)");
  }
  if (h.empty())
    return bad("expected host:port with a non-empty host");
  unsigned value = 0;
  auto res = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || res.ec != std::errc{} || res.ptr != p.data() + p.size() || value > 65535)
    return bad("expected a port between 0 and 65535");
  host.assign(h);
  port = static_cast<std::uint16_t>(value);
  return {};
}

bool is_loopback_host(const std::string& host) {
  std::string_view h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']')
    h = h.substr(1, h.size() - 2);
  if (h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1")
    return true;
  // 127.0.0.0/8: four dotted decimal octets, the first 127.
  if (h.rfind("127.", 0) != 0)
    return false;
  int parts = 0;
  std::size_t i = 0;
  while (i <= h.size()) {
    auto dot = h.find('.', i);
    auto part = h.substr(i, dot == std::string_view::npos ? std::string_view::npos : dot - i);
    unsigned v = 0;
    auto res = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || part.size() > 3 || res.ec != std::errc{} ||
        res.ptr != part.data() + part.size() || v > 255)
      return false;
    ++parts;
    if (dot == std::string_view::npos)
      break;
    i = dot + 1;
  }
  return parts == 4;
}

} // namespace sreh::config
