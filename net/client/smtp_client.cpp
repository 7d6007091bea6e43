// The SMTP client (smtp_client.hpp): async Asio operations driven to completion one at a time
// on a private io_context, like the HTTP client, so every read and write has a deadline.
#include "net/client/smtp_client.hpp"

#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <optional>

#include "net/client/tls_context.hpp"
#include "net/http/beast.hpp"

namespace sreh::net {

namespace {

using tls_over_tcp = asio::ssl::stream<beast::tcp_stream&>;

struct reply_t {
  int code = 0;
  std::string text; // every line, joined by " / "
};

class session {
 public:
  session(const smtp_message& m) : m_(m), where_("smtp " + m.host + ":" + std::to_string(m.port)) {}

  sreh::error run() {
    if (auto err = connect())
      return err;
    if (auto err = expect("greeting", 220))
      return err;
    if (auto err = ehlo())
      return err;
    if (auto err = maybe_starttls())
      return err;
    if (auto err = auth())
      return err;
    if (auto err = command("MAIL FROM:<" + smtp_address(m_.from) + ">", "MAIL FROM", 250))
      return err;
    for (const auto& to : m_.to)
      if (auto err = command("RCPT TO:<" + smtp_address(to) + ">", "RCPT TO", 250, 251))
        return err;
    if (auto err = command("DATA", "DATA", 354))
      return err;
    if (auto err = write(smtp_dot_stuff(m_.data) + ".\r\n"))
      return err;
    if (auto err = expect("the message", 250))
      return err;
    (void)command("QUIT", "QUIT", 221); // the message is accepted: a failed QUIT changes nothing
    return {};
  }

 private:
  template <class Op>
  beast::error_code run_op(Op&& op) {
    beast::error_code result = asio::error::would_block;
    tcp_.expires_after(m_.timeout);
    op([&result](beast::error_code ec) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result;
  }

  sreh::error fail(const std::string& what, const beast::error_code& ec) const {
    const auto msg = ec == beast::error::timeout ? std::string{"timed out"} : ec.message();
    return {ec == beast::error::timeout ? errc::deadline : errc::unavailable,
            where_ + ": " + what + ": " + msg};
  }

  sreh::error connect() {
    tcp::resolver resolver{ioc_};
    beast::error_code ec;
    auto results = resolver.resolve(m_.host, std::to_string(m_.port), ec);
    if (ec)
      return {errc::unavailable, where_ + ": cannot resolve host: " + ec.message()};
    ec = run_op([&](auto done) {
      tcp_.async_connect(results, [done](beast::error_code e, const tcp::endpoint&) { done(e); });
    });
    return ec ? fail("connect", ec) : sreh::error{};
  }

  sreh::error write(const std::string& text) {
    auto ec = run_op([&](auto done) {
      auto h = [done](beast::error_code e, std::size_t) { done(e); };
      if (tls_)
        asio::async_write(*tls_, asio::buffer(text), h);
      else
        asio::async_write(tcp_, asio::buffer(text), h);
    });
    return ec ? fail("write", ec) : sreh::error{};
  }

  /// One reply: lines "NNN-text" up to the last "NNN text".
  expected<reply_t> read_reply(const std::string& what) {
    reply_t r;
    for (int lines = 0; lines < 100; ++lines) {
      std::size_t n = 0;
      auto ec = run_op([&](auto done) {
        auto h = [done, &n](beast::error_code e, std::size_t got) {
          n = got;
          done(e);
        };
        auto buf = asio::dynamic_buffer(in_, 64 * 1024);
        if (tls_)
          asio::async_read_until(*tls_, buf, "\r\n", h);
        else
          asio::async_read_until(tcp_, buf, "\r\n", h);
      });
      if (ec)
        return fail("reading the reply to " + what, ec);
      std::string line = in_.substr(0, n - 2);
      in_.erase(0, n);
      if (line.size() < 3 || line[0] < '2' || line[0] > '5')
        return sreh::error{errc::unavailable,
                           where_ + ": " + what + ": not an SMTP reply: " + line.substr(0, 200)};
      r.code = std::stoi(line.substr(0, 3));
      r.text += (r.text.empty() ? "" : " / ") + line;
      if (line.size() == 3 || line[3] != '-')
        return r;
    }
    return sreh::error{errc::unavailable, where_ + ": " + what + ": a reply of over 100 lines"};
  }

  sreh::error expect(const std::string& what, int want, int also = 0) {
    auto r = read_reply(what);
    if (!r)
      return r.error();
    last_ = r->text;
    if (r->code != want && (also == 0 || r->code != also))
      return {r->code >= 500 ? errc::invalid_argument : errc::unavailable,
              where_ + ": " + what + ": " + r->text.substr(0, 300)};
    return {};
  }

  sreh::error command(const std::string& line, const std::string& what, int want, int also = 0) {
    if (auto err = write(line + "\r\n"))
      return err;
    return expect(what, want, also);
  }

  sreh::error ehlo() { return command("EHLO sreh", "EHLO", 250); }

  sreh::error maybe_starttls() {
    if (m_.starttls == "off")
      return {};
    const bool offered = last_.find("STARTTLS") != std::string::npos;
    if (!offered) {
      if (m_.starttls == "required")
        return {errc::unavailable, where_ + ": the server does not offer STARTTLS (set "
                                            "starttls: opportunistic or off for a local relay)"};
      return {};
    }
    if (auto err = command("STARTTLS", "STARTTLS", 220))
      return err;
    client_tls t;
    t.ca_file = m_.ca_file;
    auto ctx = client_tls_context(m_.host, t);
    if (!ctx)
      return ctx.error();
    ctx_ = std::move(*ctx);
    tls_.emplace(tcp_, *ctx_);
    beast::error_code ec;
    if (asio::ip::make_address(m_.host, ec); ec)
      SSL_set_tlsext_host_name(tls_->native_handle(), m_.host.c_str());
    ec = run_op([&](auto done) {
      tls_->async_handshake(asio::ssl::stream_base::client,
                            [done](beast::error_code e) { done(e); });
    });
    if (ec)
      return fail("TLS handshake", ec);
    return ehlo(); // RFC 3207: the session starts over
  }

  sreh::error auth() {
    if (m_.username.empty())
      return {};
    if (!tls_ && m_.starttls != "off")
      return {errc::unavailable, where_ + ": will not send the password without TLS"};
    std::string plain;
    plain += '\0';
    plain += m_.username;
    plain += '\0';
    plain += m_.password;
    std::string b64(4 * ((plain.size() + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                                  reinterpret_cast<const unsigned char*>(plain.data()),
                                  static_cast<int>(plain.size()));
    b64.resize(static_cast<std::size_t>(n));
    return command("AUTH PLAIN " + b64, "AUTH", 235);
  }

  const smtp_message& m_;
  std::string where_;
  asio::io_context ioc_;
  beast::tcp_stream tcp_{ioc_};
  std::shared_ptr<asio::ssl::context> ctx_; // before tls_: outlives it
  std::optional<tls_over_tcp> tls_;
  std::string in_;
  std::string last_; // the last reply's text (EHLO's extensions)
};

} // namespace

std::string smtp_address(const std::string& mailbox) {
  auto open = mailbox.find('<');
  auto close = mailbox.rfind('>');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return mailbox;
  return mailbox.substr(open + 1, close - open - 1);
}

std::string smtp_dot_stuff(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  bool line_start = true;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    if (line_start && c == '.')
      out += '.';
    if (c == '\n' && (i == 0 || data[i - 1] != '\r'))
      out += '\r';
    out += c;
    line_start = c == '\n';
  }
  if (!out.ends_with("\r\n"))
    out += "\r\n";
  return out;
}

sreh::error smtp_send(const smtp_message& m) {
  if (m.to.empty())
    return {errc::invalid_argument, "smtp: no recipients"};
  auto bad = [](const std::string& a) { return a.find_first_of("\r\n<>") != std::string::npos; };
  if (bad(smtp_address(m.from)) ||
      std::any_of(m.to.begin(), m.to.end(), [&](const auto& a) { return bad(smtp_address(a)); }))
    return {errc::invalid_argument, "smtp: an address with a line break or an angle bracket"};
  try {
    session s{m};
    return s.run();
  } catch (const std::exception& e) {
    return {errc::unavailable, "smtp " + m.host + ":" + std::to_string(m.port) + ": " + e.what()};
  }
}

} // namespace sreh::net
