#pragma once
// What the benchmark binaries share: integer options and the process's memory.

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <string_view>

namespace sreh::bench {

/// The integer after option `name` (`--parked 1000`), or `def` when absent.
inline int arg(int argc, char** argv, const char* name, int def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view{argv[i]} == name)
      return std::stoi(argv[i + 1]);
  return def;
}

/// The resident set now, in KiB (/proc/self/statm).
inline long current_rss_kb() {
  std::ifstream f{"/proc/self/statm"};
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// The largest resident set so far, in KiB.
inline long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

} // namespace sreh::bench
