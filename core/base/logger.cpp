#include "core/base/logger.hpp"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh {

namespace {

constexpr std::array<std::pair<const char*, spdlog::level::level_enum>, 7> levels{{
  {"trace", spdlog::level::trace},
  {"debug", spdlog::level::debug},
  {"info", spdlog::level::info},
  {"warn", spdlog::level::warn},
  {"error", spdlog::level::err},
  {"critical", spdlog::level::critical},
  {"off", spdlog::level::off},
}};

/// Short lowercase level names ("warn", not "warning") for both formats.
const char* level_name(spdlog::level::level_enum l) {
  for (const auto& [name, value] : levels)
    if (value == l)
      return name;
  return "unknown";
}

/// "%*" in the text pattern: the short level name, left-aligned to 5 columns.
class level_flag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    auto s = fmt::format("{:<5}", level_name(msg.level));
    dest.append(s.data(), s.data() + s.size());
  }

  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<level_flag>();
  }
};

/// One JSON object per line: {"ts":..,"level":..,"logger":..,"msg":..}.
class json_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    char buf[32];
    auto us = duration_cast<microseconds>(msg.time.time_since_epoch()).count();
    auto line =
      json::object("ts", format_rfc3339(us, buf), "level", level_name(msg.level), "logger",
                   std::string_view{msg.logger_name.data(), msg.logger_name.size()}, "msg",
                   std::string_view{msg.payload.data(), msg.payload.size()});
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }

  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<json_formatter>();
  }
};

/// The process-wide sinks and level every module logger shares.
struct log_state {
  std::mutex mtx;
  std::vector<spdlog::sink_ptr> sinks;
  spdlog::level::level_enum level = spdlog::level::info;
};

log_state& state() {
  static log_state s;
  return s;
}

std::unique_ptr<spdlog::formatter> make_text_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  f->add_flag<level_flag>('*');
  f->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%*%$ [%n] %v");
  return f;
}

/// Creates the default sinks on first use (text format at info). Caller holds the mutex.
void ensure_sinks(log_state& s) {
  if (!s.sinks.empty())
    return;
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  sink->set_formatter(make_text_formatter());
  s.sinks.push_back(std::move(sink));
}

template <std::size_t N>
std::string join_names(const std::array<const char*, N>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

sreh::error setup_logging(const std::string& level, const std::string& format) {
  const spdlog::level::level_enum* lvl = nullptr;
  for (const auto& entry : levels)
    if (level == entry.first)
      lvl = &entry.second;
  if (lvl == nullptr) {
    std::array<const char*, levels.size()> names{};
    for (std::size_t i = 0; i < levels.size(); ++i)
      names[i] = levels[i].first;
    return {errc::invalid_argument,
            fmt::format("unknown log level '{}' (expected one of {})", level, join_names(names))};
  }
  if (format != "text" && format != "json")
    return {errc::invalid_argument,
            fmt::format("unknown log format '{}' (expected one of text, json)", format)};
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mtx};
  spdlog::sink_ptr sink;
  if (format == "json") {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_formatter(std::make_unique<json_formatter>());
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    sink->set_formatter(make_text_formatter());
  }
  s.sinks = {sink};
  s.level = *lvl;
  // Loggers made before setup switch over too (setup runs at start-up, before any traffic).
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) {
    l->sinks() = s.sinks;
    l->set_level(s.level);
  });
  auto def = std::make_shared<spdlog::logger>("sreh", s.sinks.begin(), s.sinks.end());
  def->set_level(s.level);
  spdlog::set_default_logger(def);
  return {};
}

std::shared_ptr<spdlog::logger> logger(const std::string& module) {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mtx};
  if (auto l = spdlog::get(module))
    return l;
  ensure_sinks(s);
  auto l = std::make_shared<spdlog::logger>(module, s.sinks.begin(), s.sinks.end());
  l->set_level(s.level);
  spdlog::register_logger(l);
  return l;
}

std::uint64_t log_limiter::admit() {
  calls_.fetch_add(1);
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now().time_since_epoch())
                     .count();
  auto last = last_.load();
  if (last >= 0 && now - last < every_)
    return 0;
  if (!last_.compare_exchange_strong(last, now))
    return 0;                                            // another thread writes this line
  return std::max<std::uint64_t>(1, calls_.exchange(0)); // this call and the ones held back
}

} // namespace sreh
