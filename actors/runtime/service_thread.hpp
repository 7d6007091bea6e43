#pragma once
// The thread of a background service that works in rounds (the event relay, the notifier): its
// owner starts and stops it, others wake it (a commit was written), and between rounds it
// pauses until woken, interrupted, stopped or a timeout.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sreh::actors {

/// Concurrency: `start`/`stop` from the owner's thread; `wake`, `interrupt` and `stopping` from
/// any thread; `pause` from the service's own thread only.
class service_thread {
 public:
  service_thread() = default;
  ~service_thread() { stop(); }
  service_thread(const service_thread&) = delete;
  service_thread& operator=(const service_thread&) = delete;

  [[nodiscard]] bool running() const { return thread_.joinable(); }
  /// Runs `body` on a new thread, with `stopping()` false and no wake pending.
  void start(std::function<void()> body);
  /// Asks the thread to stop, ends its pause and waits for it (no-op when not running).
  void stop();

  [[nodiscard]] bool stopping() const { return stopping_.load(); }
  /// The stop flag itself, for calls that poll it while they wait (a publish's acks).
  [[nodiscard]] const std::atomic<bool>& stop_flag() const { return stopping_; }

  /// Ends the current (or the next) pause that is wakeable: new work may be there.
  void wake();
  /// Ends the current (or the next) pause, wakeable or not: the state the service waits on
  /// changed (a connection came up or went down).
  void interrupt();
  /// Sleeps up to `d`, or until `stop`, `interrupt`, or (when `wakeable`) `wake`; clears both.
  void pause(std::chrono::milliseconds d, bool wakeable = true);

 private:
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mtx_;
  std::condition_variable cv_;
  bool woken_ = false;       // guarded by mtx_
  bool interrupted_ = false; // guarded by mtx_
};

} // namespace sreh::actors
