#include "net/http/tls.hpp"

#include <boost/asio/ssl/context.hpp>
#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstdio>

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

expected<std::vector<std::string>> certificate_names(const std::string& pem_file) {
  std::FILE* f = std::fopen(pem_file.c_str(), "r");
  if (f == nullptr)
    return sreh::error{errc::invalid_argument, fmt::format("cannot read '{}'", pem_file)};
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (cert == nullptr)
    return sreh::error{errc::invalid_argument,
                       fmt::format("'{}' holds no PEM certificate", pem_file)};
  std::vector<std::string> out;
  char cn[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
    out.emplace_back(cn);
  auto* sans =
    static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
    if (n->type != GEN_DNS)
      continue;
    std::string dns(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)),
                    static_cast<std::size_t>(ASN1_STRING_length(n->d.dNSName)));
    if (std::find(out.begin(), out.end(), dns) == out.end())
      out.push_back(std::move(dns));
  }
  GENERAL_NAMES_free(sans);
  X509_free(cert);
  return out;
}

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
