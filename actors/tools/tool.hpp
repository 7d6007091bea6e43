#pragma once

#include <rapidjson/fwd.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "actors/tools/world_source.hpp"
#include "core/base/expected.hpp"
#include "core/model/observation.hpp"
#include "core/model/outcome.hpp"
#include "core/model/step.hpp"

namespace sreh::actors {

enum class risk_class { read_only, low, medium, high };
[[nodiscard]] const char* to_string(risk_class r);

/// Everything a tool gets for one call.
struct tool_call {
  std::string run_id;
  std::string args;            // JSON, validated against the schema
  std::string idempotency_key; // `<run id>:<step n>`
  std::stop_token cancel;      // set when the run is cancelled
  /// `args` as parsed when the kernel checked them (`tool::parse_args`); null: not parsed. A
  /// tool reads them from here rather than parsing `args` again.
  std::shared_ptr<const rapidjson::Document> parsed{};
};

/// What a tool returns: a JSON result or an error message (recorded as the step's outcome).
struct tool_result {
  bool ok = true;
  std::string result = "{}";
  std::string error;
  static tool_result success(std::string json) { return {true, std::move(json), {}}; }
  static tool_result failure(std::string msg) { return {false, "{}", std::move(msg)}; }
  /// A call the tool will not carry out as asked, however often it is repeated (a conflict with
  /// the state it finds, an invalid or unknown target): a flow step does not retry it.
  static tool_result refusal(std::string msg) {
    return {false, R"({"retryable":false})", std::move(msg)};
  }
  /// `e` as a refusal when its code says a retry cannot help, else as a failure.
  static tool_result from_error(const sreh::error& e) {
    bool final = e.code == errc::invalid_argument || e.code == errc::not_found ||
                 e.code == errc::conflict || e.code == errc::forbidden;
    return final ? refusal(e.message) : failure(e.message);
  }
};

/// Did the call with this idempotency key take effect?
struct reconcile_result {
  enum status { happened, not_happened, unknown } state = unknown;
  std::string result = "{}"; // the recorded result when it happened
};

/// What a proposed call touches, for the policy engine.
struct action_scope {
  std::string target; // the service, host, database, flag or job acted on
  std::string environment = "prod";
  std::string tier;        // of the target, when the tool knows it
  double blast_radius = 0; // share of replicas or hosts affected, 0..1, when known
};

/// How the action runtime checks a call's effect afterwards: after `after_ms` (a durable timer:
/// the run parks and a restart does not lose it), `check` tells whether the effect holds.
struct postcondition {
  std::int64_t after_ms = 0;
  std::string description; // e.g. "checkout error_rate back under 3x baseline"
};

struct check_result {
  bool holds = true;
  std::string detail = "{}"; // JSON: what was observed
};

/// A tool the agent can call. Implementations are thread-safe: several runs call one tool.
///
/// Tools and the reasoner meet at typed observations (core/model/observation.hpp): a tool that
/// observes declares what it can be asked for (`provides`: capability kinds, the entity kinds
/// they cover, which argument plays which role), and reads its own results back as observations
/// (`observe`). A reasoner chooses tools by capability and reads observations only: it never
/// names a tool or parses a result, so a new toolset feeds it without editing it.
///
/// Durability: the journaled step holds the call's arguments and its JSON result, and nothing
/// else is stored. `observe` is a pure function of (arguments, result), so the observations a
/// reasoner derives again from the journal after a crash are the ones it saw before it.
class tool {
 public:
  virtual ~tool() = default;
  [[nodiscard]] virtual const std::string& name() const = 0;
  [[nodiscard]] virtual const std::string& description() const = 0;
  /// JSON schema of the arguments (draft-07 subset: type, properties, required, enum, minimum,
  /// maximum, maxLength, additionalProperties=false).
  [[nodiscard]] virtual const std::string& schema() const = 0;
  /// `args` parsed and checked against `schema()` (itself parsed once per tool): the arguments,
  /// or why they do not fit ("arguments: ..." when they are not JSON; errc::internal when the
  /// schema is not).
  [[nodiscard]] expected<std::shared_ptr<const rapidjson::Document>>
  parse_args(std::string_view args) const;
  [[nodiscard]] virtual risk_class risk() const = 0;
  /// Read-only and safe to repeat: re-run on recovery instead of reconciled.
  [[nodiscard]] virtual bool idempotent() const = 0;
  /// Blocks (I/O, subprocess): runs on the tool pool, not on an actor thread.
  [[nodiscard]] virtual bool blocking() const { return false; }
  [[nodiscard]] virtual std::chrono::milliseconds timeout() const {
    return std::chrono::seconds(30);
  }
  virtual tool_result execute(const tool_call& call) = 0;
  /// The post-condition of a successful call with these arguments, if the tool declares one.
  [[nodiscard]] virtual std::optional<postcondition> postcondition_for(std::string_view) const {
    return std::nullopt;
  }
  /// Evaluates the post-condition of the call with `args` now.
  virtual check_result check(std::string_view /*args*/) { return {}; }
  /// Tools that can undo a call say so; `compensate` gets the original call (its arguments and
  /// idempotency key) and undoes it. Run when the post-condition does not hold.
  [[nodiscard]] virtual bool compensable() const { return false; }
  virtual tool_result compensate(const tool_call& original) {
    return tool_result::failure(name() + " cannot be compensated (" + original.idempotency_key +
                                ")");
  }
  /// What a call with these (validated) arguments would touch. The default takes the target
  /// from the first of the arguments service, database, host, flag, job, target.
  [[nodiscard]] virtual action_scope scope(std::string_view args) const;
  /// Non-idempotent tools answer whether the call with `idempotency_key` happened.
  virtual reconcile_result reconcile(std::string_view /*idempotency_key*/) { return {}; }

  // -- observations ------------------------------------------------------------------------------

  /// What the tool can be asked for: the observations it returns, or the remedy it performs.
  [[nodiscard]] virtual std::vector<obs::capability> provides() const { return {}; }
  /// The observations in the result of a successful call with `args`; this is the one place
  /// that reads the result's shape. Pure: no clock, no world, no I/O; called on any thread,
  /// with complete results only (a truncated result yields none).
  [[nodiscard]] virtual obs::observations observe(std::string_view /*args*/,
                                                  std::string_view /*result*/) const {
    return {};
  }

 private:
  mutable std::once_flag schema_once_;
  mutable std::shared_ptr<const rapidjson::Document> schema_doc_;
  mutable std::string schema_error_;
};

using tool_ptr = std::shared_ptr<tool>;

/// The tools a node offers, by name. Filled at start, read-only afterwards (thread-safe reads).
class tool_registry {
 public:
  void add(tool_ptr t);
  /// Takes the tool `name` out (`tools.disable`); false when there is none.
  bool remove(std::string_view name);
  [[nodiscard]] tool_ptr find(std::string_view name) const;
  [[nodiscard]] std::vector<tool_ptr> all() const;
  /// Whether the tool `name` changes something: not read-only, or unknown to the node (an
  /// unknown tool is never assumed harmless). What outcomes, quality and postmortems count as
  /// actions; the function reads this registry, which must outlive it.
  [[nodiscard]] outcome::mutating_fn mutating() const;
  /// The tools that declare a capability of `kind`, each with that capability, in name order.
  [[nodiscard]] std::vector<std::pair<tool_ptr, obs::capability>>
  providing(obs::capability_kind kind) const;
  /// What a journaled step observed: its tool's `observe` over the step's arguments and result
  /// when it is a tool step that succeeded with a complete result; nothing otherwise (or when
  /// the node no longer has the tool).
  [[nodiscard]] obs::observations observations_of(const step& s) const;

  /// World state sources that come with the tools (the sandbox world's graph).
  void add_world_source(world_source_ptr s) { sources_.push_back(std::move(s)); }
  [[nodiscard]] const std::vector<world_source_ptr>& world_sources() const { return sources_; }

 private:
  std::map<std::string, tool_ptr, std::less<>> tools_;
  std::vector<world_source_ptr> sources_;
};

} // namespace sreh::actors
