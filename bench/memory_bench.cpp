// Long-term memory search: p50/p99 of one search (the store's full-text engine and
// memory::rank) over a generated corpus of incidents, on SQLite (default) or PostgreSQL.
//
//   sreh_memory_bench [--entries 100000] [--queries 1000] [--store sqlite|postgres]
//                     [--pg-url URL] [--pg-schema NAME]
//
// On PostgreSQL each run loads a schema of its own (default `memory_bench_<time>_<pid>`), so runs
// do not meet each other's entries; it stays for a look afterwards (the figures name it), and
// goes with `DROP SCHEMA <name> CASCADE` or with the throwaway server of scripts/pg.sh.
//
// The corpus: incidents of 400 services × 20 kinds of fault, each told with a few words drawn
// from a 2,000-word vocabulary, all committed in batches of 1,000 entries; the queries name a
// service and a fault in other words. Prints the figures and the command to reproduce them.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "core/memory/search.hpp"
#include "net/node/node_parts.hpp"
#include "persistence/postgres/postgres_store.hpp"

using namespace sreh;

namespace {

const char* const fault_words[][2] = {
  {"5xx errors after release rolled back deploy", "500s since deployment"},
  {"connection pool exhausted requests timed out", "db connections hang"},
  {"disk filled writes failed ENOSPC rotated logs", "out of disk space"},
  {"TLS certificate expired handshake failed renewed", "certificates expiring"},
  {"pods OOMKilled memory leak heap", "leaking memory oomkilled"},
  {"DNS resolution failed SERVFAIL resolver", "cannot resolve hostnames"},
  {"redis maxmemory evicted keys hit ratio", "cache evictions"},
  {"kafka consumer lag poison message backlog", "consumers lagging"},
  {"throttled 429 quota upstream", "rate limited"},
  {"feature flag null pointer exceptions", "exceptions after flag flip"},
  {"CPU throttled cgroup limit latency", "cpu throttling"},
  {"garbage collection pauses JVM stalled", "gc pause stalls"},
  {"replication lag replica stale reads", "replica lagging"},
  {"transactions deadlocked aborted retries", "deadlocks"},
  {"credentials rotated password authentication failed", "auth failing after rotation"},
  {"packet loss retransmits TCP resets", "intermittent resets"},
  {"clock drifted NTP tokens rejected", "time skew"},
  {"thread pool saturated blocking calls queued", "threads saturated"},
  {"CrashLoopBackOff missing environment variable", "crashlooping on start"},
  {"dropped index full table scan slow queries", "slow queries"},
};
constexpr int fault_count = 20;
constexpr int service_count = 400;

std::string word(std::mt19937_64& rng) {
  static const std::vector<std::string> vocabulary = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 2000; ++i)
      v.push_back(fmt::format("w{}x", i));
    return v;
  }();
  return vocabulary[rng() % vocabulary.size()];
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

const char* option(int argc, char** argv, const char* name, const char* def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view{argv[i]} == name)
      return argv[i + 1];
  return def;
}

/// Loads `entries` generated incidents in batches of 1000; the seconds it took, or -1 (after
/// printing why) when a commit failed.
double load(persistence::store& store, int entries, std::mt19937_64& rng, timestamp_us t0) {
  const auto load_start = std::chrono::steady_clock::now();
  for (int done = 0; done < entries;) {
    std::vector<persistence::write_batch> batches;
    for (int i = 0; i < 1000 && done < entries; ++i, ++done) {
      const int f = done % fault_count;
      const int s = (done / fault_count) % service_count;
      std::string text = fmt::format("svc{} {}", s, fault_words[f][0]);
      for (int k = 0; k < 12; ++k)
        text += ' ' + word(rng);
      auto e = memory::create(
        memory::draft{
          memory::kind::incident, std::move(text), {{"service", fmt::format("svc{}", s)}}, {}, {}},
        fmt::format("mem_{:026d}", done), "bench", t0 + done);
      persistence::write_batch b;
      b.memories.push_back(std::move(*e));
      batches.push_back(std::move(b));
    }
    auto results = store.commit(batches);
    if (results.empty() || results.front().err) {
      std::fprintf(stderr, "memory bench: commit: %s\n",
                   results.empty() ? "no result" : results.front().err.message.c_str());
      return -1;
    }
    if (done % 20'000 == 0)
      std::fprintf(stderr, "loaded %d of %d entries\n", done, entries);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
}

} // namespace

int main(int argc, char** argv) {
  const int entries = bench::arg(argc, argv, "--entries", 100'000);
  const int queries = bench::arg(argc, argv, "--queries", 1000);
  const std::string kind = option(argc, argv, "--store", "sqlite");
  config::store_config sc;
  sc.kind = kind;
  char dir[] = "/tmp/sreh-memory-bench-XXXXXX";
  if (kind == "sqlite") {
    if (mkdtemp(dir) == nullptr)
      return std::perror("mkdtemp"), 1;
    sc.path = std::string{dir} + "/sreh.db";
  }
  std::string schema;
  auto store = [&]() -> expected<persistence::store_ptr> {
    if (kind != "postgres")
      return net::open_store(sc);
    const auto fresh = fmt::format("memory_bench_{}_{}", std::time(nullptr), ::getpid());
    schema = option(argc, argv, "--pg-schema", fresh.c_str());
    return persistence::open_postgres_store({option(argc, argv, "--pg-url", ""), schema, 4});
  }();
  if (!store) {
    std::fprintf(stderr, "memory bench: %s\n", store.error().message.c_str());
    return 1;
  }
  std::mt19937_64 rng{42};
  const timestamp_us t0 = 1'700'000'000'000'000;
  const double load_s = load(**store, entries, rng, t0);
  if (load_s < 0)
    return 1;
  std::vector<double> ms;
  int first = 0;
  for (int i = 0; i < queries; ++i) {
    const int f = static_cast<int>(rng() % fault_count);
    const int s = static_cast<int>(rng() % service_count);
    memory::query q;
    q.text = fmt::format("svc{} {} {}", s, fault_words[f][1], word(rng));
    q.limit = 10;
    const auto start = std::chrono::steady_clock::now();
    auto found = (*store)->search_memories(q);
    if (!found) {
      std::fprintf(stderr, "memory bench: search: %s\n", found.error().message.c_str());
      return 1;
    }
    auto hits = memory::rank(std::move(*found), q, t0 + entries);
    ms.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!hits.empty() && hits.front().e.labels["service"] == fmt::format("svc{}", s))
      ++first;
  }
  std::printf("memory search, %s, %d entries (loaded in %.1f s), %d queries: p50 %.2f ms, "
              "p99 %.2f ms, max %.2f ms; the named service first in %d%%; peak RSS %ld MB\n",
              kind.c_str(), entries, load_s, queries, percentile(ms, 0.5), percentile(ms, 0.99),
              *std::max_element(ms.begin(), ms.end()), first * 100 / queries,
              bench::peak_rss_kb() / 1024);
  if (!schema.empty())
    std::printf("loaded into schema %s (DROP SCHEMA %s CASCADE removes it)\n", schema.c_str(),
                schema.c_str());
  std::printf("reproduce: build/release/bench/sreh_memory_bench --entries %d --queries %d "
              "--store %s%s\n",
              entries, queries, kind.c_str(), kind == "postgres" ? " --pg-url URL" : "");
  if (kind == "sqlite")
    std::system(fmt::format("rm -rf {}", dir).c_str());
  return 0;
}
