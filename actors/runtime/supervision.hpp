#pragma once
// The node's supervision tree without CAF: how a child is restarted (policy and budget), the
// services the node supervises next to its actors (the HTTP front and the relay, implemented in
// net/), and the table of children that /v1/actors and /readyz read.

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.hpp"

namespace spdlog {
class logger;
}

namespace sreh::actors {

// -- restarts ---------------------------------------------------------------------------------

/// How a supervisor restarts a child that died: after a wait that doubles from `min_backoff`
/// up to `max_backoff`, at most `max_restarts` times within `window`. The next death within the
/// window gives the child up (state `failed`).
struct restart_policy {
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5'000};
  int max_restarts = 5;
  std::chrono::seconds window{60};
};

/// The restarts of one child within its policy's window. Not thread-safe: one supervisor.
class restart_budget {
 public:
  explicit restart_budget(restart_policy p = {}) : policy_(p) {}

  /// Records a death at `now`: the wait before the restart (min_backoff for the first restart
  /// within the window, doubled for each further one, capped at max_backoff), or nullopt when
  /// `max_restarts` restarts within the window are spent.
  [[nodiscard]] std::optional<std::chrono::milliseconds>
  on_failure(std::chrono::steady_clock::time_point now);

  [[nodiscard]] const restart_policy& policy() const { return policy_; }

 private:
  restart_policy policy_;
  std::deque<std::chrono::steady_clock::time_point> restarts_; // within the window
};

class supervision_table;

/// What every supervisor of the node does when a child dies: counts the death against the
/// child's `budget`, records it in `table` (when set) and logs one line, naming `consequence`
/// (what giving up means, e.g. "the node stays not ready") when the budget is spent. Returns
/// the wait before the restart, or nullopt when the child is given up on.
[[nodiscard]] std::optional<std::chrono::milliseconds>
child_died(restart_budget& budget, const std::string& name, const std::string& why,
           supervision_table* table, spdlog::logger& log, std::string_view consequence = {});

// -- services ---------------------------------------------------------------------------------

/// What a service calls, from any of its threads, when it can no longer work (an exception
/// escaped its loop). Returns at once; the supervisor then stops the service and, within its
/// budget, starts it again.
using failure_handler = std::function<void(std::string why)>;

/// A part of the node that runs on threads of its own (the HTTP front, the relay) and that the
/// node supervises (node::supervise). Each start and stop runs on the thread of a detached actor
/// of its own, so they may block.
///
/// Contract: `start` and `stop` are called from one thread at a time and alternately (`stop`
/// only after a `start` that succeeded); a `start` after a `stop` must work like the first one
/// and resume where the durable state says (the relay from its stored offset, the front on the
/// address it listened on). `failed` may be called any number of times until `stop` returns,
/// never after.
class service {
 public:
  virtual ~service() = default;
  /// The child's name in the tree ("http_front", "relay"); unique per node.
  [[nodiscard]] virtual std::string name() const = 0;
  /// Starts the background work. An error means nothing was left running.
  [[nodiscard]] virtual sreh::error start(failure_handler failed) = 0;
  /// Stops the background work and waits for it.
  virtual void stop() = 0;
};

using service_ptr = std::shared_ptr<service>;

// -- the table --------------------------------------------------------------------------------

enum class child_state {
  starting, // its first start is running
  running,
  restarting, // died; waiting for its backoff, or starting again
  failed,     // died once more than its budget allows: given up on
  stopped,    // stopped with the node
};

[[nodiscard]] const char* to_string(child_state s);

/// One child of the node's supervisors, as /v1/actors shows it.
struct child_info {
  std::string name;   // "kernel", "relay", "http_front"
  std::string parent; // its supervisor: "node" (the kernel's), "services"
  child_state state = child_state::starting;
  int restarts = 0;       // since the node started
  std::string last_error; // why it last died; empty when it never did
};

/// The children of a node's supervisors, in the order they were added. Written by the
/// supervisors, read by the HTTP front. Thread-safe.
class supervision_table {
 public:
  /// Adds `name` (state `starting`), or starts it over when it is known.
  void add(std::string name, std::string parent);
  void set_state(std::string_view name, child_state s);
  /// Records a death: `why`, and either one restart more (state `restarting`) or `failed`.
  void died(std::string_view name, std::string why, bool restarting);
  void remove(std::string_view name);
  /// Marks every child `stopped` (the node stops).
  void stop_all();

  [[nodiscard]] std::vector<child_info> children() const;
  /// The children given up on: the node is not ready while there is one.
  [[nodiscard]] std::vector<child_info> failed() const;

 private:
  child_info* find(std::string_view name); // with mtx_ held

  mutable std::mutex mtx_;
  std::vector<child_info> rows_;
};

} // namespace sreh::actors
