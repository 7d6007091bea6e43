#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "sreh/core/status.hpp"

namespace sreh {

/// Sets up logging once per process: level (trace..off) and format ("text": human lines on
/// stderr; "json": one JSON object per line with ts, level, logger, msg). Returns an error
/// naming the bad value.
[[nodiscard]] sreh::error setup_logging(const std::string& level, const std::string& format);

/// The named logger of a module ("kernel", "store", "http", ...), created on first use with
/// the process-wide sinks and level. Thread-safe.
[[nodiscard]] std::shared_ptr<spdlog::logger> logger(const std::string& module);

} // namespace sreh
