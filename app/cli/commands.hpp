#pragma once
// Private to the client subcommands: one function per command (argv after the command name),
// each returning the process exit code.

#include <string>

#include "app/cli/http.hpp"

namespace sreh::app::cli {

// cli_runs.cpp
[[nodiscard]] int submit(int argc, char** argv);
[[nodiscard]] int runs(int argc, char** argv);
[[nodiscard]] int show(int argc, char** argv);
/// `sreh postmortem RUN [--json]`: a finished run's postmortem (docs/postmortems.md).
[[nodiscard]] int postmortem(int argc, char** argv);
[[nodiscard]] int watch(int argc, char** argv);
[[nodiscard]] int cancel(int argc, char** argv);
// say.cpp
/// `sreh say RUN TEXT [--idempotency-key K] [--json]`: a message to a run.
[[nodiscard]] int say(int argc, char** argv);
/// `sreh follow-up RUN GOAL [--label k=v]... [--idempotency-key K] [--watch] [--json]`: a new
/// run that starts from what the ended run RUN concluded.
[[nodiscard]] int follow_up(int argc, char** argv);
/// `sreh show`'s conversation: the run's constraints and its messages (oldest first).
void print_conversation(const style& st, const rapidjson::Value& run,
                        const rapidjson::Value* messages);

// fork.cpp
/// `sreh fork RUN --from N [--policy FILE] [--edit K=JSON]... [--fail K=TEXT]... [--wait]`.
[[nodiscard]] int fork(int argc, char** argv);
/// `sreh compare RUN [--with RUN]`: a fork beside the run it was forked from (or any two runs).
[[nodiscard]] int compare(int argc, char** argv);

// cli_watch.cpp
/// Follows a run's event stream as a timeline; reconnects with Last-Event-ID. Exit 0 when the
/// run succeeded, 1 failed, 2 cancelled (3 when the node cannot be reached).
[[nodiscard]] int watch_run(const options& o, const std::string& run_id);
/// Writes `"labels": {...}` from the `--label k=v` options (nothing without one); false (after a
/// usage error) for a malformed one.
[[nodiscard]] bool write_labels(json::writer& w, const options& o);
/// POSTs a run's request `body` to `path` (with `--idempotency-key`), prints the run's id (or the
/// reply with `--json`) and, with `--watch`, follows it to its end. `sreh submit`, `flow run`.
[[nodiscard]] int post_run(const options& o, const std::string& path, const std::string& body);

// cli_cluster.cpp
/// `sreh nodes`: the cluster's members, their liveness, link and load.
[[nodiscard]] int nodes(int argc, char** argv);

// tools.cpp
/// `sreh tools`: the node's tools with their risk class, whether they mutate, and arguments.
[[nodiscard]] int tools(int argc, char** argv);

// models.cpp
/// `sreh models`: the node's model routes in chain order, breaker state, calls, tokens, cost.
[[nodiscard]] int models(int argc, char** argv);

// templates.cpp
/// `sreh templates`: the node's Work templates with their kind, fields and double texting.
[[nodiscard]] int templates(int argc, char** argv);

// flows.cpp
/// `sreh flows`: the node's flows with their version, step count and inputs.
[[nodiscard]] int flows(int argc, char** argv);
/// `sreh flow show|graph NAME [--dot]`.
[[nodiscard]] int flow(int argc, char** argv);

// works.cpp
/// `sreh works`: the node's Works with filters.
[[nodiscard]] int works(int argc, char** argv);
/// `sreh work create|show|ack|resolve|reopen|cancel|comment|trigger ...`.
[[nodiscard]] int work(int argc, char** argv);
/// `sreh sandbox reset`: the sandbox world as its scenario has it, every action forgotten.
[[nodiscard]] int sandbox(int argc, char** argv);

// memory.cpp
/// `sreh evolve propose FILE|status [ID]|promote ID|rollback`: the evolution gate.
[[nodiscard]] int evolve(int argc, char** argv);
/// `sreh memory search|add|show|edit|rollback|rm`: long-term memory.
[[nodiscard]] int memory(int argc, char** argv);

// cli_approvals.cpp
[[nodiscard]] int approvals(int argc, char** argv);
/// `approve` (approve = true) and `deny`.
[[nodiscard]] int decide(bool approve, int argc, char** argv);
// notifications.cpp
[[nodiscard]] int notifications(int argc, char** argv);

} // namespace sreh::app::cli
