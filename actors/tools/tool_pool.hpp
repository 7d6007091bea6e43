#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sreh::actors {

/// A bounded pool of threads for blocking work (tools that do I/O, reconcile calls), so that
/// nothing blocks CAF's cooperative scheduler. Jobs must not throw. `stop` runs what is queued,
/// then joins.
class tool_pool {
 public:
  explicit tool_pool(std::size_t threads);
  ~tool_pool();
  tool_pool(const tool_pool&) = delete;
  tool_pool& operator=(const tool_pool&) = delete;

  void post(std::function<void()> job);
  void stop();

 private:
  void work();

  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

} // namespace sreh::actors
