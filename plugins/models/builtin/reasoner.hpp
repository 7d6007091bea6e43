#pragma once

#include <string>
#include <string_view>

#include "actors/gateway/model_provider.hpp"
#include "core/base/expected.hpp"

namespace sreh::plugins {

/// Makes the `builtin` model provider: a deterministic abductive reasoner over the knowledge base
/// (knowledge/failure_modes.yaml, embedded; `kb_path_or_empty` names a file that replaces it).
///
/// How it works: it reads the run's steps only as the typed observations their tools derive from
/// them (core/model/observation.hpp), and calls tools only by the capabilities they declare —
/// never by name or by the shape of a result — so any toolset that observes (the sandbox tools,
/// a Prometheus-backed one) feeds it. The evidence grows step by step: kept in the run's memory
/// between decisions, fed only the new steps, and rebuilt from every step when the run actor is
/// new (after a crash or a park), with the same value, so a decision recomputed after a crash is
/// the same. From topology, descriptions, logs, deploys, flags and alerts, it walks the call graph
/// from the alerted entity (run labels `service`/`host`/`job`, else names found in the goal text,
/// else the firing alerts) down to the deepest anomalous entities whose anomaly no dependency
/// explains — deferring siblings once the dependencies seen explain every class, and coming back
/// to them, and to the hosts under an unexplained leaf, when a leaf stays unexplained; a host
/// under several unexplained anomalies is a hypothesis of its own — scores hypotheses (failure
/// mode × target) with the KB's evidence weights, calls the
/// read-only tool that best separates the leading hypotheses, then executes (through the tool
/// that performs each KB remedy action) and verifies the remedy of each confident diagnosis, and
/// concludes.
///
/// Past cases recalled from long-term memory (`past_cases`) are priors: the failure mode one
/// names (its `fault` label) is checked first, weighted below the goal's own words
/// (`memory_cue_weight`), and concluded only on the evidence. A follow-up run
/// (core/conversation/follow_up.hpp) weighs the causes of the run it follows up the same way.
///
/// Contract of `decision.detail` (JSON object), for every decision:
/// ```
/// {"phase": "triage" | "investigate" | "remediate" | "verify" | "conclude",
///  "focus": ["<alerted entity>", ...], "leaves": ["<deepest unexplained anomalous entity>", ...],
///  "hypotheses": [{"kind","target","subject","score","confidence","status":
///                  "leading"|"candidate"|"ruled_out","evidence":[{"step","fact","weight"}]}],
///  "observations": ["step 3: checkout error_rate 0.21 (baseline 0.002)", ...]}
/// ```
/// and for `conclude` additionally the structured result the eval scorer reads:
/// ```
/// {"result": {
///    "detected": bool,                 // false only for "no fault found"
///    "outcome": "diagnosed" | "no_fault_found" | "unknown_cause",
///    "localized": ["<fault target>", ...],   // = diagnoses[].target, in order
///    "root_cause": ["<kind>", ...],          // = diagnoses[].kind, in order
///    "diagnoses": [{"kind","target","subject","bindings":{..},"confidence","ambiguous",
///                   "evidence":[{"step","fact","weight"}]}],
///    "remediation": [{"tool","args","step","ok","verified":bool,"for":"<kind>:<target>"}],
///    "recovery": "recovered" | "partial" | "not_recovered" | "none",  // the remedies, judged
///                                      // against baseline at the entity nearest each fault
///    "ruled_out": [{"kind"?,"target","reason"}],
///    "memories": [{"id","version","step","score","fault","borne_out"}], // the past cases the
///                                      // run recalled; `fault` their label (null: none), and
///                                      // whether a diagnosis bore it out
///    "unexplained": ["<entity>: <anomaly>", ...],   // anomalies no hypothesis fits
///    "notes": ["after rollback: checkout recovered (error_rate 0.002 ...)", ...],
///    "summary": "..."}}
/// ```
/// `target` is the fault's target as SCENARIOS.md defines it (a service, database, host, or a flag
/// for bad_flag); `subject` is the entity the evidence was gathered on. `decision.conclusion` is
/// the readable summary.
[[nodiscard]] expected<actors::model_provider_ptr>
make_builtin_reasoner(const std::string& kb_path_or_empty);
/// The same over knowledge-base text (an evolution candidate's body); errors read
/// `SOURCE:LINE:COLUMN: path: what is wrong`.
[[nodiscard]] expected<actors::model_provider_ptr>
make_builtin_reasoner_from_text(std::string_view yaml, std::string_view source);

} // namespace sreh::plugins
