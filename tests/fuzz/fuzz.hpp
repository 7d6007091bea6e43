#pragma once
// Shared by the fuzz targets: each defines `fuzz_one(std::string_view input)`, which must never
// crash, hang or leak for any input, and aborts (SREH_FUZZ_CHECK) when a property it checks does
// not hold. Built twice: with libFuzzer (the `fuzz` preset, scripts/fuzz.sh) and, in every other
// build, as a replay driver that runs the checked-in corpus and regression inputs (CTest
// `fuzz.replay.<target>`).

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define SREH_FUZZ_CHECK(cond)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);       \
      std::abort();                                                                                \
    }                                                                                              \
  } while (false)

void fuzz_one(std::string_view input);
