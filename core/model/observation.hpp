#pragma once
// Typed observations: what a read tool saw, as data that tools and the reasoner both include.
//
// A tool that observes derives these from its own result (it owns its result's shape; see
// actors/tools/tool.hpp), and declares the capabilities below so that a reasoner can choose it
// without knowing its name. The vocabulary is generic on purpose: the sandbox tools produce it
// from their JSON, a Prometheus-backed tool would produce the same samples from a query. Pure
// data, no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sreh::obs {

// -- entities and edges --------------------------------------------------------------------------

/// An entity of the observed system. `kind`: service | database | cache | queue (the service
/// kinds) | host | job; "" when the source does not say. `subkind`: hosts vm | gpu, jobs
/// training | inference.
struct entity_ref {
  std::string name;
  std::string kind;
  std::string subkind;
};

/// How two entities relate: `from` calls `to` (a dependency); service `from` runs on host `to`;
/// job `from` runs on host `to` (a job depends on its hosts).
enum class relation { calls, runs_on, job_on };

struct edge {
  std::string from;
  relation rel = relation::calls;
  std::string to;
};

/// Entities and edges in the order the source lists them. `complete`: the whole graph (a
/// topology listing); otherwise what one description revealed of it.
struct topology {
  bool complete = false;
  std::vector<entity_ref> entities;
  std::vector<edge> edges;
};

// -- samples and lines ---------------------------------------------------------------------------

/// The state of one entity at one moment: its metrics now, their baselines where the source
/// knows them, and its numeric state (replicas, max_connections, gpus, cordoned/drained as 0/1).
/// A description gives every metric; a query gives one.
struct metric_sample {
  entity_ref entity;
  std::map<std::string, double> current;  // metric → value now
  std::map<std::string, double> baseline; // metric → its usual value
  std::map<std::string, double> fields;   // state: replicas, max_connections, ...
  std::string version;                    // services: the version running
  std::string at;                         // RFC 3339 time of the sample, "" when not told
  /// How long a change takes to show in these values (a rate's window, the scrape interval): a
  /// sample taken sooner after an action may still show the state before it. 0: at once.
  std::int64_t settle_ms = 0;
};

struct log_line {
  std::string at;    // RFC 3339
  std::string level; // INFO | WARN | ERROR
  std::string message;
};

/// Log lines of one entity, newest first.
struct log_lines {
  std::string entity;
  std::vector<log_line> lines;
};

// -- changes
// ---------------------------------------------------------------------------------------

struct deploy {
  std::string service, version, previous, at, by;
};

/// The deploys a listing found, newest first: of `service` ("" = every service) within `window`
/// (a duration like "2h"; the span the listing covered).
struct deploy_list {
  std::string service;
  std::string window;
  std::vector<deploy> deploys;
};

/// A feature flag. Values are spelled as the source spells them ("true", "false", "0.25");
/// `changed_at` is "" when it never changed.
struct flag_state {
  std::string name, value, default_value, changed_at, changed_by;
};

/// Every feature flag.
struct flag_list {
  std::vector<flag_state> flags;
};

// -- alerts and failures -------------------------------------------------------------------------

struct alert {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string since; // RFC 3339
};

/// The alerts firing now.
struct alert_list {
  std::vector<alert> alerts;
};

/// The call returned, but its result says it did not do what was asked (`{"ok": false}`, or a
/// result that is not the tool's shape): the reasoner treats the call as failed.
struct call_failed {
  std::string reason;
};

// -- long-term memory ----------------------------------------------------------------------------

/// An entry of the team's long-term memory that a search found for the case at hand: a past
/// incident, a postmortem, a runbook, a note (docs/memory.md). What it teaches is in its text and
/// labels; `labels["fault"]`, when present, names the failure mode it was (`bad_deploy`).
struct past_case {
  std::string id;
  std::int64_t version = 0;
  std::string kind; // postmortem | incident | note | runbook
  double score = 0; // the search's ranking, 0..1
  std::map<std::string, std::string> labels;
  std::vector<std::string> entities;
  std::string text; // possibly shortened (`truncated`)
  bool truncated = false;
};

/// What a memory search returned, best first (none found: empty).
struct past_cases {
  std::vector<past_case> cases;
};

using observation = std::variant<topology, metric_sample, log_lines, deploy_list, flag_list,
                                 alert_list, call_failed, past_cases>;
using observations = std::vector<observation>;

// -- capabilities --------------------------------------------------------------------------------

/// What a tool can be asked for, by what it returns or does.
enum class capability_kind {
  topology, // the whole graph (a complete `topology`); no arguments
  describe, // an entity's `metric_sample` and edges; without an `entity` argument, every entity
            // of the kinds it covers (a listing)
  metric,   // one metric of an entity over a window (`metric_sample` with that metric)
  logs,     // `log_lines` of an entity
  deploys,  // a `deploy_list` over a window
  flags,    // a `flag_list`
  alerts,   // an `alert_list`
  remedy,   // performs the remedy `action` (a mutating call; see below)
  recall,   // `past_cases` from long-term memory for a `query` (and the case's labels, `near`)
};

[[nodiscard]] const char* to_string(capability_kind k);
[[nodiscard]] std::optional<capability_kind> parse_capability_kind(std::string_view s);

/// Argument roles: how a reasoner fills in a call without knowing the tool's argument names.
namespace role {
inline constexpr std::string_view entity = "entity"; // the entity observed
inline constexpr std::string_view window = "window"; // a duration like "2h"
inline constexpr std::string_view limit = "limit";   // at most this many lines
inline constexpr std::string_view metric = "metric"; // a metric name
inline constexpr std::string_view kind = "kind";     // the kind of the entity observed
inline constexpr std::string_view query = "query";   // recall: what to search for, as typed
inline constexpr std::string_view near = "near";     // recall: the case's labels (an object)
} // namespace role

/// One capability a tool declares. For the observing kinds, `args` maps a role to the tool's
/// argument (a role not listed is not taken). For `remedy`, `action` names what the call does,
/// from the remedy vocabulary the knowledge base uses — deploy.rollback {service, to_version?},
/// service.restart {service}, service.scale {service, replicas}, db.set_pool_limit {database,
/// limit}, host.cleanup_disk {host}, cert.rotate {service}, flag.set {flag, value}, host.cordon
/// {host}, host.drain {host}, job.restart {job, exclude_hosts?} — and `args` maps an action
/// argument to the tool's name for it (an argument not listed keeps its name).
struct capability {
  capability_kind kind = capability_kind::describe;
  std::vector<std::string> entity_kinds; // describe/metric/logs: kinds covered, {} = every kind
  std::map<std::string, std::string, std::less<>> args;
  std::string action; // remedy only

  /// True when the capability observes entities of `kind` (every kind when none is listed).
  [[nodiscard]] bool covers(std::string_view kind) const;
  /// The tool's argument for `role`, or nullopt when it takes none.
  [[nodiscard]] std::optional<std::string> argument(std::string_view role) const;
  /// Remedy: the tool's name for the action argument `name`.
  [[nodiscard]] std::string renamed(std::string_view name) const;
};

} // namespace sreh::obs
