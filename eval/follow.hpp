#pragma once
// What the in-process runners (eval/runner.hpp, eval/replay.hpp) share: following a run through
// the node's event hub, and a scratch data dir.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/model/event.hpp"

namespace sreh::eval {

/// An approval a run asked for (`approval.requested`): its id and the step it is for.
struct requested_approval {
  std::string id;
  std::int64_t step = 0;
};

/// Follows the hub: which runs ended, which approvals were requested.
///
/// Thread-safe: `on_events` runs on the writer thread and only records; the runner's thread
/// waits.
class run_follower {
 public:
  void on_events(const std::vector<event>& evs);

  /// Waits until `run_id` ended (true) or approvals are waiting to be decided (false, moved into
  /// `approvals`), or until `deadline` (false, nothing moved).
  bool wait(const std::string& run_id, std::chrono::steady_clock::time_point deadline,
            std::vector<requested_approval>& approvals);

  void note(std::string problem);
  std::vector<std::string> problems();

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::set<std::string> ended_;
  std::deque<requested_approval> approvals_;
  std::vector<std::string> problems_;
};

/// A fresh data dir under $TMPDIR (or /tmp), removed by the destructor; `path` is "" when it
/// could not be made.
struct temp_dir {
  std::string path;
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

} // namespace sreh::eval
