#pragma once

#include <string>
#include <utility>

namespace sreh {

/// The project's error vocabulary. Codes map onto HTTP statuses and CLI exit codes.
enum class errc {
  ok = 0,
  invalid_argument, // bad input: malformed JSON, wrong type, missing field (400)
  not_found,        // no such run, route or resource (404)
  conflict,         // state does not allow it: cancel a finished run (409)
  too_large,        // body, header or result over a limit (413)
  unavailable,      // store or dependency away, shutting down (503)
  internal,         // a bug or an unexpected library failure (500)
  deadline,         // timed out (504)
  unauthorized,     // missing or bad credentials (401)
  forbidden,        // role too low (403)
  too_many,         // a count limit is reached: messages on a run (429)
};

[[nodiscard]] const char* to_string(errc c);

/// An error with a code and a message that names what was wrong (field, file, id).
struct error {
  errc code = errc::ok;
  std::string message;
  error() = default;
  error(errc c, std::string m) : code(c), message(std::move(m)) {}
  explicit operator bool() const { return code != errc::ok; }
};

} // namespace sreh
