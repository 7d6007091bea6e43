// The relay's cluster-wide lock: a session advisory lock on a dedicated connection, which also
// LISTENs on `sreh_events` (every commit that writes events notifies it, pg_commit.cpp).
#include <fmt/format.h>
#include <pqxx/pqxx>

#include <thread>

#include "persistence/postgres/connection.hpp"
#include "persistence/postgres/postgres_store.hpp"

namespace sreh::persistence {

namespace {

/// Counts the notifications of the store's schema.
class commit_listener final : public pqxx::notification_receiver {
 public:
  commit_listener(pqxx::connection_base& c, std::string schema)
    : pqxx::notification_receiver(c, "sreh_events"), schema_(std::move(schema)) {}
  void operator()(const std::string& payload, int) override {
    if (payload == schema_)
      ++count;
  }
  std::uint64_t count = 0;

 private:
  std::string schema_;
};

class pg_relay_lock final : public relay_lock {
 public:
  pg_relay_lock(postgres_options opts, std::string name)
    : opts_(std::move(opts)), name_(std::move(name)) {}
  ~pg_relay_lock() override { release(); }

  expected<bool> acquire() override {
    try {
      if (!conn_)
        connect();
      pqxx::nontransaction tx{*conn_};
      if (held_) {
        tx.exec("SELECT 1"); // the session is alive, so it still holds the lock
        return true;
      }
      held_ = tx.exec_params1("SELECT pg_try_advisory_lock(21071, hashtext($1))",
                              schema_ + ":relay:" + name_)[0]
                .as<bool>();
      return held_;
    } catch (...) {
      bool broken = false;
      auto err = pg::current_error("relay lock", broken);
      drop();
      err.code = errc::unavailable;
      err.message += fmt::format(" ({})", pg::describe_url(opts_.url));
      return err;
    }
  }

  bool wait_for_commit(std::chrono::milliseconds d) override {
    if (!conn_ || !listener_) {
      std::this_thread::sleep_for(d);
      return false;
    }
    try {
      const auto before = listener_->count;
      conn_->get_notifs();
      if (listener_->count == before) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
        conn_->await_notification(us / 1'000'000, us % 1'000'000);
      }
      return listener_->count != before;
    } catch (...) {
      drop(); // the next acquire reconnects (and finds out whether the lock is still ours)
      return false;
    }
  }

  void release() override {
    // A clean stop unlocks at once (a lost session frees the lock too, once the server notices).
    if (held_ && conn_) {
      try {
        pqxx::nontransaction tx{*conn_};
        tx.exec_params("SELECT pg_advisory_unlock(21071, hashtext($1))",
                       schema_ + ":relay:" + name_);
      } catch (...) {
        // closing the session below frees it anyway
      }
    }
    drop();
  }

 private:
  void connect() {
    conn_ = pg::open_connection(opts_.url, opts_.schema);
    pqxx::nontransaction tx{*conn_};
    schema_ = tx.exec1("SELECT current_schema()")[0].as<std::string>();
    listener_ = std::make_unique<commit_listener>(*conn_, schema_);
  }

  void drop() {
    held_ = false;
    listener_.reset();
    conn_.reset(); // closing the session releases the advisory lock
  }

  postgres_options opts_;
  std::string name_;
  std::string schema_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<commit_listener> listener_;
  bool held_ = false;
};

} // namespace

std::unique_ptr<relay_lock> make_postgres_relay_lock(const postgres_options& opts,
                                                     std::string name) {
  return std::make_unique<pg_relay_lock>(opts, std::move(name));
}

} // namespace sreh::persistence
