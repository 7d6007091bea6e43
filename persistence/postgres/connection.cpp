#include "persistence/postgres/connection.hpp"

#include <fmt/format.h>
#include <pqxx/except>
#include <pqxx/nontransaction>

#include <exception>

#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

namespace {

/// libpq's messages span lines ("...refused\n\tIs the server running...\n"): one line for logs.
std::string one_line(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
  }
  return out;
}

bool retryable_sqlstate(const std::string& s) {
  return s.starts_with("08") || s.starts_with("57P");
}

} // namespace

sreh::error current_error(std::string_view op, bool& broken) {
  try {
    throw;
  } catch (const pqxx::broken_connection& e) {
    broken = true;
    return {errc::unavailable,
            fmt::format("postgres: {}: connection lost: {}", op, one_line(e.what()))};
  } catch (const pqxx::sql_error& e) {
    broken = retryable_sqlstate(e.sqlstate());
    return {broken ? errc::unavailable : errc::internal,
            fmt::format("postgres: {}: {} (sqlstate {})", op, one_line(e.what()), e.sqlstate())};
  } catch (const pqxx::in_doubt_error& e) {
    // The connection died during COMMIT: the outcome is unknown until the next read.
    broken = true;
    return {errc::unavailable,
            fmt::format("postgres: {}: commit outcome unknown: {}", op, one_line(e.what()))};
  } catch (const pqxx::transaction_rollback& e) {
    return {errc::unavailable,
            fmt::format("postgres: {}: rolled back: {}", op, one_line(e.what()))};
  } catch (const std::exception& e) {
    return {errc::internal, fmt::format("postgres: {}: {}", op, one_line(e.what()))};
  } catch (...) {
    return {errc::internal, fmt::format("postgres: {}: unknown exception", op)};
  }
}

std::string describe_url(const std::string& url) {
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (!url.starts_with(scheme))
      continue;
    auto rest = std::string_view{url}.substr(scheme.size());
    rest = rest.substr(0, rest.find('?'));
    if (auto at = rest.rfind('@'); at != std::string_view::npos)
      rest = rest.substr(at + 1);
    return std::string{rest};
  }
  // key=value form: keep everything but the password.
  std::string out;
  std::string_view s{url};
  while (!s.empty()) {
    const auto sp = s.find(' ');
    const auto word = s.substr(0, sp);
    if (!word.starts_with("password=") && !word.empty())
      out.append(out.empty() ? "" : " ").append(word);
    s = sp == std::string_view::npos ? std::string_view{} : s.substr(sp + 1);
  }
  return out;
}

std::string with_network_timeouts(const std::string& url) {
  const bool uri = url.starts_with("postgresql://") || url.starts_with("postgres://");
  std::string out = url;
  for (std::string_view kv : {"connect_timeout=5", "tcp_user_timeout=15000", "keepalives_idle=10",
                              "keepalives_interval=5", "keepalives_count=3"}) {
    const auto key = kv.substr(0, kv.find('=') + 1);
    // A parameter is set when its "key=" follows the start, a space, '?' or '&'.
    bool set = false;
    for (auto at = url.find(key); at != std::string::npos && !set; at = url.find(key, at + 1))
      set = at == 0 || url[at - 1] == ' ' || url[at - 1] == '?' || url[at - 1] == '&';
    if (set)
      continue;
    if (uri)
      out += out.find('?') == std::string::npos ? '?' : '&';
    else if (!out.empty())
      out += ' ';
    out += kv;
  }
  return out;
}

std::unique_ptr<pqxx::connection> open_connection(const std::string& url,
                                                  const std::string& schema) {
  auto c = std::make_unique<pqxx::connection>(with_network_timeouts(url));
  // A broken connection is replaced (with its search_path), never silently revived. The call
  // is deprecated in libpqxx 6 but still the only way to turn reactivation off.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  c->inhibit_reactivation(true);
#pragma GCC diagnostic pop
  if (!schema.empty()) {
    pqxx::nontransaction tx{*c};
    tx.exec0("SET search_path TO " + tx.quote_name(schema));
  }
  return c;
}

sreh::error connection::ensure_open(std::string_view op) {
  if (conn_ && conn_->is_open())
    return {};
  conn_.reset();
  try {
    auto c = open_connection(url_, schema_);
    if (!session_.empty()) {
      pqxx::nontransaction tx{*c};
      tx.exec0(session_);
    }
    prepare_statements(*c);
    conn_ = std::move(c);
    return {};
  } catch (const pqxx::broken_connection& e) {
    // libpq's own reason: refused, unknown host, a TLS handshake or certificate check that
    // failed, a pg_hba rule that rejects us.
    return {errc::unavailable, fmt::format("postgres: {}: cannot connect to {}: {}", op,
                                           describe_url(url_), one_line(e.what()))};
  } catch (...) {
    bool broken = false;
    auto err = current_error(op, broken);
    err.code = errc::unavailable; // the new connection cannot be set up: try again later
    err.message += fmt::format(" ({})", describe_url(url_));
    return err;
  }
}

sreh::error connection::failed(std::string_view op) {
  bool broken = false;
  auto err = current_error(op, broken);
  if (broken) {
    conn_.reset();                                           // the next use connects again
    err.message += fmt::format(" ({})", describe_url(url_)); // which database went away
  }
  return err;
}

// -- pool ----------------------------------------------------------------------------------------

pool::pool(const std::string& url, const std::string& schema, int size) {
  for (int i = 0; i < size; ++i)
    add(std::make_unique<connection>(url, schema));
}

} // namespace sreh::persistence::pg
