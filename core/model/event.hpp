#pragma once

#include <cstdint>
#include <string>

#include "core/base/clock.hpp"

namespace sreh {

/// An entry of the append-only event log. `seq` is the node-wide, gap-free delivery order,
/// assigned by the store at commit (0 before). `run_seq` is the order within one run.
/// Kinds: run.created, run.started, run.waiting, run.resumed, run.succeeded, run.failed,
/// run.cancelled, run.recovered, step.intent, step.outcome.
struct event {
  std::int64_t seq = 0;
  std::string id; // evt_... (stable across nodes; JetStream dedupe key)
  std::string run_id;
  std::int64_t run_seq = 0;
  std::string kind;
  timestamp_us at = 0;
  std::string data = "{}"; // JSON object
};

} // namespace sreh
