#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.hpp"

namespace sreh {

/// Sets up logging once per process: level (trace..off) and format ("text": human lines on
/// stderr; "json": one JSON object per line with ts, level, logger, msg). Returns an error
/// naming the bad value.
[[nodiscard]] sreh::error setup_logging(const std::string& level, const std::string& format);

/// The named logger of a module ("kernel", "store", "http", ...), created on first use with
/// the process-wide sinks and level. Thread-safe.
[[nodiscard]] std::shared_ptr<spdlog::logger> logger(const std::string& module);

/// Lets one line through per `every` and counts the ones it holds back, for errors that repeat
/// while something is away (the database, NATS). Thread-safe.
class log_limiter {
 public:
  explicit log_limiter(std::chrono::milliseconds every) : every_(every.count()) {}
  /// When a line may be written now: how many calls since the last line written (this one
  /// included); 0 when it must be held back.
  [[nodiscard]] std::uint64_t admit();
  /// Lets the next line through at once (after a recovery, the next failure is news).
  void reset() { last_.store(-1); }

  /// Writes the line when admitted, with "(N similar lines held back)" when it held some back.
  template <class... Args>
  void log(spdlog::logger& to, spdlog::level::level_enum level, fmt::format_string<Args...> f,
           Args&&... args) {
    const auto n = admit();
    if (n == 0)
      return;
    auto msg = fmt::format(f, std::forward<Args>(args)...);
    if (n > 1)
      msg += fmt::format(" ({} similar lines held back)", n - 1);
    to.log(level, "{}", msg);
  }

 private:
  std::int64_t every_;
  std::atomic<std::int64_t> last_{-1};
  std::atomic<std::uint64_t> calls_{0};
};

} // namespace sreh
