#include "core/base/blocking.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/base/logger.hpp"

namespace sreh {

namespace {

thread_local thread_kind this_thread = thread_kind::other;

void default_handler(std::string_view seam, std::string_view call) {
#ifndef NDEBUG
  std::fprintf(stderr,
               "sreh: blocking call on a CAF scheduler thread: %.*s: %.*s\n"
               "  it stalls every actor of the node; run it on the store pool "
               "(actors/runtime/blocking_call.hpp)\n",
               static_cast<int>(seam.size()), seam.data(), static_cast<int>(call.size()),
               call.data());
  std::fflush(stderr);
  std::abort();
#else
  static log_limiter limit{std::chrono::seconds{1}};
  limit.log(*logger("blocking"), spdlog::level::err,
            "blocking call on a CAF scheduler thread (it stalls every actor of the node): {}: {}",
            seam, call);
#endif
}

std::atomic<blocking_violation_handler> handler{&default_handler};

} // namespace

thread_kind this_thread_kind() noexcept {
  return this_thread;
}

void set_this_thread_kind(thread_kind k) noexcept {
  this_thread = k;
}

blocking_violation_handler set_blocking_violation_handler(blocking_violation_handler h) noexcept {
  return handler.exchange(h != nullptr ? h : &default_handler);
}

namespace detail {

void blocking_call_on_scheduler(std::string_view seam, std::string_view call) {
  handler.load()(seam, call);
}

} // namespace detail

} // namespace sreh
