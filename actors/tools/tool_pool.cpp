#include "actors/tools/tool_pool.hpp"

namespace sreh::actors {

tool_pool::tool_pool(std::size_t threads) {
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { work(); });
}

tool_pool::~tool_pool() {
  stop();
}

void tool_pool::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock{mtx_};
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void tool_pool::stop() {
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

void tool_pool::work() {
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
