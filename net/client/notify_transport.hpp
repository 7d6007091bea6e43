#pragma once
// The notifier's transport (actors/notify/transport.hpp) over this layer's clients: HTTP(S)
// POSTs for webhook, Slack and PagerDuty receivers, SMTP for email.

#include "actors/notify/transport.hpp"

namespace sreh::net {

[[nodiscard]] actors::notify_transport_ptr make_notify_transport();

} // namespace sreh::net
