// Passivation benchmark: parks N runs waiting for approval on one node (review mode; each run's
// single step is a mutating tool), reports RSS before and after, then approves M of them and
// reports how long reactivating and finishing them takes. With `--flow 1` the parked runs are
// flow runs waiting on a durable timer (`wait: 1h`), and none is woken.
//
//   build/release/bench/sreh_park_bench [--parked 100000] [--approve 10000] [--window 512]
//                                       [--flow 0|1]
//
// Prints the figures, the command to reproduce, and last one JSON line.

#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/gateway/scripted_provider.hpp"
#include "bench/bench_util.hpp"
#include "config/flows/flow_file.hpp"
#include "core/base/json.hpp"
#include "core/base/logger.hpp"
#include "core/flows/runner.hpp"
#include "net/node/node_parts.hpp"
#include "plugins/tools/testkit/testkit.hpp"

namespace {

using namespace sreh;
using namespace sreh::bench;
using steady = std::chrono::steady_clock;

/// Counts parked and finished runs and collects approval ids from committed events.
class tracker {
 public:
  void on_events(const std::vector<event>& evs) {
    std::lock_guard<std::mutex> lock{mtx_};
    for (auto& e : evs) {
      if (e.kind == "approval.requested") {
        auto doc = json::parse(e.data);
        if (doc && doc->IsObject() && doc->HasMember("approval"))
          approvals_.emplace_back((*doc)["approval"].GetString());
      } else if (e.kind == "run.waiting") {
        ++parked_;
      } else if (e.kind == "run.succeeded" || e.kind == "run.failed") {
        ++finished_;
      } else {
        continue;
      }
      cv_.notify_all();
    }
  }

  void wait_parked(long n) {
    std::unique_lock<std::mutex> lock{mtx_};
    cv_.wait(lock, [&] { return parked_ >= n; });
  }

  void wait_finished(long n) {
    std::unique_lock<std::mutex> lock{mtx_};
    cv_.wait(lock, [&] { return finished_ >= n; });
  }

  std::vector<std::string> approvals() {
    std::lock_guard<std::mutex> lock{mtx_};
    return approvals_;
  }

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  long parked_ = 0, finished_ = 0;
  std::vector<std::string> approvals_;
};

/// What each parked run is: a goal waiting for an approval, or (`flow`) a flow on a timer.
expected<goal_request> park_goal(bool flow) {
  goal_request proto;
  proto.goal = "park";
  proto.submitter = "bench";
  if (flow) {
    auto f = config::load_flow_string("flow: park\nsteps:\n  - {id: settle, wait: 1h}\n  - {id: "
                                      "after, tool: test.echo, args: {probe: after}}\n",
                                      "park.yaml");
    if (!f)
      return f.error();
    proto.goal = "flow park";
    proto.kind = "flow";
    proto.spec = flows::pin(*f, {});
    proto.budget.max_steps = flows::max_run_steps;
  }
  return proto;
}

/// Approves the first `approve` parked runs; the seconds until all of them finished.
double approve_parked(net::node_parts& n, tracker& t, int approve) {
  auto ids = t.approvals();
  auto t1 = steady::now();
  for (int i = 0; i < approve; ++i) {
    approval_vote v{"bench-approver", "approver", true, {}, 0};
    n.kernel().decide(ids[static_cast<std::size_t>(i)], v, [](expected<approval> a) {
      if (!a)
        std::fprintf(stderr, "decide failed: %s\n", a.error().message.c_str());
    });
  }
  t.wait_finished(approve);
  return std::chrono::duration<double>(steady::now() - t1).count();
}

} // namespace

int main(int argc, char** argv) {
  int parked = arg(argc, argv, "--parked", 100000);
  int approve = std::min(parked, arg(argc, argv, "--approve", 10000));
  int window = arg(argc, argv, "--window", 512);
  const bool flow = arg(argc, argv, "--flow", 0) != 0;
  if (flow)
    approve = 0;
  auto proto = park_goal(flow);
  if (!proto)
    return std::fprintf(stderr, "%s\n", proto.error().message.c_str()), 1;
  (void)setup_logging("warn", "text");
  char tmpl[] = "/tmp/sreh-parkbench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  config::node_config cfg;
  cfg.data_dir = dir;
  if (auto err = config::finalize(cfg))
    return std::fprintf(stderr, "%s\n", err.message.c_str()), 1;
  auto tools = std::make_shared<actors::tool_registry>();
  plugins::add_testkit_tools(*tools, cfg.tools);
  auto provider = std::make_shared<actors::scripted_provider>(
    std::vector<config::scripted_step>{{"test.mutate", R"({"target":"svc"})"}});
  policy::policy_set review; // every mutating step needs one approver
  review.default_mode = policy::mode::review;
  auto parts = net::node_parts::start(cfg, tools, review, provider);
  if (!parts)
    return std::fprintf(stderr, "cannot start: %s\n", parts.error().message.c_str()), 1;
  auto& n = **parts;
  tracker t;
  auto token =
    n.hub().subscribe([&t](const actors::event_hub::batch& b) { t.on_events(b->events); });
  malloc_trim(0);
  long idle = current_rss_kb();

  auto t0 = steady::now();
  for (int i = 0; i < parked; ++i) {
    if (i >= window)
      t.wait_parked(i - window + 1); // keep at most `window` runs in flight while parking
    n.kernel().submit(*proto, [](expected<actors::submit_reply> r) {
      if (!r)
        std::fprintf(stderr, "submit failed: %s\n", r.error().message.c_str());
    });
  }
  t.wait_parked(parked);
  while (n.kernel().stats().active_runs > 0) // the last actors stop right after their commit
    std::this_thread::yield();
  double park_s = std::chrono::duration<double>(steady::now() - t0).count();
  malloc_trim(0); // what the parked runs keep, not what parking them left in malloc's caches
  long after = current_rss_kb();
  auto stats = n.kernel().stats();
  std::printf("parked %d runs in %.1f s (%.0f runs/s); active run actors %ld, parked %ld\n", parked,
              park_s, parked / park_s, static_cast<long>(stats.active_runs),
              static_cast<long>(stats.parked));
  std::printf("RSS idle node %ld MB, with %d parked %s %ld MB: %.0f bytes per parked run\n",
              idle / 1024, parked,
              flow ? "flow runs (waiting on a timer)" : "runs (waiting for an approval)",
              after / 1024, (after - idle) * 1024.0 / parked);

  double resume_s = approve_parked(n, t, approve);
  if (approve > 0)
    std::printf("approved %d: all reactivated and finished in %.2f s (%.0f runs/s)\n", approve,
                resume_s, approve / resume_s);
  std::printf("reproduce: build/release/bench/sreh_park_bench --parked %d --approve %d "
              "--window %d --flow %d\n",
              parked, approve, window, flow ? 1 : 0);
  std::printf("{\"bench\":\"park\",\"flow\":%s,\"parked\":%d,\"park_s\":%.2f,\"idle_rss_kb\":%ld,"
              "\"parked_rss_kb\":%ld,\"bytes_per_parked_run\":%.0f,\"approved\":%d,"
              "\"resume_s\":%.3f,\"resumed_per_s\":%.0f}\n",
              flow ? "true" : "false", parked, park_s, idle, after,
              (after - idle) * 1024.0 / parked, approve, resume_s, approve / resume_s);
  n.hub().unsubscribe(token);
  parts->reset();
  std::filesystem::remove_all(dir);
  return 0;
}
