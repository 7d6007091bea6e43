#define CAF_SUITE core_boxed
#include <caf/test/unit_test.hpp>

#include <optional>
#include <string>

#include "core/base/boxed.hpp"

using namespace sreh;

CAF_TEST(an empty box is a pointer and reads as an empty optional) {
  static_assert(sizeof(boxed<std::string>) == sizeof(void*));
  boxed<std::string> b;
  CAF_CHECK(!b);
  CAF_CHECK_EQUAL(b.value_or("none"), "none");
  b = std::optional<std::string>{};
  CAF_CHECK(!b.has_value());
}

CAF_TEST(a box is assigned and read like an optional) {
  boxed<std::string> b;
  b = std::string{"checkout"};
  CAF_REQUIRE(b);
  CAF_CHECK_EQUAL(*b, "checkout");
  CAF_CHECK_EQUAL(b->size(), 8u);
  b->append("-api");
  CAF_CHECK_EQUAL(b.value_or(""), "checkout-api");
  b.reset();
  CAF_CHECK(!b);
}

CAF_TEST(a copy owns its own value and a move leaves the source empty) {
  boxed<std::string> a = std::string{"payments"};
  boxed<std::string> copy = a;
  copy->append("-db");
  CAF_CHECK_EQUAL(*a, "payments");
  CAF_CHECK_EQUAL(*copy, "payments-db");
  a = copy;
  CAF_CHECK_EQUAL(*a, "payments-db");
  boxed<std::string> moved = std::move(copy);
  CAF_CHECK_EQUAL(*moved, "payments-db");
  CAF_CHECK(!copy); // NOLINT: the moved-from box is empty, by unique_ptr's move
}
