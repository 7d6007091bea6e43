#pragma once
// The PostgreSQL server's side of a benchmark window (kernel_bench.cpp --store postgres):
// pg_stat_database / pg_stat_wal counters and the CPU of the server's processes from /proc.

#include <pqxx/pqxx>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace sreh::bench {

/// The PostgreSQL server's side of a window, read on a connection of its own.
class pg_probe {
 public:
  struct counters {
    double xacts = 0, inserted = 0, updated = 0, deleted = 0; // pg_stat_database
    double wal_bytes = 0, wal_syncs = 0, wal_fpi = 0;         // pg_stat_wal
  };
  /// CPU ticks of the server processes: per live process, and what the postmaster reaped.
  struct cpu_sample {
    std::map<int, long long> live;
    long long reaped = 0;
  };

  explicit pg_probe(const std::string& url) : conn_(url) {
    pqxx::nontransaction tx{conn_};
    auto r = tx.exec("SELECT pg_backend_pid(), current_database(), "
                     "current_setting('server_version')");
    own_pid_ = r[0][0].as<int>();
    db_ = r[0][1].as<std::string>();
    version_ = r[0][2].as<std::string>();
    // The postmaster is our backend's parent; visible only when the server runs on this host
    // (a remote server's pid may name an unrelated local process: both must be `postgres`).
    auto st = read_stat(own_pid_);
    if (st && st->comm == "postgres") {
      auto pm = read_stat(st->ppid);
      if (pm && pm->comm == "postgres")
        postmaster_ = st->ppid;
    }
  }

  const std::string& version() const { return version_; }
  bool has_cpu() const { return postmaster_ > 1; }

  /// Cumulative statistics, freshly read (never a cached snapshot).
  counters read() {
    pqxx::nontransaction tx{conn_};
    tx.exec("SELECT pg_stat_clear_snapshot()");
    auto r = tx.exec_params(
      "SELECT d.xact_commit + d.xact_rollback, d.tup_inserted, d.tup_updated, d.tup_deleted, "
      "w.wal_bytes, w.wal_sync, w.wal_fpi FROM pg_stat_database d, pg_stat_wal w "
      "WHERE d.datname = $1",
      db_);
    counters c;
    c.xacts = r[0][0].as<double>();
    c.inserted = r[0][1].as<double>();
    c.updated = r[0][2].as<double>();
    c.deleted = r[0][3].as<double>();
    c.wal_bytes = r[0][4].as<double>();
    c.wal_syncs = r[0][5].as<double>();
    c.wal_fpi = r[0][6].as<double>();
    return c;
  }

  /// The WAL insert position in bytes: exact at any moment, unlike pg_stat_wal.
  double wal_lsn() {
    pqxx::nontransaction tx{conn_};
    return tx.exec("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')")[0][0].as<double>();
  }

  cpu_sample cpu() const {
    cpu_sample s;
    if (!has_cpu())
      return s;
    if (auto pm = read_stat(postmaster_)) {
      s.live[postmaster_] = pm->ticks;
      s.reaped = pm->child_ticks;
    }
    for (const auto& entry : std::filesystem::directory_iterator{"/proc"}) {
      const auto name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
        continue;
      auto st = read_stat(std::stoi(name));
      if (st && st->ppid == postmaster_)
        s.live[std::stoi(name)] = st->ticks;
    }
    return s;
  }

  /// Server CPU seconds between two samples, processes that started or ended between them
  /// included (an ended one's whole time is in the postmaster's reaped ticks).
  static double cpu_seconds(const cpu_sample& a, const cpu_sample& b) {
    long long ticks = b.reaped - a.reaped;
    for (auto& [pid, t] : b.live) {
      auto it = a.live.find(pid);
      ticks += t - (it == a.live.end() ? 0 : it->second);
    }
    for (auto& [pid, t] : a.live)
      if (b.live.count(pid) == 0)
        ticks -= t;
    return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }

 private:
  struct proc_stat {
    std::string comm;
    int ppid = 0;
    long long ticks = 0, child_ticks = 0;
  };
  static std::optional<proc_stat> read_stat(int pid) {
    std::ifstream f{"/proc/" + std::to_string(pid) + "/stat"};
    std::string line;
    if (!f || !std::getline(f, line))
      return std::nullopt;
    auto close = line.rfind(')'); // the command name may hold spaces and parentheses
    if (close == std::string::npos)
      return std::nullopt;
    auto open = line.find('(');
    std::istringstream in{line.substr(close + 2)};
    std::vector<std::string> fields; // from field 3 (state) on
    std::string f3;
    while (in >> f3 && fields.size() < 16)
      fields.push_back(f3);
    if (fields.size() < 15)
      return std::nullopt;
    proc_stat st;
    if (open != std::string::npos && open < close)
      st.comm = line.substr(open + 1, close - open - 1);
    st.ppid = std::stoi(fields[1]);                                   // field 4
    st.ticks = std::stoll(fields[11]) + std::stoll(fields[12]);       // utime, stime
    st.child_ticks = std::stoll(fields[13]) + std::stoll(fields[14]); // cutime, cstime
    return st;
  }

  pqxx::connection conn_;
  int own_pid_ = 0, postmaster_ = 0;
  std::string db_, version_;
};

} // namespace sreh::bench
