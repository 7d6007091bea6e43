#include "core/base/status.hpp"

namespace sreh {

const char* to_string(errc c) {
  switch (c) {
  case errc::ok:
    return "ok";
  case errc::invalid_argument:
    return "invalid_argument";
  case errc::not_found:
    return "not_found";
  case errc::conflict:
    return "conflict";
  case errc::too_large:
    return "too_large";
  case errc::unavailable:
    return "unavailable";
  case errc::internal:
    return "internal";
  case errc::deadline:
    return "deadline";
  case errc::unauthorized:
    return "unauthorized";
  case errc::forbidden:
    return "forbidden";
  case errc::too_many:
    return "too_many";
  }
  return "unknown";
}

} // namespace sreh
