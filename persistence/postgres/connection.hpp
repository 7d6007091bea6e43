#pragma once
// A PostgreSQL connection that reconnects on demand, and a bounded pool of them. libpqxx
// exceptions stop here: every use returns the store's error values.

#include <pqxx/connection>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/base/blocking.hpp"
#include "core/base/expected.hpp"
#include "persistence/store/connection_pool.hpp"

namespace sreh::persistence::pg {

/// Translates the exception in flight (call only inside a `catch`) into "postgres: <op>: ...".
/// A lost connection (and the connection-class and shutdown sqlstates 08*, 57P*) and a rolled
/// back transaction (serialization failure, deadlock) are `unavailable`: retrying later may
/// succeed. Every other SQL error is `internal` and names its sqlstate. Sets `broken` when the
/// connection cannot be used any more.
[[nodiscard]] sreh::error current_error(std::string_view op, bool& broken);

/// "host:port/dbname" of a connection string, for messages (never the password).
[[nodiscard]] std::string describe_url(const std::string& url);

/// `url` with the network timeouts of every store connection, each added when the string sets
/// none (URL and key=value forms): `connect_timeout=5`, so that connecting to a host that does
/// not answer (a blackholed address, not a refused port) fails in seconds; `tcp_user_timeout=15000`
/// and keepalives (`keepalives_idle=10`, `keepalives_interval=5`, `keepalives_count=3`), so that a
/// connection whose server went away without a word (a partition, a dead host) fails within
/// 15-25 s instead of blocking heartbeats, commits and reads for the kernel's TCP timeouts
/// (minutes to hours).
[[nodiscard]] std::string with_network_timeouts(const std::string& url);

/// A new connection to `url` (with a connect timeout) whose search_path is `schema` (when not
/// empty), never silently reconnected by libpqxx. Throws what libpqxx throws.
[[nodiscard]] std::unique_ptr<pqxx::connection> open_connection(const std::string& url,
                                                                const std::string& schema);

/// One connection with every statement of the store prepared, opened on first use and opened
/// again on the use after it broke. Not thread-safe: its owner serialises the uses.
class connection {
 public:
  /// `session`: SQL run once on each new connection (its settings), after the search_path.
  connection(std::string url, std::string schema, std::string session = {})
    : url_(std::move(url)), schema_(std::move(schema)), session_(std::move(session)) {}

  /// Runs `f(pqxx::connection&)`, which returns an expected<T>; exceptions become errors. A use
  /// from a CAF scheduler thread is reported (core/base/blocking.hpp).
  template <class F>
  auto use(std::string_view op, F&& f) -> std::invoke_result_t<F, pqxx::connection&> {
    check_may_block("postgres", op);
    if (auto err = ensure_open(op))
      return err;
    try {
      return f(*conn_);
    } catch (...) {
      return failed(op);
    }
  }

  /// `use` for statements that may safely run twice (reads, upserts): when the connection
  /// turns out broken (the server restarted since its last use), once more on a new one.
  template <class F>
  auto use_retrying(std::string_view op, F&& f) -> std::invoke_result_t<F, pqxx::connection&> {
    const bool was_open = conn_ != nullptr;
    auto out = use(op, f);
    if (!out && was_open && conn_ == nullptr && out.error().code == errc::unavailable)
      return use(op, f);
    return out;
  }

  /// Connects (when not connected) so that errors show at open time.
  [[nodiscard]] sreh::error ensure_open(std::string_view op);

 private:
  sreh::error failed(std::string_view op);

  std::string url_;
  std::string schema_;
  std::string session_;
  std::unique_ptr<pqxx::connection> conn_;
};

/// A fixed number of connections; `borrow` blocks until one is free. Thread-safe.
class pool : public connection_pool<connection> {
 public:
  pool(const std::string& url, const std::string& schema, int size);
};

} // namespace sreh::persistence::pg
