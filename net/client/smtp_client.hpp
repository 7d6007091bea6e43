#pragma once
// A small SMTP client (RFC 5321) for notifications: EHLO, STARTTLS (RFC 3207), AUTH PLAIN
// (RFC 4954), one message to its recipients, QUIT. Synchronous, every step under a timeout.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.hpp"

namespace sreh::net {

struct smtp_message {
  std::string host;
  std::uint16_t port = 587;
  std::string starttls = "required"; // required | opportunistic | off
  std::string ca_file;               // verify the server's certificate ("" = the system's CAs)
  std::string username, password;    // AUTH PLAIN (only over TLS, unless starttls is off)
  std::string from;                  // "a@b" or "Name <a@b>"
  std::vector<std::string> to;
  std::string data; // the message: headers, an empty line, the body (CRLF line ends)
  std::chrono::milliseconds timeout{10'000};
};

/// Sends `m`. Errors name host:port, the command and the server's reply ("smtp mail:25: RCPT
/// TO: 550 no such user"); the password never appears in one.
[[nodiscard]] sreh::error smtp_send(const smtp_message& m);

/// The address of "Name <a@b>" (a@b); the text itself when it has no angle brackets.
[[nodiscard]] std::string smtp_address(const std::string& mailbox);

/// `data` ready for DATA: lines starting with '.' get another, bare LFs become CRLF, and the
/// text ends with CRLF.
[[nodiscard]] std::string smtp_dot_stuff(const std::string& data);

} // namespace sreh::net
