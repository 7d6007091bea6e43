// The kernel benchmark's command line and what it prints (bench/kernel_bench.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench/kernel_bench.hpp"

namespace sreh::bench {

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
    else if (a == "--scheduler")
      o.scheduler = v;
    else if (a == "--store")
      o.store = v;
    else if (a == "--pg-url")
      o.pg_url = v;
    else if (a == "--node-id")
      o.node_id = v;
    else if (a == "--pg-stats")
      o.pg_stats = v == "on";
    else if (a == "--pg-settle-ms")
      o.pg_settle_ms = std::stoi(v);
    else if (a == "--flow")
      o.flow = v == "1";
    else if (a == "--llm")
      o.llm = v == "1";
    else if (a == "--start-at")
      o.start_at_ms = std::stoll(v);
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
  if (o.store != "sqlite" && o.store != "postgres") {
    std::fprintf(stderr, "--store: sqlite or postgres\n");
    return false;
  }
  if (o.store == "postgres" && o.pg_url.empty()) {
    std::fprintf(stderr, "--store postgres needs --pg-url\n");
    return false;
  }
  return true;
}

/// The URL with its password (if any) replaced by ***.
std::string masked(const std::string& url) {
  auto scheme = url.find("://");
  auto at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos)
    return url;
  auto colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at)
    return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

/// One line (and with PostgreSQL, its server's side) for one concurrency.
void print_result(const result& r) {
  std::printf("C=%-4d %9.0f steps/s %8.0f runs/s   step p50 %6.0f us  p99 %6.0f us   "
              "cpu %5.1f us/step   %.2f rows, %.3f txns, %.0f bytes per step   peak RSS %ld MB\n",
              r.concurrency, r.steps_per_s, r.runs_per_s, r.p50_us, r.p99_us, r.cpu_us_per_step,
              r.rows_per_step, r.txns_per_step, r.bytes_per_step, r.peak_rss_kb / 1024);
  if (r.has_pg) {
    std::printf("       postgres per step: %.3f txns, %.2f rows (%.2f inserted, %.2f updated, "
                "%.2f deleted), %.0f WAL bytes (pg_stat_wal %.0f, %.3f full-page images), "
                "%.3f WAL syncs\n",
                r.pg_xacts_per_step, r.pg_rows_per_step(), r.pg_inserted_per_step,
                r.pg_updated_per_step, r.pg_deleted_per_step, r.pg_wal_bytes_per_step,
                r.pg_stat_wal_bytes_per_step, r.pg_wal_fpi_per_step, r.pg_wal_syncs_per_step);
    if (r.has_pg_cpu)
      std::printf("       cpu ours %.1f us/step, postgres %.1f us/step, total %.1f us/step\n",
                  r.cpu_us_per_step, r.pg_cpu_us_per_step, r.total_cpu_us_per_step());
    else
      std::printf("       cpu ours %.1f us/step, postgres n/a (server not on this host)\n",
                  r.cpu_us_per_step);
  }
}

/// The results as the elements of a JSON array.
std::string results_json(const std::vector<result>& results) {
  std::string json;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& r = results[i];
    json += fmt::format(
      R"({}{{"concurrency":{},"steps_per_s":{:.0f},"runs_per_s":{:.0f},"p50_us":{:.0f},)"
      R"("p99_us":{:.0f},"cpu_us_per_step":{:.1f},"rows_per_step":{:.2f},"txns_per_step":{:.3f},)"
      R"("bytes_per_step":{:.0f},"peak_rss_kb":{})",
      i ? "," : "", r.concurrency, r.steps_per_s, r.runs_per_s, r.p50_us, r.p99_us,
      r.cpu_us_per_step, r.rows_per_step, r.txns_per_step, r.bytes_per_step, r.peak_rss_kb);
    if (r.has_pg) {
      json += fmt::format(
        R"(,"pg_xacts_per_step":{:.3f},"pg_rows_per_step":{:.2f},"pg_inserted_per_step":{:.2f},)"
        R"("pg_updated_per_step":{:.2f},"pg_deleted_per_step":{:.2f},"pg_wal_bytes_per_step":{:.0f},)"
        R"("pg_stat_wal_bytes_per_step":{:.0f},"pg_wal_fpi_per_step":{:.3f},)"
        R"("pg_wal_syncs_per_step":{:.3f})",
        r.pg_xacts_per_step, r.pg_rows_per_step(), r.pg_inserted_per_step, r.pg_updated_per_step,
        r.pg_deleted_per_step, r.pg_wal_bytes_per_step, r.pg_stat_wal_bytes_per_step,
        r.pg_wal_fpi_per_step, r.pg_wal_syncs_per_step);
      if (r.has_pg_cpu)
        json += fmt::format(R"(,"pg_cpu_us_per_step":{:.1f},"total_cpu_us_per_step":{:.1f})",
                            r.pg_cpu_us_per_step, r.total_cpu_us_per_step());
    }
    json += "}";
  }
  return json;
}

/// What is measured, on what.
void print_header(const options& o, pg_probe* pg, const std::string& node_id) {
  if (o.store != "postgres")
    std::printf("sreh kernel benchmark: %s runs of %d steps (test.echo, ~200-byte results), "
                "SQLite synchronous=%s, %ld cores\n",
                o.flow  ? "flow"
                : o.llm ? "model-driven goal (a reason step per tool step)"
                        : "goal",
                o.steps, o.sync.c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  else
    std::printf("sreh kernel benchmark: runs of %d steps (test.echo, ~200-byte results), "
                "PostgreSQL%s%s (%s), node %s, %ld cores\n",
                o.steps, pg ? " " : "", pg ? pg->version().c_str() : "", masked(o.pg_url).c_str(),
                node_id.c_str(), sysconf(_SC_NPROCESSORS_ONLN));
}

/// The command line that measures the same again.
void print_reproduce(const options& o, const std::string& node_id) {
  std::string conc;
  for (auto c : o.concurrency)
    conc += (conc.empty() ? "" : ",") + std::to_string(c);
  if (o.store != "postgres")
    std::printf("reproduce: build/release/bench/sreh_bench --runs %d --warmup %d --steps %d "
                "--inflight %d --sync %s --scheduler %s --flow %d --llm %d\n",
                o.runs, o.warmup, o.steps, o.inflight, o.sync.c_str(), o.scheduler.c_str(),
                o.flow ? 1 : 0, o.llm ? 1 : 0);
  else
    std::printf("reproduce: build/release/bench/sreh_bench --store postgres --pg-url '%s' "
                "--node-id %s --runs %d --warmup %d --steps %d --concurrency %s --inflight %d "
                "--pg-stats %s --pg-settle-ms %d --scheduler %s (or bench/pg_bench.sh)\n",
                masked(o.pg_url).c_str(), node_id.c_str(), o.runs, o.warmup, o.steps, conc.c_str(),
                o.inflight, o.pg_stats ? "on" : "off", o.pg_settle_ms, o.scheduler.c_str());
}

} // namespace sreh::bench
