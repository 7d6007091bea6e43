#pragma once
// The store under test, chosen by SREH_TEST_STORE ("sqlite" by default). Another backend plugs
// in here, in one place: add a branch to `open_test_store`.

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "sreh/persistence/sqlite_store.hpp"

namespace sreh::test {

/// The backend named by SREH_TEST_STORE, or "sqlite".
inline std::string test_store_kind() {
  const char* v = std::getenv("SREH_TEST_STORE");
  return v == nullptr || *v == '\0' ? std::string{"sqlite"} : std::string{v};
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
  return sreh::error{errc::invalid_argument,
                     "SREH_TEST_STORE: unknown store '" + kind + "' (known: sqlite)"};
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
