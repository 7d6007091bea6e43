#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/topology/address.hpp"
#include "config/topology/topology.hpp"
#include "core/base/expected.hpp"
#include "core/flows/flow.hpp"
#include "core/model/run.hpp"
#include "core/works/kinds.hpp"
#include "core/works/template.hpp"

namespace sreh::config {

class section_registry; // config/node/sections.hpp

struct store_config {
  std::string kind = "sqlite";        // sqlite | postgres
  std::string path;                   // sqlite file; default <data_dir>/sreh.db
  std::string synchronous = "normal"; // sqlite: normal | full
  std::string url;                    // postgres: connection URL (may use ${ENV})
};

struct logging_config {
  std::string level = "info";  // trace | debug | info | warn | error | off
  std::string format = "text"; // text | json
};

struct limits_config {
  std::int64_t max_body_bytes = 1 << 20;     // request bodies over this get 413
  std::int64_t max_header_bytes = 16 * 1024; // request headers over this get 431
  std::int64_t max_json_depth = 32;          // deeper JSON gets 400
  /// Open connections. At the limit a new connection is still accepted and the oldest idle or
  /// incomplete one (waiting for a request header) is closed for it; when none is, the newcomer
  /// may ask only /healthz or /readyz and gets 503 with Retry-After for anything else.
  std::int64_t max_connections = 1024;
  /// Open connections from one client address (0: no per-client limit); further ones get 503.
  std::int64_t max_connections_per_client = 256;
  /// A request header must arrive whole within this, counted from its first byte (or from the
  /// accept): a client that opens connections and sends a partial request line is cut.
  std::int64_t header_timeout_ms = 5'000;
  /// A keep-alive connection may wait this long between requests, and a body this long.
  std::int64_t idle_timeout_ms = 30'000;
  /// Commits waiting for the writer. Over this, new runs are refused with 503 and Retry-After
  /// (runs under way go on), so a slow store slows the clients instead of growing memory.
  std::int64_t max_commit_backlog = 20'000;
  std::int64_t sse_queue_events = 10'000; // a client further behind than this is cut
  std::int64_t sse_heartbeat_ms = 15'000; // comment line on idle SSE streams
  std::int64_t http_threads = 2;
  /// Threads that run the REST handlers (store reads, kernel calls) off the HTTP threads, so a
  /// slow or hung database holds these and never the sockets, /healthz or SSE.
  std::int64_t handler_threads = 8;
  std::int64_t scheduler_threads = 2; // CAF worker threads
  /// CAF's scheduler: sharing (one queue, idle workers sleep until woken) or stealing (per-worker
  /// queues, idle workers poll). On 2 cores sharing used ~10% less CPU per step on SQLite and
  /// ~45% less at C=1 on PostgreSQL, where workers idle between commits (docs/benchmarks.md).
  std::string scheduler_policy = "sharing";
  std::int64_t tool_threads = 4; // pool for blocking tools
  /// Threads that run the actors' store reads (the kernel's, the policy checks'), so that a slow
  /// or hung database holds these and never CAF's scheduler.
  std::int64_t store_threads = 4;
};

/// A scripted step of the `scripted` model provider: call `tool` with `args` (JSON).
struct scripted_step {
  std::string tool;
  std::string args = "{}";
};

/// A model server the gateway calls (docs/models.md): `provider: openai | anthropic`, or
/// `builtin` as the last resort of a fallback chain. `api_key` is a secret: it comes from
/// `${ENV}` or `api_key_file` and is never printed (logs, events, journal, `config check`).
struct model_route {
  std::string name;     // "main" for the `model:` section itself, else its key in `models:`
  std::string provider; // openai | anthropic | builtin
  std::string base_url; // openai: ending in /v1 (…/v1/chat/completions); anthropic: the host
  std::string model;
  std::string api_key;
  /// When `api_key` named an environment variable that was unset at load: the error
  /// ("FILE:LINE:COL: model.api_key: environment variable 'X' is not set"). A node refuses to
  /// serve with it; `sreh config check` reports it as a warning.
  std::string api_key_unset;
  bool stream = false;
  std::int64_t max_tokens = 1024;        // the answer's limit
  bool max_completion_tokens = false;    // openai: send it as max_completion_tokens (o-series)
  std::int64_t max_input_tokens = 16000; // the prompt's budget (the window − max_tokens)
  std::int64_t connect_timeout_ms = 10'000;
  std::int64_t read_timeout_ms = 60'000;
  std::int64_t total_timeout_ms = 300'000; // one call, its retries not included
  std::int64_t max_attempts = 3;           // calls in all, the first included
  std::string ca_file;                     // https: the CA to verify the server ("" = system)
  double input_price = 0;                  // per million input tokens (cost on runs)
  double output_price = 0;                 // per million output tokens
  std::int64_t max_concurrency = 64; // calls in flight at once; more wait in the gateway's queue
  std::int64_t max_queue = 1000;     // calls waiting; one more fails over to the next route
};

/// `model.by_label`: runs with label `label` = `value` go to route `route` first (in place of
/// the chain's first route), then down the fallback chain.
struct label_route {
  std::string label, value, route;
};

struct model_config {
  std::string provider = "builtin";  // builtin | scripted (tests, demos) | openai | anthropic
  std::vector<scripted_step> script; // for `scripted`
  std::string kb;                    // builtin: a knowledge base file ("" = the embedded one)
  /// builtin: a knowledge base's text in place of `kb` (an evolution candidate's, docs/evolve.md),
  /// and the name its errors carry.
  std::string kb_text, kb_source;
  /// openai | anthropic: the `model:` section's own server (the first of the chain).
  model_route main;
  /// Routes of `models:` (or builtin) tried in order when the ones before failed.
  std::vector<std::string> fallback;
  std::map<std::string, model_route, std::less<>> routes; // the `models:` section
  std::vector<label_route> by_label;                      // the first match routes a run
  std::string system_prompt;                              // "" = the built-in one
  /// The version journaled for `system_prompt` ("" = derived from its text; an evolution
  /// candidate's id when it is one).
  std::string system_prompt_version;
  std::int64_t max_repairs = 3; // bad answers in a row the model is told about before the run fails
  std::int64_t keep_last = 4;   // context: the last K steps are never summarized
};

struct tool_config {
  /// Registers the test tools (`test.echo`, `test.record`, ...: plugins/tools/testkit) on this
  /// node. Off by default: a production node never offers them. Tests and benchmarks set it.
  bool testkit = false;
  /// Where the `test.record` tool appends the idempotency keys it executed (crash tests).
  std::string record_file;
  /// Tools the toolsets offer that this node does not (`disable: [service.describe, ...]`):
  /// e.g. the sandbox's describe tools when its metrics come from Prometheus instead.
  std::vector<std::string> disable;
  // The keys of plugins' sections under `tools:` (`tools.http_probe`, `tools.shell`) are read
  // into node_config::sections.
};

/// A bearer token known to the node, given only by the SHA-256 of the token.
struct auth_token {
  std::string name;   // identity (unique): the submitter / decider it acts as
  std::string role;   // viewer | operator | approver | admin
  std::string sha256; // 64 lower-case hex digits
};

struct auth_config {
  /// tokens: every /v1 request needs `Authorization: Bearer`; with no tokens configured the node
  /// uses (or creates) <data_dir>/admin.token. none: no auth (only on a loopback listen address).
  std::string mode = "tokens";
  std::vector<auth_token> tokens;
};

/// The JetStream relay of the event log (docs/relay.md). Off when `url` is empty.
struct nats_config {
  std::string url;                            // nats://host:port (may use ${ENV}); "" = off
  std::string stream = "sreh-events";         // JetStream stream name
  std::string subject_prefix = "sreh.events"; // subjects are <prefix>.<kind>.<run>
  /// TLS to the server (on with a tls:// url or any of these files; absolute paths after load):
  /// the CAs that may sign the server's certificate ("" = the system's), and this client's
  /// certificate and key for a server that asks for one (both or neither).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

/// HTTPS on the front (docs/security.md): on when `cert_file` is set. Paths relative to the
/// config file; the files are read at start and again on SIGHUP.
struct tls_config {
  std::string cert_file;      // PEM certificate chain, the server's first
  std::string key_file;       // PEM private key
  std::string client_ca_file; // PEM CAs of the client certificates required; "" = none required
};

/// Cluster mode (docs/cluster.md): on when `topology` is set.
struct cluster_config {
  /// The topology file, shared by every node; relative to the config file's directory.
  std::string topology;
  /// The loaded topology, filled by `finalize` when `topology` is set.
  std::optional<config::topology> topo;
};

/// The Works control plane (docs/works.md).
struct works_config {
  /// A folder of Work templates (*.yaml), relative to the config file; "" = none.
  std::string templates;
  /// The templates of that folder, loaded and validated by `finalize`.
  std::vector<works::work_template> loaded;
  /// How often a Work being mitigated or monitored evaluates its done-criteria (`check_every`).
  std::int64_t check_every_ms = 5'000;
  /// How often the world sync observes the world sources (`world_sync`).
  std::int64_t world_sync_ms = 1'000;
  /// How long a Work's actor stays without a message before it passivates (`passivate_after`).
  std::int64_t passivate_after_ms = 30'000;
};

/// Long-term memory (docs/memory.md).
struct memory_config {
  /// How many memories a goal run recalls before its first step (`memory.recall`, 0..10;
  /// 0: none). The recall is journaled as the run's first step when it finds any.
  std::int64_t recall = 3;
  /// Whether a goal run's postmortem is written into memory when it ends (`memory.postmortems`).
  bool postmortems = true;
};

/// The evolution gate (docs/evolve.md): what a candidate is evaluated on, and who promotes it.
struct evolve_config {
  /// Scenario files and folders every candidate runs (`evolve.suites`), relative to the config
  /// file.
  std::vector<std::string> suites;
  /// The newest succeeded goal runs replayed under a candidate (`evolve.replay_last`, 0..500).
  std::int64_t replay_last = 20;
  /// Distinct approvers a promotion needs, never the proposer (`evolve.approvals`, 1..9).
  std::int64_t approvals = 1;
  /// The policy mode the scenarios run in (`evolve.mode`: autonomous | review).
  std::string mode = "autonomous";
};

/// Flows (docs/flows.md): runbooks as steps, loaded from `flows: DIR`.
struct flows_config {
  /// A folder of flow files (*.yaml), relative to the config file; "" = none.
  std::string dir;
  /// Its flows, loaded and validated by `finalize`, except for their tools: those exist only
  /// once the node's toolsets are installed, so app/serve checks them (config::check_flow_tools).
  std::vector<flows::flow> loaded;
};

/// The node's configuration. Every field has a default so that no file is needed for the
/// embedded default (SQLite under ./data, listening on 127.0.0.1:7070).
struct node_config {
  std::string node_id = "node-1";
  std::string listen = "127.0.0.1:7070"; // host:port
  std::string data_dir = "./data";
  std::string policy_mode = "review"; // read_only | review | autonomous, when no policy_file
  std::string policy_file;            // rules (examples/policies); relative to this file
  store_config store;
  logging_config logging;
  limits_config limits;
  run_budget budget; // defaults for new runs
  model_config model;
  tool_config tools;
  auth_config auth;
  nats_config nats;
  cluster_config cluster;
  works_config works;
  flows_config flows;
  memory_config memory;
  evolve_config evolve;
  tls_config tls;
  /// The plugins' sections (config/node/sections.hpp), by path, each the plugin's settings
  /// type: those the file has. Read them with `section<T>()`.
  std::map<std::string, std::any, std::less<>> sections;
  std::string source; // file it was loaded from ("" = defaults)
  // Whether listen / data_dir were given (file or command line) rather than defaulted: in
  // cluster mode the defaults follow the topology (listen) and the node id (data_dir).
  bool listen_given = false;
  bool data_dir_given = false;

  /// The settings of the plugin section `T::section` (a type with `static constexpr
  /// std::string_view section`): what the file said, else `T{}` (the file has no such section,
  /// or this config was not loaded from one). Throws std::bad_any_cast when the section was
  /// read as another type.
  template <class T>
  [[nodiscard]] const T& section() const {
    if (auto i = sections.find(T::section); i != sections.end())
      return std::any_cast<const T&>(i->second);
    static const T defaults{};
    return defaults;
  }
};

/// Command-line settings that replace the file's before `finalize`, so that one config file can
/// serve every node of a cluster (`sreh serve --node-id`). Empty fields keep the file's value.
struct overrides {
  std::string node_id;
  std::string listen;
  std::string data_dir; // the store path then follows it
};

/// Applies the non-empty fields of `o` to `cfg`.
void apply_overrides(const overrides& o, node_config& cfg);

/// Loads and validates a YAML config file. `${NAME}` in string values is replaced by the
/// environment variable NAME (an unset variable is an error). Unknown keys, wrong types and
/// out-of-range values are errors formatted as `FILE:LINE:COLUMN: field.path: what is wrong`.
/// `o` is applied before `finalize`; `kinds` are the Work kinds the templates may have (null:
/// the builtin ones) and `sections` the plugins' sections the file may have (null: none); app/serve
/// passes those the plugins registered.
[[nodiscard]] expected<node_config> load_file(const std::string& path, const overrides& o = {},
                                              const works::kind_registry* kinds = nullptr,
                                              const section_registry* sections = nullptr);

/// Same, from text (`name` is used in messages in place of a file name).
[[nodiscard]] expected<node_config> load_string(const std::string& text, const std::string& name,
                                                const overrides& o = {},
                                                const works::kind_registry* kinds = nullptr,
                                                const section_registry* sections = nullptr);

/// A model-route candidate's text (docs/evolve.md): a YAML document with `model:` and, for the
/// routes its fallback or by_label names, `models:`, read as the node config reads them, over
/// `node` (the node's model section). It holds no secret and names no file: no `${NAME}`, no
/// api_key, api_key_file, ca_file, kb or script; each route's key and CA are those of the node's
/// route with the same provider and base_url. `kb` and `system_prompt` stay the node's (they are
/// candidates of their own). Errors read `SOURCE:LINE:COLUMN: field.path: what is wrong`.
[[nodiscard]] expected<model_config>
load_model_candidate(std::string_view text, std::string_view source, const model_config& node);

/// Fills derived defaults (store.path from data_dir) and checks cross-field rules, the plugin
/// sections' checks last. In cluster mode it loads the topology into `cluster.topo`, checks that
/// this node is a member and sets `listen` to its http address (and data_dir, unless given, to
/// ./data/<node_id>).
[[nodiscard]] sreh::error finalize(node_config& cfg, const works::kind_registry* kinds = nullptr,
                                   const section_registry* sections = nullptr);

} // namespace sreh::config
