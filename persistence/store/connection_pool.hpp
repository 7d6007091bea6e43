#pragma once
// A fixed set of connections shared by a store's reads (SQLite's readers, PostgreSQL's pool).

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace sreh::persistence {

/// Connections lent one at a time: `borrow` blocks until one is free, and the lease gives it
/// back when it goes out of scope. Thread-safe.
template <class Connection>
class connection_pool {
 public:
  class lease {
   public:
    lease(connection_pool& p, Connection* c) : pool_(&p), conn_(c) {}
    ~lease() { pool_->give_back(conn_); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_; }

   private:
    connection_pool* pool_;
    Connection* conn_;
  };

  /// Adds a connection to lend (before the first borrow).
  void add(std::unique_ptr<Connection> c) {
    std::lock_guard lk{mtx_};
    free_.push_back(c.get());
    all_.push_back(std::move(c));
  }

  [[nodiscard]] lease borrow() {
    std::unique_lock lk{mtx_};
    cv_.wait(lk, [this] { return !free_.empty(); });
    auto* c = free_.back();
    free_.pop_back();
    return lease{*this, c};
  }

 private:
  void give_back(Connection* c) {
    {
      std::lock_guard lk{mtx_};
      free_.push_back(c);
    }
    cv_.notify_one();
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> all_;
  std::vector<Connection*> free_;
};

} // namespace sreh::persistence
