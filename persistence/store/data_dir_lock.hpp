#pragma once

#include <memory>
#include <string>

#include "core/base/expected.hpp"

namespace sreh::persistence {

/// The exclusive claim of one node on its data dir: an `flock` on `DATA/LOCK`, taken before the
/// store opens and held until the object is destroyed (or the process dies: the kernel releases
/// an flock with its last descriptor, so a node killed with -9 leaves no stale lock behind).
/// While held, `LOCK` holds the holder's pid and node id, which a refused node names.
///
/// A second node on the same data dir would resume the first node's live runs and race it for
/// them; refusing it at start is the only safe answer.
class data_dir_lock {
 public:
  ~data_dir_lock();
  data_dir_lock(const data_dir_lock&) = delete;
  data_dir_lock& operator=(const data_dir_lock&) = delete;

  /// Takes the lock on `data_dir` (created when missing) for node `node_id`. Fails with
  /// `conflict` naming the holder's pid and node id when another process holds it, or with
  /// `unavailable` when the file cannot be opened. Never blocks.
  [[nodiscard]] static expected<std::unique_ptr<data_dir_lock>> acquire(const std::string& data_dir,
                                                                        const std::string& node_id);

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  data_dir_lock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

} // namespace sreh::persistence
