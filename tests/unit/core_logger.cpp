#define CAF_SUITE core_logger
#include <caf/test/unit_test.hpp>

#include <string>

#include "sreh/core/logger.hpp"

using namespace sreh;

CAF_TEST(bad level and format name the value) {
  auto e = setup_logging("loud", "text");
  CAF_CHECK(e.code == errc::invalid_argument);
  CAF_CHECK_EQUAL(e.message, std::string{"unknown log level 'loud' (expected one of trace, debug, "
                                         "info, warn, error, critical, off)"});
  auto f = setup_logging("info", "xml");
  CAF_CHECK(f.code == errc::invalid_argument);
  CAF_CHECK_EQUAL(f.message,
                  std::string{"unknown log format 'xml' (expected one of text, json)"});
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
  a->info("text line");                                  // visible in the test output
  a->debug("not shown");
  CAF_CHECK(!setup_logging("off", "text"));
  CAF_CHECK(a->level() == spdlog::level::off);
}
