#include "actors/runtime/service_thread.hpp"

namespace sreh::actors {

void service_thread::start(std::function<void()> body) {
  stopping_ = false;
  {
    std::lock_guard lk{mtx_};
    woken_ = interrupted_ = false;
  }
  thread_ = std::thread{std::move(body)};
}

void service_thread::stop() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard lk{mtx_};
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void service_thread::wake() {
  {
    std::lock_guard lk{mtx_};
    woken_ = true;
  }
  cv_.notify_all();
}

void service_thread::interrupt() {
  {
    std::lock_guard lk{mtx_};
    interrupted_ = true;
  }
  cv_.notify_all();
}

void service_thread::pause(std::chrono::milliseconds d, bool wakeable) {
  std::unique_lock lk{mtx_};
  cv_.wait_for(lk, d, [&] { return stopping_.load() || interrupted_ || (wakeable && woken_); });
  woken_ = interrupted_ = false;
}

} // namespace sreh::actors
