// The `sreh` binary: dispatches subcommands. The composition root of a node is serve.cpp.

#include <cstdio>
#include <cstring>
#include <string>

#include "app/cli/client.hpp"
#include "app/cli/cluster_check.hpp"
#include "app/serve/audit_command.hpp"
#include "app/serve/backup_command.hpp"
#include "app/serve/eval_command.hpp"
#include "app/serve/replay_command.hpp"
#include "app/serve/serve.hpp"

namespace {

constexpr const char* usage = R"(sreh — a durable SRE agent runtime

usage: sreh <command> [options]

node:
  serve [--config FILE] [--node-id ID] [--listen HOST:PORT] [--data-dir DIR]
                          run a node (embedded default: SQLite in ./data, 127.0.0.1:7070);
                          the options replace the file's settings
  config check FILE [--node-id ID]
                          validate a node config (its topology, Work templates and flows too), a Work
                          template or a flow
  cluster check TOPOLOGY_FILE [--timeout-ms N]
                          validate a topology and probe every node's addresses (TCP)
  eval [--json F] [--markdown F] [--mode autonomous|review] [--kb F] [--config F] DIR|FILE...
                          run scenario files against the builtin reasoner (or the config's model
                          route) and score them
  replay RUN [--config FILE] [--json]
                          run a finished run again from its journal (recorded model answers and
                          tool results, no model server) and compare it step by step

  audit verify [--config FILE | --data-dir DIR | --db FILE]
                          check the tamper-evident audit log (SQLite or PostgreSQL store);
                          names the first bad entry
  backup DIR [--config FILE | --data-dir DIR]
                          a consistent copy of a node's SQLite store while it runs, with its
                          tokens and a manifest; the copy's audit chain is verified
  restore DIR [--config FILE | --data-dir DIR] [--force]
                          put a backup back into a stopped node's data dir, after checking it
  token hash TOKEN        print a token's SHA-256, for auth.tokens in a config
  token new               print a fresh random token and its SHA-256

client (talks to a node; --server HOST:PORT or $SREH_SERVER, default 127.0.0.1:7070;
        token: $SREH_TOKEN, else --token-file F, else ./data/admin.token):
  submit "GOAL" [--watch] submit a goal; --watch follows the run live
  runs [--state S]        list runs
  show RUN                a run and its steps
  postmortem RUN|WORK [--json]
                          a finished run's or closed Work's postmortem: impact, timeline, root
                          cause, follow-ups
  watch RUN               follow a run's events as a timeline
  cancel RUN              cancel a run
  say RUN TEXT            a message to a run: "do not touch X", "check X first", "stop", ...
  follow-up RUN "GOAL" [--label k=v] [--watch]
                          a new run that starts from what the ended RUN concluded and on which
                          evidence: "do the same for the eu-west copy"
  fork RUN --from N [--policy FILE] [--version CANDIDATE] [--edit K=JSON] [--wait]
                          a new run from RUN's recorded steps 1..N-1, live from step N, under
                          another policy, a candidate's knowledge base, prompt, route or policy,
                          or with an amended tool result; --wait compares it
  compare RUN [--with RUN]
                          a fork's steps beside the original's: where they diverge and why
  evolve propose FILE [--kind knowledge_base|policy|prompt|model_route] [--reason T] [--wait]
                          a candidate knowledge base, policy, prompt or model route: run on the
                          scenario suites and replayed over recent runs against the current one;
                          refused when anything regresses
  evolve status [CANDIDATE] | promote CANDIDATE [--comment T] | rollback [--kind K]
                          the candidates and their reports; approve a promotion (not your own);
                          restore the version the current one replaced
  approvals [--state S] [--run RUN]
                          list approvals (default: pending)
  approve APPROVAL [--comment TEXT]
                          approve an action (or say an in-doubt one happened)
  deny APPROVAL [--comment TEXT]
                          deny an action (or say an in-doubt one did not happen)
  notifications [--state pending|delivered|failed|grouped] | notifications retry ID
                          the notifications sent and due (failed: the dead letters); send one again
  nodes                   the cluster's members: alive or dead, link, load
  tools                   the tools this node offers: risk class, mutating, arguments
  models                  the model routes in chain order: breaker, calls, tokens, cost
  models check [--timeout MS]
                          a tiny request to each route: latency, or why it failed
  templates               the Work templates this node loaded: kind, fields, double texting
  flows                   the flows (runbooks) this node loaded: version, steps, inputs
  flow run NAME [--input k=v]... [--watch]
                          run a flow (a runbook) with its inputs; --watch follows the run live
  flow show|graph NAME [--dot]
                          a flow's inputs and steps; its graph as a text tree or Graphviz dot
  works [--state S] [--kind K] [--label k=v]
                          list Works (incidents, changes, ...)
  work create TEMPLATE --field k=v...
                          make a Work from a template; it starts its run
  work show|ack|resolve|reopen|cancel|comment|trigger WORK [--text TEXT]
                          a Work's runs, SLA clocks and timeline; act on it
  sandbox reset           a sandbox node: its scenario again (the faults back, actions forgotten)
  memory search [WORDS...] [--label k=v] [--kind K]
                          long-term memory: past incidents, postmortems, notes, runbooks
  memory add --kind K --text TEXT [--label k=v]...
                          add an entry (each change is a version, in the audit chain)
  memory show|edit|rollback|rm MEMORY [--versions]
                          an entry and its versions; edit, roll back or delete it

  help                    this text
every client command: sreh COMMAND --help lists its options
)";

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (cmd == "serve")
    return sreh::app::serve_command(argc - 2, argv + 2);
  if (cmd == "config")
    return sreh::app::config_check_command(argc - 2, argv + 2);
  if (cmd == "cluster")
    return sreh::app::cluster_command(argc - 2, argv + 2);
  if (cmd == "eval")
    return sreh::app::eval_command(argc - 2, argv + 2);
  if (cmd == "replay")
    return sreh::app::replay_command(argc - 2, argv + 2);
  if (cmd == "audit")
    return sreh::app::audit_command(argc - 2, argv + 2);
  if (cmd == "backup")
    return sreh::app::backup_command(argc - 2, argv + 2);
  if (cmd == "restore")
    return sreh::app::restore_command(argc - 2, argv + 2);
  if (cmd == "token")
    return sreh::app::token_command(argc - 2, argv + 2);
  if (cmd == "submit" || cmd == "runs" || cmd == "show" || cmd == "watch" || cmd == "cancel" ||
      cmd == "approvals" || cmd == "notifications" || cmd == "approve" || cmd == "deny" ||
      cmd == "nodes" || cmd == "tools" || cmd == "models" || cmd == "templates" || cmd == "flows" ||
      cmd == "flow" || cmd == "works" || cmd == "work" || cmd == "sandbox" || cmd == "memory" ||
      cmd == "postmortem" || cmd == "fork" || cmd == "compare" || cmd == "evolve" || cmd == "say" ||
      cmd == "follow-up")
    return sreh::app::run_client_command(cmd, argc - 2, argv + 2);
  std::fprintf(stderr, "sreh: unknown command '%s'\n\n%s", cmd.c_str(), usage);
  return 2;
}
