#define CAF_SUITE core_fault
#include <caf/test/unit_test.hpp>

#include "core/base/fault.hpp"

using namespace sreh;

CAF_TEST(a point fires once at its nth call) {
  arm_fault("test.once", 3);
  CAF_CHECK(!fault("test.once"));
  CAF_CHECK(!fault("test.other"));
  CAF_CHECK(!fault("test.once"));
  CAF_CHECK(fault("test.once"));
  CAF_CHECK(!fault("test.once"));
  CAF_CHECK(!fault("test.once"));
}

CAF_TEST(a point armed with every fires at its nth call and each one after) {
  arm_fault("test.every", 2, true);
  CAF_CHECK(!fault("test.every"));
  for (int i = 0; i < 5; ++i)
    CAF_CHECK(fault("test.every"));
  arm_fault("test.every", 0); // disarmed
  CAF_CHECK(!fault("test.every"));
}
