#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/model/observation.hpp"
#include "core/model/step.hpp"
#include "plugins/models/builtin/knowledge_base.hpp"

namespace sreh::actors {
class tool_registry;
}

namespace sreh::plugins::reasoner {

/// One observation of an entity's metrics (a description, a metrics query or a jobs listing).
struct snapshot {
  std::int64_t step = 0;
  std::map<std::string, double> current;
  std::map<std::string, double> baseline;
  std::map<std::string, double> fields; // numeric state: replicas, max_connections
  std::string version;
  timestamp_us taken_at = 0;  // when its step's tool was called (the node's clock)
  std::int64_t settle_ms = 0; // obs::metric_sample::settle_ms
};

/// A service, database, host or job as the observations describe it.
struct entity {
  std::string name;
  std::string kind;               // service | database | cache | queue | host | job
  std::string subkind;            // jobs: training | inference; hosts: vm | gpu
  std::vector<std::string> calls; // services: dependencies; jobs: hosts
  std::vector<std::string> called_by;
  std::vector<std::string> hosts;
  std::vector<std::string> services; // hosts: services on it
  std::vector<std::string> jobs;     // hosts: jobs on it
  std::vector<snapshot> snapshots;   // in step order
  [[nodiscard]] bool is_service_kind() const;
};

using log_line = obs::log_line;
using flag_record = obs::flag_state;

struct log_result {
  std::int64_t step = 0;
  std::vector<log_line> lines; // newest first
};

struct deploy_result {
  std::int64_t step = 0;
  std::string service; // "" = every service
  std::string window;
  std::vector<obs::deploy> deploys;
};

/// A past case long-term memory returned (a recall, or a search the run made).
struct recalled {
  std::int64_t step = 0;
  obs::past_case c;
};

/// One tool call of the run: the key is the tool and its canonical arguments.
struct call_record {
  std::int64_t step = 0;
  std::string tool;
  std::string args; // canonical JSON
  std::string key;  // tool + " " + canonical args
  bool ok = false;
  bool mutation = false; // a remedy tool that was attempted (not failed outright)
  std::string error;
  timestamp_us finished_at = 0; // the step's outcome (the node's clock)
};

/// Everything the run's steps observed so far. It grows one step at a time (`add`): the same
/// steps in the same order give the same value, however it was fed.
struct evidence {
  bool topology_known = false;
  std::map<std::string, entity> entities;
  std::vector<std::string> order;                      // entity names in the order first seen
  std::map<std::string, std::vector<log_result>> logs; // by entity
  std::vector<deploy_result> deploys;
  std::optional<std::vector<flag_record>> flags;
  std::int64_t flags_step = 0;
  std::vector<std::map<std::string, std::string>> alert_labels;
  bool alerts_known = false;
  std::vector<call_record> calls;
  std::vector<recalled> memories;  // in step order, best first within a step
  std::int64_t first_mutation = 0; // step of the first remedy call (0 = none yet)
  std::int64_t last_step = 0;
  std::optional<std::int64_t> now; // simulated time (seconds), when a result tells it

  [[nodiscard]] const entity* find(const std::string& name) const;
  /// The latest call with this key made after step `after`, or null.
  [[nodiscard]] const call_record* find_call(const std::string& key, std::int64_t after = 0) const;

  /// Adds tool step `s` (with an outcome): its call, and what it observed. `remedy`: the step's
  /// tool performs a remedy (its call is a mutation unless it failed outright).
  void add(const step& s, const obs::observations& seen, bool remedy);
};

/// Whether a step counts as evidence: a tool step with an outcome that was not cancelled.
[[nodiscard]] bool is_evidence(const step& s);

/// A run's evidence kept between decisions: fed the run's steps, it reads (asks the step's tool
/// to observe) only the steps it has not seen, and keeps each step's observations so that the
/// evidence of an earlier span needs no result read again. A step it has seen that changed (a
/// recovered run ran it again) makes it start over, so it always equals the evidence rebuilt
/// from the steps.
class evidence_journal {
 public:
  /// Brings the evidence up to `steps`, the run's steps so far in order.
  void catch_up(const std::vector<step>& steps, const actors::tool_registry& tools);
  /// The evidence of every step given to `catch_up`.
  [[nodiscard]] const evidence& all() const { return tail_ ? *tail_ : ev_; }
  /// The evidence of the steps numbered below `n`.
  [[nodiscard]] evidence before(std::int64_t n) const;

 private:
  /// A step looked at: the step without its result, and what it observed.
  struct seen_step {
    step head; // result and decision left out
    std::size_t result_size = 0;
    bool counts = false; // is_evidence
    bool remedy = false;
    obs::observations observed;
    [[nodiscard]] bool same(const step& s) const;
  };
  [[nodiscard]] static seen_step read(const step& s, const actors::tool_registry& tools);

  std::vector<seen_step> seen_;      // a prefix of the run's steps, all with outcomes
  evidence ev_;                      // of seen_
  std::vector<seen_step> tail_seen_; // steps with outcomes behind one without
  std::optional<evidence> tail_;     // ev_ and tail_seen_
};

/// Canonical JSON (object keys sorted) of `json_text`, or the text itself if it does not parse.
[[nodiscard]] std::string canonical_json(const std::string& json_text);
[[nodiscard]] std::string call_key(const std::string& tool, const std::string& args_json);

/// Seconds since the epoch of an RFC 3339 timestamp.
[[nodiscard]] std::optional<std::int64_t> parse_rfc3339(const std::string& s);
/// Seconds of a window like `30m`, `2h`, `1d`.
[[nodiscard]] std::optional<std::int64_t> parse_window(const std::string& s);

// -- conditions over snapshots -----------------------------------------------------------------

/// The steps whose observations count: (from, to], to = 0 meaning no upper bound.
struct step_range {
  std::int64_t from = 0;
  std::int64_t to = 0;
  [[nodiscard]] bool contains(std::int64_t n) const { return n > from && (to == 0 || n <= to); }
};

/// Latest value of `metric` in the entity's current metrics within the range.
[[nodiscard]] std::optional<double> current_value(const entity& e, const std::string& metric,
                                                  step_range r, std::int64_t* at_step = nullptr);
[[nodiscard]] std::optional<double> baseline_value(const entity& e, const std::string& metric,
                                                   step_range r);

/// True/false, or nullopt when a value is missing.
[[nodiscard]] std::optional<bool> evaluate(const condition& c, const entity& e, step_range r,
                                           std::int64_t* at_step = nullptr);

/// "error_rate 0.21 (baseline 0.002)" for the metrics the condition reads.
[[nodiscard]] std::string describe_values(const condition& c, const entity& e, step_range r);

/// Anomaly classes of an entity within the range, with a readable reason per class; `mild`
/// applies each rule's lower bar (knowledge_base.hpp, anomaly_rule).
[[nodiscard]] std::map<std::string, std::string>
anomalies(const knowledge_base& kb, const entity& e, step_range r, bool mild = false);

/// True when the entity has at least one snapshot within the range.
[[nodiscard]] bool observed(const entity& e, step_range r);

/// The steps after an action (its step `action`, which ended at `ended_at`) whose snapshots of
/// `e` had settled: taken at least their `settle_ms` after the action ended. A snapshot taken
/// sooner may still show the state before the action, so the range starts after the last one.
[[nodiscard]] step_range settled_after(const entity& e, std::int64_t action, timestamp_us ended_at);

/// When a snapshot of `e` taken after an action that ended at `ended_at` will have settled:
/// `ended_at` plus the longest `settle_ms` of its snapshots (its sources').
[[nodiscard]] timestamp_us settles_at(const entity& e, timestamp_us ended_at);

} // namespace sreh::plugins::reasoner
