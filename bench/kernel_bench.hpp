#pragma once
// The kernel benchmark's options and results, and how it reads and prints them
// (kernel_bench.cpp drives the node, kernel_report.cpp reads the command line and reports).

#include <cstdint>
#include <string>
#include <vector>

#include "bench/pg_probe.hpp"

namespace sreh::bench {

struct options {
  int runs = 1000;
  int warmup = 100;
  int steps = 10;
  std::vector<int> concurrency{1, 64};
  int inflight = 10000;
  std::string sync = "normal";
  std::string scheduler = "sharing"; // CAF's scheduler policy: sharing | stealing
  bool flow = false;                 // flow runs instead of goal runs
  bool llm = false;                  // a language-model provider answering at once
  std::string store = "sqlite";
  std::string pg_url;
  std::string node_id;
  bool pg_stats = true;
  int pg_settle_ms = 11000;
  std::int64_t start_at_ms = 0;
};

struct result {
  int concurrency = 0;
  double steps_per_s = 0, runs_per_s = 0, p50_us = 0, p99_us = 0, cpu_us_per_step = 0;
  double rows_per_step = 0, txns_per_step = 0, bytes_per_step = 0;
  long peak_rss_kb = 0;
  // PostgreSQL only (`has_pg`): the server's side of the window, per step.
  bool has_pg = false, has_pg_cpu = false;
  double pg_xacts_per_step = 0, pg_inserted_per_step = 0, pg_updated_per_step = 0,
         pg_deleted_per_step = 0, pg_wal_bytes_per_step = 0, pg_stat_wal_bytes_per_step = 0,
         pg_wal_syncs_per_step = 0, pg_wal_fpi_per_step = 0, pg_cpu_us_per_step = 0;

  [[nodiscard]] double pg_rows_per_step() const {
    return pg_inserted_per_step + pg_updated_per_step + pg_deleted_per_step;
  }
  [[nodiscard]] double total_cpu_us_per_step() const {
    return cpu_us_per_step + pg_cpu_us_per_step;
  }
};

/// Reads the command line into `o`; false (after saying why) when it is wrong.
[[nodiscard]] bool parse(int argc, char** argv, options& o);
/// The URL with its password (if any) replaced by ***.
std::string masked(const std::string& url);
/// One line (and with PostgreSQL, its server's side) for one concurrency.
void print_result(const result& r);
/// The results as the elements of a JSON array.
std::string results_json(const std::vector<result>& results);
/// What is measured, on what.
void print_header(const options& o, pg_probe* pg, const std::string& node_id);
/// The command line that measures the same again.
void print_reproduce(const options& o, const std::string& node_id);

} // namespace sreh::bench
