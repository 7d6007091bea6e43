#pragma once
// Network addresses as the node config and the topology write them.

#include <cstdint>
#include <string>

#include "core/base/expected.hpp"

namespace sreh::config {

/// True for a loopback host: 127.0.0.0/8, ::1 (bare or in brackets), localhost.
[[nodiscard]] bool is_loopback_host(const std::string& host);

/// Splits "host:port" (port 0..65535; host may be "[::1]"). Error names `field`.
[[nodiscard]] sreh::error parse_listen(const std::string& s, const std::string& field,
                                       std::string& host, std::uint16_t& port);

} // namespace sreh::config
