#pragma once
// Shell quoting for the commands sreh prints for a person to paste (the start banner's hints).

#include <cctype>
#include <string>

namespace sreh {

/// `s` as one POSIX shell word: as is when plain, else in single quotes.
[[nodiscard]] inline std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                      c == '.' || c == '/' || c == '=' || c == ':');
  if (plain)
    return s;
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

} // namespace sreh
