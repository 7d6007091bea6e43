#pragma once
// The store under test, chosen by SREH_TEST_STORE: "sqlite" (the default), "postgres" or
// "in_memory". Another backend plugs in here, in one place: add a branch to `open_test_store`.

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

#include "persistence/postgres/postgres_store.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "persistence/store/in_memory_store.hpp"

namespace sreh::test {

/// The backend named by SREH_TEST_STORE, or "sqlite".
inline std::string test_store_kind() {
  const char* v = std::getenv("SREH_TEST_STORE");
  return v == nullptr || *v == '\0' ? std::string{"sqlite"} : std::string{v};
}

/// The name of the test store in `dir`, made once (unique per process and time) and remembered
/// in `dir/<file>`, so that a reopen finds the same store and every test starts on an empty one.
inline std::string test_store_name(const std::string& dir, const char* file) {
  const auto path = dir + "/" + file;
  std::string name;
  if (std::ifstream in{path}; in && std::getline(in, name) && !name.empty())
    return name;
  static int counter = 0;
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  name = fmt::format("sreh_test_{}_{}_{:x}", ::getpid(), ++counter, now);
  std::ofstream{path} << name << '\n';
  return name;
}

/// The PostgreSQL schema of the test store in `dir` (test_store_name). Schemas are not dropped:
/// they go with the throwaway cluster of scripts/pg.sh.
inline std::string test_pg_schema(const std::string& dir) {
  return test_store_name(dir, "pg-schema");
}

/// An in-memory store on the contents named in `dir` (test_store_name): opening again reaches the
/// same rows, as a reopen of a file does. The contents live as long as `dir` does: those of
/// removed directories (finished tests) are dropped at the next open.
inline persistence::store_ptr open_in_memory_test_store(const std::string& dir) {
  using contents = persistence::in_memory_store::contents;
  struct entry {
    std::string dir;
    std::shared_ptr<contents> data;
  };
  static std::mutex mtx;
  static std::map<std::string, entry> by_name;
  const auto name = test_store_name(dir, "in-memory-store");
  std::lock_guard lk{mtx};
  std::erase_if(by_name, [](const auto& kv) {
    std::error_code ec;
    return !std::filesystem::exists(kv.second.dir, ec);
  });
  auto& e = by_name[name];
  if (e.data == nullptr) {
    auto fresh = std::make_unique<persistence::in_memory_store>();
    e = entry{dir, fresh->shared_contents()};
    return fresh;
  }
  return std::make_unique<persistence::in_memory_store>(e.data);
}

/// Opens the test store that lives in `dir` (a fresh temp directory per test). Opening again with
/// the same `dir` must reach the same data: that is how tests check durability across a close.
inline expected<persistence::store_ptr> open_test_store(const std::string& dir) {
  const auto kind = test_store_kind();
  if (kind == "sqlite") {
    persistence::sqlite_options opts;
    opts.path = dir + "/sreh.db";
    return persistence::open_sqlite_store(opts);
  }
  if (kind == "postgres") {
    const char* url = std::getenv("SREH_PG_URL");
    if (url == nullptr || *url == '\0')
      return sreh::error{errc::invalid_argument,
                         "SREH_TEST_STORE=postgres needs SREH_PG_URL (scripts/pg.sh start prints "
                         "one; scripts/test.sh sets it)"};
    persistence::postgres_options opts;
    opts.url = url;
    opts.schema = test_pg_schema(dir);
    return persistence::open_postgres_store(opts);
  }
  if (kind == "in_memory")
    return open_in_memory_test_store(dir);
  return sreh::error{errc::invalid_argument, "SREH_TEST_STORE: unknown store '" + kind +
                                               "' (known: sqlite, postgres, in_memory)"};
}

/// A directory made with mkdtemp under /tmp, removed with everything in it on destruction.
class temp_dir {
 public:
  temp_dir() {
    std::string tmpl = "/tmp/sreh-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr)
      path_ = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  /// Empty when mkdtemp failed.
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

} // namespace sreh::test
