// `sreh audit verify`: the command-line face of persistence's verify_audit_chain (SQLite) and
// verify_postgres_audit_chain.

#include "app/serve/audit_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "app/serve/store_target.hpp"
#include "persistence/postgres/audit_verify.hpp"
#include "persistence/sqlite/audit_verify.hpp"

namespace sreh::app {

namespace {

constexpr const char* audit_usage =
  "usage: sreh audit verify [--config FILE] [--node-id ID] [--data-dir DIR] | --db FILE\n";
/// Below this many entries a verification is quick enough to print no progress.
constexpr std::int64_t progress_threshold = 100'000;

/// The store named by the options, or nullopt after an error (already printed).
std::optional<store_target> parse_audit_args(int argc, char** argv) {
  store_args args;
  for (int i = 1; i < argc; ++i) {
    std::string error;
    if (take_store_option(argc, argv, i, args, error) && error.empty())
      continue;
    std::fprintf(stderr, "sreh audit verify: %s\n%s",
                 error.empty() ? fmt::format("unknown option '{}'", argv[i]).c_str()
                               : error.c_str(),
                 audit_usage);
    return std::nullopt;
  }
  auto target = resolve_store(args);
  if (!target) {
    std::fprintf(stderr, "sreh audit verify: %s\n", target.error().message.c_str());
    return std::nullopt;
  }
  return std::move(*target);
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

int verify_store(const store_target& target) {
  const auto start = std::chrono::steady_clock::now();
  progress_printer printer;
  const persistence::audit_progress progress = [&printer](std::int64_t done, std::int64_t total) {
    printer(done, total);
  };
  auto report = target.store.kind == "postgres"
                  ? persistence::verify_postgres_audit_chain(target.store.url, {}, progress)
                  : persistence::verify_audit_chain(target.store.path, progress);
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
  const auto target = parse_audit_args(argc, argv);
  if (!target)
    return 2;
  return verify_store(*target);
}

} // namespace sreh::app
