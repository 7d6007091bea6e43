#include "actors/runtime/blocking_pool.hpp"

#include "core/base/blocking.hpp"

namespace sreh::actors {

blocking_pool::blocking_pool(std::size_t threads) : inline_(threads == 0) {
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { work(); });
}

blocking_pool::~blocking_pool() {
  stop();
}

void blocking_pool::post(std::function<void()> job) {
  if (inline_) {
    // The caller may be the test thread playing a scheduler worker: the job plays a pool thread.
    scoped_thread_kind pool_thread{thread_kind::other};
    return job();
  }
  {
    std::lock_guard<std::mutex> lock{mtx_};
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void blocking_pool::stop() {
  {
    std::lock_guard<std::mutex> lock{mtx_};
    if (stopping_ && threads_.empty())
      return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable())
      t.join();
  threads_.clear();
}

void blocking_pool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock{mtx_};
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty())
        return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

} // namespace sreh::actors
