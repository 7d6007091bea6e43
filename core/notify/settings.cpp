#include "core/notify/settings.hpp"

namespace sreh::notify {

const char* to_string(receiver_kind k) {
  switch (k) {
  case receiver_kind::webhook:
    return "webhook";
  case receiver_kind::slack:
    return "slack";
  case receiver_kind::pagerduty:
    return "pagerduty";
  case receiver_kind::email:
    return "email";
  }
  return "webhook";
}

const receiver* settings::find(std::string_view name) const {
  for (const auto& r : receivers)
    if (r.name == name)
      return &r;
  return nullptr;
}

} // namespace sreh::notify
