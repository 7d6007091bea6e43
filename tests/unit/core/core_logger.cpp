#define CAF_SUITE core_logger
#include <caf/test/unit_test.hpp>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <sstream>
#include <string>

#include "core/base/logger.hpp"

using namespace sreh;

CAF_TEST(bad level and format name the value) {
  auto e = setup_logging("loud", "text");
  CAF_CHECK(e.code == errc::invalid_argument);
  CAF_CHECK_EQUAL(e.message, std::string{"unknown log level 'loud' (expected one of trace, debug, "
                                         "info, warn, error, critical, off)"});
  auto f = setup_logging("info", "xml");
  CAF_CHECK(f.code == errc::invalid_argument);
  CAF_CHECK_EQUAL(f.message, std::string{"unknown log format 'xml' (expected one of text, json)"});
}

CAF_TEST(named loggers are shared and follow the level) {
  auto a = logger("test_module");
  auto b = logger("test_module");
  CAF_CHECK(a == b);
  CAF_CHECK_EQUAL(a->name(), std::string{"test_module"});
  CAF_CHECK(!setup_logging("error", "json"));
  CAF_CHECK(a->level() == spdlog::level::err);
  CAF_CHECK(logger("other_module")->level() == spdlog::level::err);
  a->error("json line with \"quotes\" and\nnewline"); // visible in the test output
  CAF_CHECK(!setup_logging("info", "text"));
  a->info("text line"); // visible in the test output
  a->debug("not shown");
  CAF_CHECK(!setup_logging("off", "text"));
  CAF_CHECK(a->level() == spdlog::level::off);
}

CAF_TEST(a log limiter lets one line through per interval and counts the rest) {
  log_limiter hour{std::chrono::hours{1}};
  CAF_CHECK_EQUAL(hour.admit(), 1u); // the first line goes through
  CAF_CHECK_EQUAL(hour.admit(), 0u); // held back within the interval
  CAF_CHECK_EQUAL(hour.admit(), 0u);
  hour.reset();
  CAF_CHECK_EQUAL(hour.admit(), 3u); // this one and the two held back
  CAF_CHECK_EQUAL(hour.admit(), 0u);
  log_limiter none{std::chrono::milliseconds{0}};
  CAF_CHECK_EQUAL(none.admit(), 1u);
  CAF_CHECK_EQUAL(none.admit(), 1u); // no interval: every line goes through
  // log() writes the admitted line with the count of the held-back ones.
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  spdlog::logger to{"limited", sink};
  to.set_pattern("%v");
  log_limiter limited{std::chrono::hours{1}};
  limited.log(to, spdlog::level::warn, "store away: {}", 1);
  limited.log(to, spdlog::level::warn, "store away: {}", 2);
  limited.reset();
  limited.log(to, spdlog::level::warn, "store away: {}", 3);
  CAF_CHECK_EQUAL(captured.str(), "store away: 1\nstore away: 3 (1 similar lines held back)\n");
}
