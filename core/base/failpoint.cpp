#include "core/base/failpoint.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

namespace sreh {

namespace {

struct armed_point {
  std::string name;
  std::int64_t n = -1;
};

armed_point load() {
  armed_point p;
  const char* v = std::getenv("SREH_FAILPOINT");
  if (v == nullptr)
    return p;
  std::string s = v;
  auto colon = s.rfind(':');
  if (colon == std::string::npos)
    return p;
  p.name = s.substr(0, colon);
  p.n = std::strtoll(s.c_str() + colon + 1, nullptr, 10);
  return p;
}

} // namespace

void failpoint(std::string_view name, std::int64_t n) {
  static const armed_point armed = load();
  if (armed.n != n || armed.name != name)
    return;
  ::kill(::getpid(), SIGKILL);
  std::_Exit(137); // not reached
}

} // namespace sreh
