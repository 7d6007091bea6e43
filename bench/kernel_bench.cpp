// Kernel benchmark: runs of N steps (each a trivial tool returning ~200 bytes of JSON, journaled
// exactly as real steps are: intent, effect, outcome) through the real kernel, group-commit
// writer and store (SQLite by default, or PostgreSQL), with C runs in flight at all times.
//
//   build/release/bench/sreh_bench [--runs 1000] [--warmup 100] [--steps 10]
//                                  [--concurrency 1,64] [--inflight 10000] [--sync normal|full]
//                                  [--store sqlite|postgres] [--pg-url URL] [--node-id ID]
//                                  [--pg-stats on|off] [--pg-settle-ms 11000] [--start-at UNIX_MS]
//                                  [--scheduler sharing|stealing] [--flow 0|1] [--llm 0|1]
//
// With `--llm 1` the runs are driven by a language-model provider whose answers come at once
// from the bench itself (llm_provider::answer_from, no server and no HTTP): each tool step then
// has a reason step before it, with the request assembled from the whole journal, hashed and
// journaled, the answer journaled and its tool call validated. Against `--llm 0` this is the
// run's own overhead per reason step, without any model server's time.
//
// With `--flow 1` the runs are flow runs of a flow of N tool steps (the same tool) instead of
// goal runs of the scripted reasoner: the same journal, the flow's runner deciding each step.
//
// Prints, per concurrency: durable steps/s, runs/s, p50/p99 step latency (one step's start to
// the next step's start, from the step.intent events), CPU µs per step (process user+sys),
// rows, transactions and bytes written per step, peak RSS; then RSS with `--inflight` runs in
// flight (`--inflight 0` skips it); last, one JSON line with every figure.
//
// With `--store postgres` (bench/pg_bench.sh runs it against a throwaway server) it also reads,
// around each measured window and on a connection of its own, the server's side: transactions
// (xact_commit + xact_rollback) and rows (tup_inserted/updated/deleted) of the database from
// pg_stat_database, WAL bytes (pg_current_wal_lsn() difference, and pg_stat_wal.wal_bytes) and
// WAL syncs from pg_stat_wal, and the CPU of every PostgreSQL server process (utime+stime in
// /proc of the postmaster's children, plus what the postmaster reaped from exited ones: the
// server must run on this host for that figure). Backends publish their statistics at most once
// a second and an idle one up to 10 s later, so the node is left idle for `--pg-settle-ms`
// before each pg_stat read (not part of the window). The figures are the database's: run one
// bench at a time against it, or `--pg-stats off` when several share it (`--node-id`: each
// process its own node id; its runs are its own) and read the statistics around all of them.

#include "bench/kernel_bench.hpp"

#include <fmt/format.h>
#include <pqxx/pqxx>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "actors/gateway/llm_provider.hpp"
#include "actors/gateway/scripted_provider.hpp"
#include "bench/bench_util.hpp"
#include "bench/pg_probe.hpp"
#include "config/flows/flow_file.hpp"
#include "core/base/logger.hpp"
#include "core/flows/runner.hpp"
#include "net/node/node_parts.hpp"
#include "plugins/tools/testkit/testkit.hpp"

namespace {

using namespace sreh;
using namespace sreh::bench;
using steady = std::chrono::steady_clock;
using bench::pg_probe;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// Follows committed events (from the hub, on the writer thread): which runs ended, and the
/// start time of every step.
class tracker {
 public:
  void on_events(const std::vector<event>& evs) {
    std::lock_guard<std::mutex> lock{mtx_};
    for (auto& e : evs) {
      if (e.kind == "step.intent" || e.kind == "step.outcome") {
        if (e.kind == "step.intent") {
          auto& last = last_start_[e.run_id];
          if (last != 0 && recording_)
            gaps_.push_back(e.at - last);
          last = e.at;
        }
        continue;
      }
      if (e.kind == "run.succeeded" || e.kind == "run.failed" || e.kind == "run.cancelled") {
        last_start_.erase(e.run_id);
        ++ended_;
        failed_ += e.kind == "run.succeeded" ? 0 : 1;
        cv_.notify_all();
      }
    }
  }

  /// Blocks until at least `n` runs have ended in total.
  void wait_ended(long n) {
    std::unique_lock<std::mutex> lock{mtx_};
    cv_.wait(lock, [&] { return ended_ >= n; });
  }

  long ended() {
    std::lock_guard<std::mutex> lock{mtx_};
    return ended_;
  }

  long failed() {
    std::lock_guard<std::mutex> lock{mtx_};
    return failed_;
  }

  void record(bool on) {
    std::lock_guard<std::mutex> lock{mtx_};
    recording_ = on;
    if (on)
      gaps_.clear();
  }

  std::vector<std::int64_t> gaps() {
    std::lock_guard<std::mutex> lock{mtx_};
    return gaps_;
  }

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  long ended_ = 0, failed_ = 0;
  bool recording_ = false;
  std::unordered_map<std::string, std::int64_t> last_start_;
  std::vector<std::int64_t> gaps_;
};

/// What every run of the benchmark is (a goal run, or a flow run: `--flow`).
goal_request proto_request;

void submit_one(net::node_parts& n) {
  n.kernel().submit(proto_request, [](expected<actors::submit_reply> r) {
    if (!r)
      std::fprintf(stderr, "submit failed: %s\n", r.error().message.c_str());
  });
}

/// Keeps `c` runs in flight until `total` more runs have ended.
void drive(net::node_parts& n, tracker& t, int c, int total) {
  long base = t.ended();
  int submitted = 0;
  for (; submitted < std::min(c, total); ++submitted)
    submit_one(n);
  while (submitted < total) {
    t.wait_ended(base + submitted - c + 1);
    long ended = t.ended() - base;
    while (submitted < total && submitted - ended < c) {
      submit_one(n);
      ++submitted;
    }
  }
  t.wait_ended(base + total);
}

double percentile(std::vector<std::int64_t> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(p * (v.size() - 1))]);
}

result measure(net::node_parts& n, tracker& t, const options& o, int c, pg_probe* pg = nullptr) {
  drive(n, t, c, o.warmup);
  const auto settle = std::chrono::milliseconds(o.pg_settle_ms);
  pg_probe::counters pg0, pg1;
  pg_probe::cpu_sample pcpu0, pcpu1;
  double lsn0 = 0, lsn1 = 0;
  if (pg) {
    std::this_thread::sleep_for(settle); // the warmup's statistics reach pg_stat_database
    pg0 = pg->read();
    lsn0 = pg->wal_lsn();
    pcpu0 = pg->cpu();
  }
  auto w0 = n.writer().stats();
  auto steps0 = n.kernel().stats().steps;
  auto cpu0 = cpu_seconds();
  auto t0 = steady::now();
  t.record(true);
  drive(n, t, c, o.runs);
  t.record(false);
  auto secs = std::chrono::duration<double>(steady::now() - t0).count();
  auto cpu = cpu_seconds() - cpu0;
  auto w1 = n.writer().stats();
  if (pg) {
    pcpu1 = pg->cpu();
    lsn1 = pg->wal_lsn();
    std::this_thread::sleep_for(settle); // the window's statistics reach pg_stat_database
    pg1 = pg->read();
  }
  double steps = static_cast<double>(n.kernel().stats().steps - steps0);
  result r;
  r.concurrency = c;
  r.steps_per_s = steps / secs;
  r.runs_per_s = o.runs / secs;
  auto gaps = t.gaps();
  r.p50_us = percentile(gaps, 0.50);
  r.p99_us = percentile(gaps, 0.99);
  r.cpu_us_per_step = cpu * 1e6 / steps;
  r.rows_per_step = static_cast<double>(w1.rows - w0.rows) / steps;
  r.txns_per_step = static_cast<double>(w1.commits - w0.commits) / steps;
  r.bytes_per_step = static_cast<double>(w1.bytes - w0.bytes) / steps;
  r.peak_rss_kb = peak_rss_kb();
  if (pg) {
    r.has_pg = true;
    r.pg_xacts_per_step = (pg1.xacts - pg0.xacts) / steps;
    r.pg_inserted_per_step = (pg1.inserted - pg0.inserted) / steps;
    r.pg_updated_per_step = (pg1.updated - pg0.updated) / steps;
    r.pg_deleted_per_step = (pg1.deleted - pg0.deleted) / steps;
    r.pg_wal_bytes_per_step = (lsn1 - lsn0) / steps;
    r.pg_stat_wal_bytes_per_step = (pg1.wal_bytes - pg0.wal_bytes) / steps;
    r.pg_wal_syncs_per_step = (pg1.wal_syncs - pg0.wal_syncs) / steps;
    r.pg_wal_fpi_per_step = (pg1.wal_fpi - pg0.wal_fpi) / steps;
    r.has_pg_cpu = pg->has_cpu();
    r.pg_cpu_us_per_step = pg_probe::cpu_seconds(pcpu0, pcpu1) * 1e6 / steps;
  }
  return r;
}

/// The goal (or `--flow`: the flow) every run of the benchmark submits.
bool set_proto_request(const options& o) {
  proto_request.goal = "bench";
  proto_request.submitter = "bench";
  // Room for every step: with `--llm` each tool step has a reason step before it.
  proto_request.budget.max_steps = std::max(1000, 2 * o.steps + 10);
  if (o.flow) {
    std::string text = "flow: bench\nsteps:\n";
    for (int i = 1; i <= o.steps; ++i)
      text += fmt::format("  - {{id: s{}, tool: test.echo, args: {{probe: bench}}}}\n", i);
    auto f = config::load_flow_string(text, "bench.yaml");
    if (!f) {
      std::fprintf(stderr, "%s\n", f.error().message.c_str());
      return false;
    }
    proto_request.goal = "flow bench";
    proto_request.kind = "flow";
    proto_request.spec = flows::pin(*f, {});
  }
  return true;
}

/// The scripted reasoner, or (`--llm`) a language model answering without a server.
actors::model_provider_ptr bench_provider(const options& o) {
  std::vector<config::scripted_step> script(static_cast<std::size_t>(o.steps),
                                            {"test.echo", R"({"probe":"bench"})"});
  actors::model_provider_ptr provider = std::make_shared<actors::scripted_provider>(script);
  static const sreh::system_clock clock;
  if (o.llm) {
    config::model_config m;
    m.provider = m.main.provider = "openai";
    m.main.name = "main";
    m.main.base_url = "http://127.0.0.1:9/v1"; // never called: the answers come from below
    m.main.model = "bench";
    auto gateway = std::make_shared<actors::model_gateway>(std::vector<config::model_route>{m.main},
                                                           nullptr, clock);
    auto llm = std::make_shared<actors::llm_provider>(gateway, nullptr, m, 64 * 1024);
    llm->answer_from([steps = o.steps](const std::string&, std::int64_t n) {
      actors::gateway_result g; // reason steps are 1, 3, 5, ...: the k-th calls test.echo
      g.ok = true;
      g.route = "main";
      g.provider = "openai";
      g.model = "bench";
      auto k = (n + 1) / 2;
      if (k <= steps) {
        g.response.tool_calls.push_back(
          {"call_" + std::to_string(k), "test_echo", R"({"probe":"bench"})"});
        g.response.finish = llm::finish_reason::tool_calls;
      } else {
        g.response.text = "done";
        g.response.finish = llm::finish_reason::stop;
      }
      g.response.usage = llm::usage{100, 10};
      return g;
    });
    provider = llm;
  }
  return provider;
}

/// A node on `dir` (or PostgreSQL) with the options' store, scheduler and node id.
sreh::expected<config::node_config> bench_config(const options& o, const std::string& dir) {
  config::node_config cfg;
  cfg.data_dir = dir;
  cfg.store.synchronous = o.sync;
  cfg.limits.scheduler_policy = o.scheduler;
  if (o.store == "postgres") {
    cfg.store.kind = "postgres";
    cfg.store.url = o.pg_url;
  }
  if (!o.node_id.empty())
    cfg.node_id = o.node_id;
  // The kernel alone: no recall before each run (its runs are not incidents), no postmortem
  // after (bench/memory_bench.cpp measures memory).
  cfg.memory.recall = 0;
  cfg.memory.postmortems = false;
  if (auto err = config::finalize(cfg))
    return err;
  return cfg;
}

/// Sleeps until `--start-at-ms`: several processes start their work at the same moment.
void wait_for_start(const options& o) {
  if (o.start_at_ms > 0) {
    auto at = std::chrono::system_clock::time_point{std::chrono::milliseconds{o.start_at_ms}};
    std::this_thread::sleep_until(at);
  }
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o))
    return 2;
  (void)setup_logging("warn", "text");
  const bool pg_store = o.store == "postgres";
  char tmpl[] = "/tmp/sreh-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto cfg_or = bench_config(o, dir);
  if (!cfg_or) {
    std::fprintf(stderr, "%s\n", cfg_or.error().message.c_str());
    return 1;
  }
  const auto& cfg = *cfg_or;
  std::unique_ptr<pg_probe> pg;
  if (pg_store && o.pg_stats) {
    try {
      pg = std::make_unique<pg_probe>(o.pg_url);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cannot connect for the statistics: %s\n", e.what());
      return 1;
    }
  }
  if (!set_proto_request(o))
    return 1;
  auto tools = std::make_shared<actors::tool_registry>();
  plugins::add_testkit_tools(*tools, cfg.tools);
  auto provider = bench_provider(o);
  policy::policy_set autonomous; // the benchmark measures the kernel, not approvals
  autonomous.default_mode = policy::mode::autonomous;
  auto parts = net::node_parts::start(cfg, tools, autonomous, provider);
  if (!parts) {
    std::fprintf(stderr, "cannot start the node: %s\n", parts.error().message.c_str());
    return 1;
  }
  auto& n = **parts;
  tracker t;
  auto token =
    n.hub().subscribe([&t](const actors::event_hub::batch& b) { t.on_events(b->events); });
  long idle_rss = current_rss_kb();
  wait_for_start(o);
  print_header(o, pg.get(), cfg.node_id);
  std::vector<result> results;
  for (int c : o.concurrency) {
    auto r = measure(n, t, o, c, pg.get());
    results.push_back(r);
    print_result(r);
    std::fflush(stdout);
  }
  // Memory with many runs in flight: keep `inflight` runs alive at once.
  result inflight;
  long before = current_rss_kb();
  if (o.inflight > 0) {
    options io = o;
    io.runs = o.inflight;
    io.warmup = 0;
    inflight = measure(n, t, io, o.inflight);
    std::printf("C=%-6d %7.0f steps/s   peak RSS %ld MB (idle node %ld MB, before %ld MB)\n",
                o.inflight, inflight.steps_per_s, inflight.peak_rss_kb / 1024, idle_rss / 1024,
                before / 1024);
  }
  std::printf("failed runs: %ld\n", t.failed());
  print_reproduce(o, cfg.node_id);
  std::string json = std::string{"{\"bench\":\"kernel\",\"flow\":"} + (o.flow ? "true" : "false") +
                     ",\"store\":\"" + o.store + "\",\"steps_per_run\":" + std::to_string(o.steps) +
                     ",\"results\":[";
  json += results_json(results);
  json += fmt::format(R"(],"inflight":{},"inflight_peak_rss_kb":{},"idle_rss_kb":{},"failed":{})",
                      o.inflight, inflight.peak_rss_kb, idle_rss, t.failed());
  if (pg_store)
    json += fmt::format(R"(,"node_id":"{}","total_steps":{},"process_cpu_s":{:.3f})", cfg.node_id,
                        n.kernel().stats().steps, cpu_seconds());
  json += "}";
  std::printf("%s\n", json.c_str());
  n.hub().unsubscribe(token);
  parts->reset();
  std::filesystem::remove_all(dir);
  return t.failed() == 0 ? 0 : 1;
}
