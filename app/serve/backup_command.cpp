// `sreh backup` and `sreh restore`: a consistent copy of a live node's SQLite store with its
// manifest, and its checked return into a stopped node's data dir.

#include "app/serve/backup_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "app/serve/store_target.hpp"
#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "persistence/sqlite/audit_verify.hpp"
#include "persistence/sqlite/backup.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "persistence/store/data_dir_lock.hpp"

#ifndef SREH_VERSION
#define SREH_VERSION "dev"
#endif

namespace sreh::app {

namespace {

namespace fs = std::filesystem;

constexpr const char* backup_usage =
  "usage: sreh backup DIR [--config FILE] [--node-id ID] [--data-dir D]\n";
constexpr const char* restore_usage =
  "usage: sreh restore DIR [--config FILE] [--node-id ID] [--data-dir D] [--force]\n";
constexpr const char* manifest_name = "backup.json";
constexpr const char* store_name = "sreh.db";
constexpr const char* manifest_format = "sreh-backup/1";
/// Copies of fewer pages than this (64 MiB of 4 KiB pages) print no progress.
constexpr std::int64_t progress_pages = 16'384;

struct command_args {
  std::string dir;
  store_args store;
  bool force = false;
};

int refuse(const char* cmd, const std::string& what) {
  std::fprintf(stderr, "sreh %s: %s\n", cmd, what.c_str());
  return 1;
}

/// The arguments of `sreh CMD`, or nullopt after a usage error (printed).
std::optional<command_args> parse_command_args(const char* cmd, const char* usage, bool takes_force,
                                               int argc, char** argv) {
  command_args out;
  std::string error;
  for (int i = 0; i < argc && error.empty(); ++i) {
    const std::string_view a = argv[i];
    if (take_store_option(argc, argv, i, out.store, error))
      continue;
    if (takes_force && a == "--force")
      out.force = true;
    else if (a.size() > 1 && a[0] == '-')
      error = fmt::format("unknown option '{}'", a);
    else if (out.dir.empty())
      out.dir = a;
    else
      error = fmt::format("one backup directory ('{}' and '{}')", out.dir, a);
  }
  if (error.empty() && out.dir.empty())
    error = "no backup directory given";
  if (error.empty())
    return out;
  std::fprintf(stderr, "sreh %s: %s\n%s", cmd, error.c_str(), usage);
  return std::nullopt;
}

/// The SQLite store `args` name; a PostgreSQL one is an error that says what to do instead.
expected<store_target> sqlite_target(const store_args& args, std::string_view instead) {
  auto target = resolve_store(args);
  if (target && target->store.kind == "postgres")
    return sreh::error{errc::invalid_argument,
                       fmt::format("the store is PostgreSQL (store.kind: postgres): {}", instead)};
  return target;
}

/// Makes what was written to `path` (a file or a directory) durable.
sreh::error sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const auto err = std::error_code{errno, std::generic_category()};
    if (fd >= 0)
      ::close(fd);
    return {errc::unavailable, fmt::format("sync {}: {}", path, err.message())};
  }
  ::close(fd);
  return {};
}

/// The token files (`*.token`) of a data dir, by file name.
std::vector<std::string> token_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator{dir, ec})
    if (f.is_regular_file(ec) && f.path().extension() == ".token")
      out.push_back(f.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Copies `from` to `to` (owner read-write only: tokens are secrets) and syncs it.
sreh::error copy_secret(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (!fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec))
    return {errc::unavailable, fmt::format("copy {} to {}: {}", from, to, ec.message())};
  fs::permissions(to, fs::perms::owner_read | fs::perms::owner_write, ec);
  return sync_path(to);
}

/// Prints "copied N/M pages (P%)" each time another tenth of a large copy is done.
persistence::copy_progress page_progress(const char* cmd) {
  return [cmd, printed = std::int64_t{0}](std::int64_t done, std::int64_t total) mutable {
    if (total < progress_pages || done == total || done * 10 / total <= printed)
      return;
    printed = done * 10 / total;
    std::fprintf(stderr, "sreh %s: copied %lld/%lld pages (%lld%%)\n", cmd,
                 static_cast<long long>(done), static_cast<long long>(total),
                 static_cast<long long>(printed * 10));
  };
}

// -- the manifest ---------------------------------------------------------------------------------

struct manifest {
  std::string taken_at;
  std::string source;
  std::string sreh_version;
  persistence::sqlite_store_facts facts;
  std::vector<std::string> tokens;
};

std::string manifest_json(const manifest& m) {
  return json::object("format", manifest_format, "taken_at", m.taken_at, "source", m.source,
                      "sreh_version", m.sreh_version, "schema_version", m.facts.schema_version,
                      "runs", m.facts.runs, "last_seq", m.facts.last_seq, "last_hash",
                      m.facts.last_hash, "tokens", m.tokens) +
         "\n";
}

expected<manifest> read_manifest(const std::string& dir) {
  const auto path = (fs::path{dir} / manifest_name).string();
  std::ifstream in{path};
  if (!in)
    return sreh::error{errc::not_found,
                       fmt::format("{}: no manifest: {} is not a sreh backup", path, dir)};
  std::stringstream text;
  text << in.rdbuf();
  auto doc = json::parse_object(text.str());
  if (!doc)
    return sreh::error{errc::invalid_argument, fmt::format("{}: {}", path, doc.error().message)};
  if (auto f = json::string_or(*doc, "format", ""); f != manifest_format)
    return sreh::error{errc::invalid_argument,
                       fmt::format("{}: format: '{}' is not {}", path, f, manifest_format)};
  manifest m;
  m.taken_at = json::string_or(*doc, "taken_at", "");
  m.source = json::string_or(*doc, "source", "");
  m.sreh_version = json::string_or(*doc, "sreh_version", "");
  m.facts.last_hash = json::string_or(*doc, "last_hash", "");
  const auto count = [&](const char* field, std::int64_t& out) -> sreh::error {
    const auto v = json::int_of(*doc, field);
    if (!v || *v < 0)
      return {errc::invalid_argument,
              fmt::format("{}: {}: a count (an integer >= 0) is required", path, field)};
    out = *v;
    return {};
  };
  std::int64_t version = 0;
  for (auto [field, out] : {std::pair{"schema_version", &version}, std::pair{"runs", &m.facts.runs},
                            std::pair{"last_seq", &m.facts.last_seq}})
    if (auto err = count(field, *out))
      return err;
  m.facts.schema_version = static_cast<int>(version);
  if (const auto* tokens = json::member(*doc, "tokens"); tokens != nullptr && tokens->IsArray())
    for (const auto& t : tokens->GetArray())
      if (t.IsString() && fs::path{t.GetString()}.filename() == t.GetString() &&
          fs::path{t.GetString()}.extension() == ".token")
        m.tokens.emplace_back(t.GetString());
  return m;
}

/// Writes `text` to `path` through a synced temporary file: the file is whole or absent.
sreh::error write_durably(const std::string& path, const std::string& text) {
  const auto tmp = path + ".tmp";
  {
    std::ofstream out{tmp, std::ios::trunc};
    if (!(out << text) || !out.flush())
      return {errc::unavailable, fmt::format("write {}: failed", tmp)};
  }
  if (auto err = sync_path(tmp))
    return err;
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec)
    return {errc::unavailable, fmt::format("rename {} to {}: {}", tmp, path, ec.message())};
  return {};
}

std::string now_rfc3339() {
  char buf[32];
  return std::string{format_rfc3339(system_clock{}.now_us(), buf)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string describe(const persistence::sqlite_store_facts& f) {
  return fmt::format("{} runs, events to seq {} (last hash {})", f.runs, f.last_seq,
                     f.last_hash.substr(0, 12));
}

// -- backup ---------------------------------------------------------------------------------------

/// `dir` created, or an error when it holds anything: a backup never overwrites another.
sreh::error prepare_backup_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      return {errc::invalid_argument, fmt::format("{} exists and is not a directory", dir)};
    if (!fs::is_empty(dir, ec))
      return {errc::conflict,
              fmt::format("{} is not empty: give a new or empty directory (a backup never "
                          "overwrites another)",
                          dir)};
    return {};
  }
  if (!fs::create_directories(dir, ec) && ec)
    return {errc::unavailable, fmt::format("cannot create {}: {}", dir, ec.message())};
  // The copy holds every goal, tool result and token: only its owner may read it.
  fs::permissions(dir, fs::perms::owner_all, ec);
  return {};
}

/// Copies the store and the tokens of `target` into `dir` and writes the manifest last: a
/// directory with a manifest holds a whole backup.
expected<manifest> take_backup(const store_target& target, const std::string& dir) {
  const auto partial = (fs::path{dir} / store_name).string() + ".partial";
  auto facts = persistence::copy_sqlite_store(target.store.path, partial, page_progress("backup"));
  if (!facts)
    return facts.error();
  std::error_code ec;
  manifest m{now_rfc3339(), fs::absolute(target.store.path, ec).string(), SREH_VERSION,
             std::move(*facts), token_files(target.data_dir)};
  for (const auto& t : m.tokens)
    if (auto err =
          copy_secret((fs::path{target.data_dir} / t).string(), (fs::path{dir} / t).string()))
      return err;
  fs::rename(partial, fs::path{dir} / store_name, ec);
  if (ec)
    return sreh::error{errc::unavailable, fmt::format("rename {}: {}", partial, ec.message())};
  if (auto err = write_durably((fs::path{dir} / manifest_name).string(), manifest_json(m)))
    return err;
  if (auto err = sync_path(dir))
    return err;
  return m;
}

} // namespace

int backup_command(int argc, char** argv) {
  const auto args = parse_command_args("backup", backup_usage, false, argc, argv);
  if (!args)
    return 2;
  auto target = sqlite_target(args->store, "back it up with pg_dump or the database's own "
                                           "backups; sreh backup copies a node's SQLite store");
  if (!target)
    return refuse("backup", target.error().message);
  if (auto err = prepare_backup_dir(args->dir))
    return refuse("backup", err.message);
  const auto start = std::chrono::steady_clock::now();
  auto m = take_backup(*target, args->dir);
  if (!m)
    return refuse("backup", m.error().message);
  const auto copy = (fs::path{args->dir} / store_name).string();
  std::error_code ec;
  std::printf("backed up %s to %s: %s, %.1f MB, %zu token file(s), in %.2f s\n",
              target->store.path.c_str(), copy.c_str(), describe(m->facts).c_str(),
              static_cast<double>(fs::file_size(copy, ec)) / 1e6, m->tokens.size(),
              seconds_since(start));
  auto report = persistence::verify_audit_chain(copy, {});
  if (!report)
    return refuse("backup", "the copy cannot be verified: " + report.error().message);
  if (!report->ok())
    return refuse("backup", fmt::format("the copy's audit chain is BROKEN at event {}: {} (the "
                                        "source's is too: sreh audit verify names it)",
                                        report->bad_seq, report->message));
  std::printf("audit chain of the copy ok: %lld entries, last hash %s\n",
              static_cast<long long>(report->entries), report->last_hash.c_str());
  return 0;
}

// -- restore --------------------------------------------------------------------------------------

namespace {

constexpr std::array<const char*, 3> store_files = {"", "-wal", "-shm"};

/// The backup in `dir` checked against its manifest: the file is sound (quick_check), holds
/// what the manifest says, is of a schema this build can open and its audit chain is intact.
sreh::error check_backup(const std::string& dir, const manifest& m) {
  const auto file = (fs::path{dir} / store_name).string();
  auto facts = persistence::inspect_sqlite_store(file);
  if (!facts)
    return facts.error();
  const auto mismatch = [&](const char* field, auto in_file, auto in_manifest) -> sreh::error {
    return {errc::invalid_argument,
            fmt::format("{} does not match its manifest: {} is {} in the file, {} in {}", file,
                        field, in_file, in_manifest, manifest_name)};
  };
  if (facts->schema_version != m.facts.schema_version)
    return mismatch("schema_version", facts->schema_version, m.facts.schema_version);
  if (facts->runs != m.facts.runs)
    return mismatch("runs", facts->runs, m.facts.runs);
  if (facts->last_seq != m.facts.last_seq)
    return mismatch("last_seq", facts->last_seq, m.facts.last_seq);
  if (facts->last_hash != m.facts.last_hash)
    return mismatch("last_hash", facts->last_hash, m.facts.last_hash);
  if (const int known = persistence::sqlite_schema_version(); facts->schema_version > known)
    return {errc::invalid_argument,
            fmt::format("{} has schema version {}, newer than this sreh knows ({}): restore it "
                        "with the sreh that took it ({})",
                        file, facts->schema_version, known, m.sreh_version)};
  auto report = persistence::verify_audit_chain(file, {});
  if (!report)
    return report.error();
  if (!report->ok())
    return {errc::invalid_argument, fmt::format("{}: the audit chain is broken at event {}: {}",
                                                file, report->bad_seq, report->message)};
  return {};
}

/// Whether any file of the store at `path` (the database, its WAL, its shared memory) exists.
bool store_exists(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : store_files)
    if (fs::exists(path + suffix, ec))
      return true;
  return false;
}

/// Moves the store at `path` (with its WAL, which may hold committed pages) aside; returns the
/// new name of the database.
expected<std::string> move_aside(const std::string& path) {
  auto stamp = now_rfc3339();
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  const auto aside = path + ".before-restore-" + stamp.substr(0, stamp.find('.')) + "Z";
  std::error_code ec;
  for (const char* suffix : store_files) {
    if (!fs::exists(path + suffix, ec))
      continue;
    fs::rename(path + suffix, aside + suffix, ec);
    if (ec)
      return sreh::error{errc::unavailable,
                         fmt::format("move {} aside: {}", path + suffix, ec.message())};
  }
  return aside;
}

/// Refuses to replace an existing store without `force`; with it, moves that store aside.
/// Returns where it went ("" when there was none).
expected<std::string> clear_place(const std::string& path, bool force) {
  if (!store_exists(path))
    return std::string{};
  if (force)
    return move_aside(path);
  auto facts = persistence::inspect_sqlite_store(path);
  return sreh::error{
    errc::conflict,
    fmt::format("{} holds a store already ({}); restoring replaces it: add --force (it is then "
                "kept beside it as {}.before-restore-<time>)",
                path, facts ? describe(*facts) : facts.error().message, path)};
}

/// Copies the backup's tokens into the data dir where it has none; returns those it kept.
expected<std::vector<std::string>> restore_tokens(const std::string& dir, const manifest& m,
                                                  const std::string& data_dir) {
  std::vector<std::string> kept;
  std::error_code ec;
  for (const auto& t : m.tokens) {
    const auto to = (fs::path{data_dir} / t).string();
    if (fs::exists(to, ec)) {
      kept.push_back(t);
      continue;
    }
    if (auto err = copy_secret((fs::path{dir} / t).string(), to))
      return err;
  }
  return kept;
}

/// Puts the checked backup in `dir` at the target's store path, under the data dir's lock.
int put_in_place(const command_args& args, const store_target& target, const manifest& m) {
  auto lock = persistence::data_dir_lock::acquire(target.data_dir, "restore");
  if (!lock)
    return refuse("restore", lock.error().message);
  auto aside = clear_place(target.store.path, args.force);
  if (!aside)
    return refuse("restore", aside.error().message);
  const auto from = (fs::path{args.dir} / store_name).string();
  const auto restoring = target.store.path + ".restoring";
  std::error_code ec;
  fs::remove(restoring, ec); // what an interrupted restore left
  auto facts = persistence::copy_sqlite_store(from, restoring, page_progress("restore"));
  if (!facts)
    return refuse("restore",
                  facts.error().message +
                    (aside->empty() ? "" : "; the store it was to replace is " + *aside));
  fs::rename(restoring, target.store.path, ec);
  if (ec)
    return refuse("restore", fmt::format("rename {}: {}", restoring, ec.message()));
  const auto parent = fs::absolute(target.store.path, ec).parent_path().string();
  if (auto err = sync_path(parent))
    return refuse("restore", err.message);
  auto kept = restore_tokens(args.dir, m, target.data_dir);
  if (!kept)
    return refuse("restore", kept.error().message);
  std::printf("restored %s (taken %s from %s) to %s: %s\n", args.dir.c_str(), m.taken_at.c_str(),
              m.source.c_str(), target.store.path.c_str(), describe(*facts).c_str());
  if (!aside->empty())
    std::printf("the store it replaced is kept as %s\n", aside->c_str());
  for (const auto& t : *kept)
    std::printf("kept the data dir's own %s (the backup's is in %s)\n", t.c_str(),
                args.dir.c_str());
  return 0;
}

} // namespace

int restore_command(int argc, char** argv) {
  const auto args = parse_command_args("restore", restore_usage, true, argc, argv);
  if (!args)
    return 2;
  auto target = sqlite_target(args->store, "restore the database with pg_restore; sreh "
                                           "restore puts back a SQLite store");
  if (!target)
    return refuse("restore", target.error().message);
  auto m = read_manifest(args->dir);
  if (!m)
    return refuse("restore", m.error().message);
  if (auto err = check_backup(args->dir, *m))
    return refuse("restore", err.message + "; nothing was changed");
  return put_in_place(*args, *target, *m);
}

} // namespace sreh::app
