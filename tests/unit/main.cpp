// The one translation unit that instantiates CAF's test runner for the unit tests.
#include <caf/test/unit_test_impl.hpp>
