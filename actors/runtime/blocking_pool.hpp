#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sreh::actors {

/// A bounded pool of threads for the blocking work of actors, so that nothing blocks CAF's
/// cooperative scheduler: tools that do I/O and their reconcile and check calls (the tool pool,
/// `limits.tool_threads`), store reads (the store pool, `limits.store_threads`). A job hands its
/// result back to its actor as a message (blocking_call.hpp); it never touches actor state.
/// With 0 threads `post` runs the job at once on the caller's thread, for tests on CAF's
/// deterministic scheduler (the job's message is then simply queued).
/// Thread-safe. Jobs must not throw. `stop` runs what is queued, then joins.
class blocking_pool {
 public:
  explicit blocking_pool(std::size_t threads);
  ~blocking_pool();
  blocking_pool(const blocking_pool&) = delete;
  blocking_pool& operator=(const blocking_pool&) = delete;

  void post(std::function<void()> job);
  void stop();

 private:
  void work();

  bool inline_ = false;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

} // namespace sreh::actors
