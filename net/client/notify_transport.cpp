#include "net/client/notify_transport.hpp"

#include <fmt/format.h>

#include "core/base/http_url.hpp"
#include "net/client/http_client.hpp"
#include "net/client/smtp_client.hpp"

namespace sreh::net {

namespace {

class transport final : public actors::notify_transport {
 public:
  sreh::error send(const notify::receiver& r, const notify::message& m) override {
    if (r.kind == notify::receiver_kind::email)
      return email(r, m);
    auto u = parse_client_url(r.url);
    if (!u)
      return {errc::invalid_argument,
              fmt::format("receiver {}: url: {}", r.name, u.error().message)};
    auto headers = std::map<std::string, std::string>{m.headers.begin(), m.headers.end()};
    headers["Content-Type"] = m.content_type;
    headers["User-Agent"] = "sreh-notify";
    client_tls tls;
    tls.ca_file = r.ca_file;
    auto res = http_request(u->host, u->port, "POST", u->target, m.body, headers,
                            std::chrono::milliseconds{r.timeout_ms}, u->tls ? &tls : nullptr);
    if (!res)
      return {res.error().code, fmt::format("receiver {}: {}", r.name, res.error().message)};
    if (res->status < 200 || res->status > 299)
      return {res->status >= 500 || res->status == 429 ? errc::unavailable : errc::invalid_argument,
              fmt::format("receiver {}: {}:{}: HTTP {}: {}", r.name, u->host, u->port, res->status,
                          res->body.substr(0, 200))};
    return {};
  }

 private:
  static sreh::error email(const notify::receiver& r, const notify::message& m) {
    smtp_message s;
    s.host = r.smtp_host;
    s.port = r.smtp_port;
    s.starttls = r.starttls;
    s.ca_file = r.ca_file;
    s.username = r.username;
    s.password = r.password;
    s.from = r.from;
    s.to = r.to;
    s.data = m.body;
    s.timeout = std::chrono::milliseconds{r.timeout_ms};
    auto err = smtp_send(s);
    if (err)
      err.message = fmt::format("receiver {}: {}", r.name, err.message);
    return err;
  }
};

} // namespace

actors::notify_transport_ptr make_notify_transport() {
  return std::make_shared<transport>();
}

} // namespace sreh::net
