#pragma once
// Which threads may block. CAF's scheduler workers run every actor of a node in turn, so one
// blocking call there (a store read, a subprocess) stalls every actor on the node. The actor
// system marks its workers (actors/runtime/thread_marks.hpp); the seams where a call blocks (the
// store's backends) check the mark and report a call made on a worker.

#include <string_view>

namespace sreh {

/// What the calling thread is, as far as blocking goes.
enum class thread_kind {
  other,     // may block: HTTP handler pool, blocking pools, the writer, main, tests
  scheduler, // must not block: a CAF scheduler worker (or its clock thread)
};

/// The calling thread's kind (`other` until set).
[[nodiscard]] thread_kind this_thread_kind() noexcept;

/// Sets the calling thread's kind, for the rest of its life or until set again.
void set_this_thread_kind(thread_kind k) noexcept;

/// Within its scope the calling thread counts as `k`; the previous kind comes back at the end.
/// The deterministic tests' thread plays a scheduler worker while an actor runs on it, and a job
/// that a blocking pool runs inline (tests) plays a pool thread.
class scoped_thread_kind {
 public:
  explicit scoped_thread_kind(thread_kind k) noexcept : before_(this_thread_kind()) {
    set_this_thread_kind(k);
  }
  ~scoped_thread_kind() { set_this_thread_kind(before_); }
  scoped_thread_kind(const scoped_thread_kind&) = delete;
  scoped_thread_kind& operator=(const scoped_thread_kind&) = delete;

 private:
  thread_kind before_;
};

/// What happens to a blocking call made on a scheduler thread: `seam` names where it blocks
/// ("sqlite", "postgres"), `call` what was called.
using blocking_violation_handler = void (*)(std::string_view seam, std::string_view call);

/// Installs `h` (nullptr: the default) and returns the one it replaces. The default, in debug
/// builds, prints the call and aborts: the whole test suite runs under it. With NDEBUG it logs an
/// error (at most one line a second) and lets the call go on: a stalled node beats a dead one.
/// For tests of the check itself; not thread-safe against concurrent checks.
blocking_violation_handler set_blocking_violation_handler(blocking_violation_handler h) noexcept;

namespace detail {
void blocking_call_on_scheduler(std::string_view seam, std::string_view call);
} // namespace detail

/// The check at a seam where a call blocks (every store call, in each backend): reports the call
/// when the calling thread is a scheduler worker. One thread-local read otherwise.
inline void check_may_block(std::string_view seam, std::string_view call) {
  if (this_thread_kind() == thread_kind::scheduler) [[unlikely]]
    detail::blocking_call_on_scheduler(seam, call);
}

} // namespace sreh
