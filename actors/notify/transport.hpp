#pragma once
// How the notifier sends a message, as the actors layer sees it: an interface implemented in
// net/client (HTTP and SMTP, net/client/notify_transport.hpp) and handed to the notifier when
// the node starts, so this layer never opens a socket itself.

#include <memory>

#include "core/base/status.hpp"
#include "core/notify/render.hpp"
#include "core/notify/settings.hpp"

namespace sreh::actors {

class notify_transport {
 public:
  virtual ~notify_transport() = default;
  /// Sends `m` to `r` and waits for the answer (at most the receiver's timeout). An error names
  /// the receiver's host and what failed: refused, a timeout, an HTTP status other than 2xx
  /// with the start of its body, an SMTP reply. It never contains a secret.
  [[nodiscard]] virtual sreh::error send(const notify::receiver& r, const notify::message& m) = 0;
};

using notify_transport_ptr = std::shared_ptr<notify_transport>;

} // namespace sreh::actors
