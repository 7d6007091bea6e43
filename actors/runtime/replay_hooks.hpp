#pragma once
// What a replay's scratch node answers from its recording besides the tools (eval/replay.hpp,
// docs/replay.md): the outcome of a flow's checks, timers that do not wait, and the messages
// people said to the run, at the steps the run took them.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/conversation/message.hpp"

namespace sreh::actors {

/// A flow check's outcome as a replay's recording has it (eval/replay.cpp).
struct recorded_check {
  bool ok = false;
  std::string result, error;
};

/// What a replay's scratch node answers from its recording besides the tools (eval/replay.hpp);
/// empty on a serving node.
struct replay_hooks {
  /// The recorded outcome of the check of flow step `step` (attempt `attempt`), in journal
  /// order; nullopt when the recording has no such check (the replay then fails it).
  std::function<std::optional<recorded_check>(const std::string& step, int attempt)> checks{};
  /// Durable timers (a flow's sleeps and its waits' next checks, retry backoffs) fire at once:
  /// the recording already waited.
  bool timers_at_once = false;
  /// The messages (and the kernel's replies) the recorded run took from step `n` on, one step
  /// each and in order, when its step `n` took one; empty otherwise. The replayed run takes
  /// them before its decision at step `n`, as the recorded one did.
  std::function<std::vector<conversation::message>(std::int64_t n)> messages{};
};

} // namespace sreh::actors
