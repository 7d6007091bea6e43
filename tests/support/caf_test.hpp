#pragma once
// Include this (after `#define CAF_SUITE name`) instead of caf/test/dsl.hpp: it works around
// CAF 0.17.6's dsl.hpp using an undefined FAIL macro.
#define FAIL(msg) CAF_FAIL(msg)
#include <caf/test/dsl.hpp>
