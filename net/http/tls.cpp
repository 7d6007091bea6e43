#include "net/http/tls.hpp"

#include <boost/asio/ssl/context.hpp>
#include <fmt/format.h>

namespace sreh::net {

namespace {

namespace ssl = boost::asio::ssl;

std::string openssl_reason(const boost::system::error_code& ec) {
  auto text = ec.message();
  return text.empty() ? "unknown error" : text;
}

expected<std::shared_ptr<ssl::context>> make(const tls_files& f) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  // TLS 1.2 and 1.3 only.
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                     ssl::context::single_dh_use,
                   ec);
  auto fail = [](const char* field, const std::string& file, const boost::system::error_code& e) {
    return sreh::error{errc::invalid_argument,
                       fmt::format("tls.{}: cannot use '{}': {}", field, file, openssl_reason(e))};
  };
  if (ctx->use_certificate_chain_file(f.cert_file, ec); ec)
    return fail("cert_file", f.cert_file, ec);
  if (ctx->use_private_key_file(f.key_file, ssl::context::pem, ec); ec)
    return fail("key_file", f.key_file, ec);
  if (!f.client_ca_file.empty()) {
    if (ctx->load_verify_file(f.client_ca_file, ec); ec)
      return fail("client_ca_file", f.client_ca_file, ec);
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
  }
  return ctx;
}

} // namespace

expected<std::shared_ptr<tls_server_context>> tls_server_context::load(tls_files files) {
  std::shared_ptr<tls_server_context> out{new tls_server_context(std::move(files))};
  if (auto err = out->reload())
    return err;
  return out;
}

sreh::error tls_server_context::reload() {
  auto ctx = make(files_);
  if (!ctx)
    return ctx.error();
  std::lock_guard lock{mtx_};
  ctx_ = std::move(*ctx);
  return {};
}

std::shared_ptr<ssl::context> tls_server_context::current() const {
  std::lock_guard lock{mtx_};
  return ctx_;
}

} // namespace sreh::net
