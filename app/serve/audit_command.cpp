// `sreh audit verify`: the command-line face of persistence's verify_audit_chain.

#include "app/cli/audit_command.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "persistence/sqlite/audit_verify.hpp"

namespace sreh::app {

namespace {

constexpr const char* audit_usage = "usage: sreh audit verify [--data-dir DIR | --db FILE]\n";
constexpr const char* default_db = "./data/sreh.db";
/// Below this many entries a verification is quick enough to print no progress.
constexpr std::int64_t progress_threshold = 100'000;

/// The database file named by the options, or "" after a usage error (already printed).
std::string parse_args(int argc, char** argv) {
  std::string data_dir;
  std::string db;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if ((a == "--data-dir" || a == "--db") && i + 1 < argc) {
      (a == "--db" ? db : data_dir) = argv[++i];
      continue;
    }
    std::fprintf(stderr, "sreh audit verify: %s '%s'\n%s",
                 a == "--data-dir" || a == "--db" ? "missing value for" : "unknown option", argv[i],
                 audit_usage);
    return {};
  }
  if (!data_dir.empty() && !db.empty()) {
    std::fprintf(stderr, "sreh audit verify: give --data-dir or --db, not both\n%s", audit_usage);
    return {};
  }
  if (!db.empty())
    return db;
  if (!data_dir.empty())
    return data_dir == "/" ? std::string{"/sreh.db"} : data_dir + "/sreh.db";
  return default_db;
}

/// Prints "verified N/M (P%)" each time another tenth of a long log is done.
class progress_printer {
 public:
  void operator()(std::int64_t done, std::int64_t total) {
    if (total < progress_threshold)
      return;
    const auto tenth = done * 10 / total;
    if (tenth <= printed_ || done == total)
      return;
    printed_ = tenth;
    std::fprintf(stderr, "verified %lld/%lld entries (%lld%%)\n", static_cast<long long>(done),
                 static_cast<long long>(total), static_cast<long long>(tenth * 10));
  }

 private:
  std::int64_t printed_ = 0;
};

int verify(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  progress_printer printer;
  auto report = persistence::verify_audit_chain(
    path, [&printer](std::int64_t done, std::int64_t total) { printer(done, total); });
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  if (!report) {
    std::fprintf(stderr, "sreh audit verify: %s\n", report.error().message.c_str());
    return 1;
  }
  if (report->ok()) {
    std::printf("audit log ok: %lld entries, last hash %s (%.2f s)\n",
                static_cast<long long>(report->entries), report->last_hash.c_str(), took.count());
    return 0;
  }
  const auto id = report->bad_id.empty() ? std::string{"id unknown"} : report->bad_id;
  std::printf("audit log BROKEN at event %lld (%s): %s — %s\n",
              static_cast<long long>(report->bad_seq), id.c_str(), to_string(report->fault),
              report->message.c_str());
  std::printf("%lld entries before it are intact; last good hash %s\n",
              static_cast<long long>(report->entries), report->last_hash.c_str());
  return 1;
}

} // namespace

int audit_command(int argc, char** argv) {
  if (argc < 1) {
    std::fprintf(stderr, "sreh audit: missing subcommand\n%s", audit_usage);
    return 2;
  }
  if (std::string_view{argv[0]} != "verify") {
    std::fprintf(stderr, "sreh audit: unknown subcommand '%s'\n%s", argv[0], audit_usage);
    return 2;
  }
  const auto path = parse_args(argc, argv);
  if (path.empty())
    return 2;
  return verify(path);
}

} // namespace sreh::app
