// Kernel benchmark: runs of N steps (each a trivial tool returning ~200 bytes of JSON, journaled
// exactly as real steps are: intent, effect, outcome) through the real kernel, group-commit
// writer and SQLite store, with C runs in flight at all times.
//
//   build/release/bench/sreh_bench [--runs 1000] [--warmup 100] [--steps 10]
//                                  [--concurrency 1,64] [--inflight 10000] [--sync normal|full]
//
// Prints, per concurrency: durable steps/s, runs/s, p50/p99 step latency (one step's start to
// the next step's start, from the step.intent events), CPU µs per step (process user+sys),
// rows, transactions and bytes written per step, peak RSS; then RSS with `--inflight` runs in
// flight; last, one JSON line with every figure.

#include <fmt/format.h>
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
#include <string>
#include <unordered_map>
#include <vector>

#include "node_parts.hpp"
#include "sreh/actors/scripted_provider.hpp"
#include "sreh/core/logger.hpp"
#include "sreh/plugins/testkit.hpp"

namespace {

using namespace sreh;
using steady = std::chrono::steady_clock;

struct options {
  int runs = 1000;
  int warmup = 100;
  int steps = 10;
  std::vector<int> concurrency{1, 64};
  int inflight = 10000;
  std::string sync = "normal";
};

struct result {
  int concurrency = 0;
  double steps_per_s = 0, runs_per_s = 0, p50_us = 0, p99_us = 0, cpu_us_per_step = 0;
  double rows_per_step = 0, txns_per_step = 0, bytes_per_step = 0;
  long peak_rss_kb = 0;
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

long current_rss_kb() {
  std::ifstream f{"/proc/self/statm"};
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
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

void submit_one(app::node_parts& n) {
  goal_request req;
  req.goal = "bench";
  req.submitter = "bench";
  req.budget.max_steps = 1000;
  n.kernel().submit(std::move(req), [](expected<actors::submit_reply> r) {
    if (!r)
      std::fprintf(stderr, "submit failed: %s\n", r.error().message.c_str());
  });
}

/// Keeps `c` runs in flight until `total` more runs have ended.
void drive(app::node_parts& n, tracker& t, int c, int total) {
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

result measure(app::node_parts& n, tracker& t, const options& o, int c) {
  drive(n, t, c, o.warmup);
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
  return r;
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", a.c_str());
      return false;
    }
    std::string v = argv[++i];
    if (a == "--runs")
      o.runs = std::stoi(v);
    else if (a == "--warmup")
      o.warmup = std::stoi(v);
    else if (a == "--steps")
      o.steps = std::stoi(v);
    else if (a == "--inflight")
      o.inflight = std::stoi(v);
    else if (a == "--sync")
      o.sync = v;
    else if (a == "--concurrency") {
      o.concurrency.clear();
      std::size_t pos = 0;
      while (pos <= v.size()) {
        auto comma = v.find(',', pos);
        o.concurrency.push_back(std::stoi(v.substr(pos, comma - pos)));
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o))
    return 2;
  (void) setup_logging("warn", "text");
  char tmpl[] = "/tmp/sreh-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  config::node_config cfg;
  cfg.data_dir = dir;
  cfg.store.synchronous = o.sync;
  if (auto err = config::finalize(cfg)) {
    std::fprintf(stderr, "%s\n", err.message.c_str());
    return 1;
  }
  std::vector<config::scripted_step> script(static_cast<std::size_t>(o.steps),
                                            {"test.echo", R"({"probe":"bench"})"});
  auto tools = std::make_shared<actors::tool_registry>();
  plugins::add_testkit_tools(*tools, cfg.tools);
  auto provider = std::make_shared<actors::scripted_provider>(script);
  policy::policy_set autonomous; // the benchmark measures the kernel, not approvals
  autonomous.default_mode = policy::mode::autonomous;
  auto parts = app::node_parts::start(cfg, tools, autonomous, provider);
  if (!parts) {
    std::fprintf(stderr, "cannot start the node: %s\n", parts.error().message.c_str());
    return 1;
  }
  auto& n = **parts;
  tracker t;
  auto token = n.hub().subscribe([&t](const actors::event_hub::batch& b) { t.on_events(*b); });
  long idle_rss = current_rss_kb();

  std::printf("sreh kernel benchmark: runs of %d steps (test.echo, ~200-byte results), SQLite "
              "synchronous=%s, %ld cores\n",
              o.steps, o.sync.c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<result> results;
  for (int c : o.concurrency) {
    auto r = measure(n, t, o, c);
    results.push_back(r);
    std::printf("C=%-4d %9.0f steps/s %8.0f runs/s   step p50 %6.0f us  p99 %6.0f us   "
                "cpu %5.1f us/step   %.2f rows, %.3f txns, %.0f bytes per step   peak RSS %ld MB\n",
                c, r.steps_per_s, r.runs_per_s, r.p50_us, r.p99_us, r.cpu_us_per_step,
                r.rows_per_step, r.txns_per_step, r.bytes_per_step, r.peak_rss_kb / 1024);
    std::fflush(stdout);
  }
  // Memory with many runs in flight: keep `inflight` runs alive at once.
  long before = current_rss_kb();
  auto inflight = measure(n, t, {o.inflight, 0, o.steps, {}, o.inflight, o.sync}, o.inflight);
  std::printf("C=%-6d %7.0f steps/s   peak RSS %ld MB (idle node %ld MB, before %ld MB)\n",
              o.inflight, inflight.steps_per_s, inflight.peak_rss_kb / 1024, idle_rss / 1024,
              before / 1024);
  std::printf("failed runs: %ld\n", t.failed());
  std::printf("reproduce: build/release/bench/sreh_bench --runs %d --warmup %d --steps %d "
              "--inflight %d --sync %s\n",
              o.runs, o.warmup, o.steps, o.inflight, o.sync.c_str());
  std::string json = "{\"bench\":\"kernel\",\"store\":\"sqlite\",\"steps_per_run\":" +
                     std::to_string(o.steps) + ",\"results\":[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& r = results[i];
    json += fmt::format(
      R"({}{{"concurrency":{},"steps_per_s":{:.0f},"runs_per_s":{:.0f},"p50_us":{:.0f},)"
      R"("p99_us":{:.0f},"cpu_us_per_step":{:.1f},"rows_per_step":{:.2f},"txns_per_step":{:.3f},)"
      R"("bytes_per_step":{:.0f},"peak_rss_kb":{}}})",
      i ? "," : "", r.concurrency, r.steps_per_s, r.runs_per_s, r.p50_us, r.p99_us,
      r.cpu_us_per_step, r.rows_per_step, r.txns_per_step, r.bytes_per_step, r.peak_rss_kb);
  }
  json += fmt::format(R"(],"inflight":{},"inflight_peak_rss_kb":{},"idle_rss_kb":{},"failed":{}}})",
                      o.inflight, inflight.peak_rss_kb, idle_rss, t.failed());
  std::printf("%s\n", json.c_str());
  n.hub().unsubscribe(token);
  parts->reset();
  std::filesystem::remove_all(dir);
  return t.failed() == 0 ? 0 : 1;
}
