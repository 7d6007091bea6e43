#pragma once
// The fixture of the relay suites: the store of SREH_TEST_STORE behind a group-commit writer
// that feeds an event hub (as in a node), concurrent writers, a stream of its own per test on
// the NATS server of SREH_NATS_URL, and checks of what reached the stream.

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/hub/event_hub.hpp"
#include "core/base/json.hpp"
#include "core/model/json_codecs.hpp"
#include "net/nats/jetstream.hpp"
#include "net/nats/relay.hpp"
#include "persistence/store/group_writer.hpp"
#include "tests/support/store_factory.hpp"

namespace sreh::test {

/// SREH_NATS_URL, or a failed test that says how to get one.
inline std::string nats_url() {
  const char* v = std::getenv("SREH_NATS_URL");
  if (v == nullptr || *v == '\0')
    CAF_FAIL("the relay tests need SREH_NATS_URL: scripts/nats.sh start DIR PORT MONITOR_PORT "
             "prints one; scripts/test.sh sets it");
  return v;
}

/// A free TCP port on 127.0.0.1 (bound to 0 and released).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    CAF_FAIL("cannot find a free port");
  ::close(fd);
  return ntohs(a.sin_port);
}

/// True when something accepts TCP connections on 127.0.0.1:port.
inline bool port_open(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  ::close(fd);
  return ok;
}

/// A nats-server with JetStream of the test's own, on a fixed port and store directory, so that
/// it can be stopped and started again "in place".
class nats_process {
 public:
  nats_process(std::string store_dir) : dir_(std::move(store_dir)), port_(free_port()) {}
  ~nats_process() { stop(); }

  [[nodiscard]] std::string url() const { return fmt::format("nats://127.0.0.1:{}", port_); }

  void start() {
    const auto port = std::to_string(port_);
    const char* bin = std::getenv("SREH_NATS_SERVER");
    std::string exe = bin != nullptr && *bin != '\0' ? bin : "/usr/sbin/nats-server";
    std::vector<std::string> args{exe, "-js", "-a", "127.0.0.1", "-p", port, "-sd", dir_};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    const int rc = ::posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), ::environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
      CAF_FAIL("cannot start " << exe << ": " << std::strerror(rc)
                               << " (set SREH_NATS_SERVER to the nats-server binary)");
    for (int i = 0; i < 400 && !port_open(port_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{25});
    if (!port_open(port_))
      CAF_FAIL("nats-server did not open port " << port_);
  }

  /// SIGTERM (the server shuts down cleanly), SIGKILL after 10 s; waits for the exit.
  void stop() {
    if (pid_ <= 0)
      return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::string dir_;
  int port_;
  pid_t pid_ = -1;
};

/// Polls `pred` every 10 ms until it holds; false after `timeout`.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return true;
}

/// A fixture `F` (constructed from a NATS URL) on a nats-server of the test's own, which the
/// test can stop and start again in place. SREH_NATS_URL must still be set: it says that NATS is
/// installed and meant to be used.
template <class F>
struct own_server_fixture {
  temp_dir nats_dir;
  nats_process server{nats_dir.path() + "/store"};
  std::unique_ptr<F> f;

  own_server_fixture() {
    (void)nats_url();
    server.start();
    f = std::make_unique<F>(server.url());
  }
};

/// What a test wrote: every event id, by the thread that wrote it.
struct written {
  std::size_t batches = 0;
  std::size_t events = 0;
  std::size_t failures = 0;
};

struct relay_fixture {
  temp_dir dir;
  persistence::store_ptr st;
  actors::event_hub hub;
  std::unique_ptr<persistence::group_writer> writer;
  std::string stream;
  std::string prefix;
  std::string url;

  relay_fixture() : relay_fixture(nats_url()) {}

  explicit relay_fixture(std::string nats) : url(std::move(nats)) {
    if (dir.path().empty())
      CAF_FAIL("mkdtemp failed");
    auto s = open_test_store(dir.path());
    if (!s)
      CAF_FAIL("cannot open the test store: " << s.error().message);
    st = std::move(*s);
    writer = std::make_unique<persistence::group_writer>(*st);
    writer->set_events_listener([this](const std::vector<event>& evs) { hub.publish(evs); });
    writer->start();
    static int counter = 0;
    const auto tag =
      fmt::format("{}_{}_{:x}", ::getpid(), ++counter,
                  std::chrono::steady_clock::now().time_since_epoch().count() & 0xffffff);
    stream = "sreh-test-" + tag;
    prefix = "sreh_test_" + tag + ".events";
  }

  ~relay_fixture() {
    writer->stop();
    if (auto c = client(); c)
      (void)c->delete_stream();
  }

  net::relay_options options(std::string name = "jetstream") const {
    net::relay_options o;
    o.name = std::move(name);
    o.url = url;
    o.stream = stream;
    o.subject_prefix = prefix;
    o.poll_interval = std::chrono::milliseconds{200};
    o.min_backoff = std::chrono::milliseconds{50};
    o.max_backoff = std::chrono::milliseconds{500};
    o.ack_wait = std::chrono::milliseconds{2'000};
    return o;
  }

  std::unique_ptr<net::jetstream_client> client() const {
    net::jetstream_options o;
    o.url = url;
    o.stream = stream;
    o.subject_prefix = prefix;
    auto c = net::jetstream_client::connect(o);
    if (!c)
      return nullptr;
    for (int i = 0; i < 200 && !(*c)->connected(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{25});
    return std::move(*c);
  }

  /// `threads` writers each submit `batches` batches of `per_batch` events through the
  /// group-commit writer, waiting for each commit (as run actors do); `pause` between batches.
  written write(int threads, int batches, int per_batch,
                std::chrono::microseconds pause = std::chrono::microseconds{0}) {
    std::atomic<std::size_t> ok{0}, failed{0};
    std::vector<std::thread> ts;
    static std::atomic<int> round{0};
    const int r = ++round;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        for (int b = 0; b < batches; ++b) {
          persistence::write_batch wb;
          for (int k = 0; k < per_batch; ++k) {
            event e;
            e.id = fmt::format("evt_r{}_t{}_b{}_k{}", r, t, b, k);
            e.run_id = fmt::format("run_t{}", t);
            e.run_seq = b * per_batch + k + 1;
            e.kind = k % 2 == 0 ? "step.intent" : "step.outcome";
            e.at = 1'700'000'000'000'000 + e.run_seq;
            e.data = fmt::format(R"({{"t":{},"b":{},"k":{}}})", t, b, k);
            wb.events.push_back(std::move(e));
          }
          std::promise<bool> done;
          writer->submit(std::move(wb),
                         [&done](persistence::commit_result cr) { done.set_value(!cr.err); });
          (done.get_future().get() ? ok : failed).fetch_add(1);
          if (pause.count() > 0)
            std::this_thread::sleep_for(pause);
        }
      });
    for (auto& t : ts)
      t.join();
    return {ok.load(), ok.load() * static_cast<std::size_t>(per_batch), failed.load()};
  }

  /// The offset the store holds for `name`.
  std::int64_t stored_offset(const std::string& name = "jetstream") {
    auto off = st->relay_offset(name);
    if (!off)
      CAF_FAIL("relay_offset(" << name << "): " << off.error().message);
    return off.value();
  }

  std::int64_t last_seq() {
    auto s = st->stats();
    CAF_REQUIRE(s.has_value());
    return s->last_event_seq;
  }

  /// Waits until `r` has stored `target` as its offset; false after `timeout`.
  static bool wait_offset(const net::relay& r, std::int64_t target,
                          std::chrono::seconds timeout = std::chrono::seconds{60}) {
    return eventually([&] { return r.stats().offset >= target; }, timeout);
  }

  /// Every event of the store is in the stream exactly once (by Nats-Msg-Id), nothing else is,
  /// and (when `in_order`) the stream holds them in seq order. Returns the stream's messages.
  std::vector<net::stream_message> check_stream(bool in_order = true) {
    auto c = client();
    CAF_REQUIRE(c != nullptr);
    auto msgs = c->read_stream();
    CAF_REQUIRE(msgs.has_value());
    std::map<std::string, int> count;
    for (const auto& m : *msgs)
      ++count[m.msg_id];
    std::vector<event> evs;
    persistence::event_filter f;
    f.limit = 10'000;
    for (;;) {
      auto page = st->read_events(f);
      CAF_REQUIRE(page.has_value());
      if (page->empty())
        break;
      f.after_seq = page->back().seq;
      evs.insert(evs.end(), page->begin(), page->end());
    }
    CAF_CHECK_EQUAL(msgs->size(), evs.size());
    std::size_t missing = 0, repeated = 0;
    for (const auto& e : evs) {
      auto it = count.find(e.id);
      if (it == count.end())
        ++missing;
      else if (it->second != 1)
        ++repeated;
    }
    CAF_CHECK_EQUAL(missing, 0u);
    CAF_CHECK_EQUAL(repeated, 0u);
    std::size_t out_of_order = 0;
    for (std::size_t i = 1; i < msgs->size(); ++i)
      if ((*msgs)[i].seq <= (*msgs)[i - 1].seq)
        ++out_of_order;
    if (in_order)
      CAF_CHECK_EQUAL(out_of_order, 0u);
    else
      CAF_MESSAGE("messages out of seq order in the stream: " << out_of_order);
    for (std::size_t i = 0; i < msgs->size() && i < evs.size(); ++i)
      if ((*msgs)[i].seq == evs[i].seq) {
        CAF_CHECK_EQUAL((*msgs)[i].subject, net::event_subject(prefix, evs[i]));
        CAF_CHECK_EQUAL((*msgs)[i].data, json::to_json(evs[i]));
      }
    return std::move(*msgs);
  }
};

/// A store that hides the events of chosen seqs from `read_events` until `release` (an event
/// that commits "late"); everything else goes to the real store.
class gap_store final : public persistence::store {
 public:
  explicit gap_store(persistence::store& s) : s_(s) {}
  void hide(std::int64_t seq) {
    std::lock_guard lk{mtx_};
    hidden_.insert(seq);
  }
  void release() {
    std::lock_guard lk{mtx_};
    hidden_.clear();
  }

  expected<std::vector<event>> read_events(const persistence::event_filter& f) override {
    auto evs = s_.read_events(f);
    if (!evs)
      return evs;
    std::lock_guard lk{mtx_};
    std::erase_if(*evs, [&](const event& e) { return hidden_.contains(e.seq); });
    return evs;
  }

  std::vector<persistence::commit_result>
  commit(std::vector<persistence::write_batch>& b) override {
    return s_.commit(b);
  }
  expected<std::optional<run>> get_run(std::string_view id) override { return s_.get_run(id); }
  expected<persistence::run_page> list_runs(const persistence::run_filter& f) override {
    return s_.list_runs(f);
  }
  expected<std::vector<step>> get_steps(std::string_view id) override { return s_.get_steps(id); }
  expected<std::vector<run>> unfinished_runs(std::string_view n) override {
    return s_.unfinished_runs(n);
  }
  expected<std::optional<std::string>> find_by_idempotency_key(std::string_view k) override {
    return s_.find_by_idempotency_key(k);
  }
  expected<std::optional<approval>> get_approval(std::string_view id) override {
    return s_.get_approval(id);
  }
  expected<persistence::approval_page>
  list_approvals(const persistence::approval_filter& f) override {
    return s_.list_approvals(f);
  }
  expected<std::vector<approval>> pending_approvals() override { return s_.pending_approvals(); }
  expected<std::optional<approval>> approval_for_step(std::string_view r, std::int64_t n) override {
    return s_.approval_for_step(r, n);
  }
  expected<std::vector<step>> rate_counted_tool_steps(timestamp_us since) override {
    return s_.rate_counted_tool_steps(since);
  }
  expected<persistence::store_stats> stats() override { return s_.stats(); }
  expected<std::optional<works::work>> get_work(std::string_view id) override {
    return s_.get_work(id);
  }
  expected<persistence::work_page> list_works(const persistence::work_filter& f) override {
    return s_.list_works(f);
  }
  expected<std::vector<works::work>> open_works(std::string_view n) override {
    return s_.open_works(n);
  }
  expected<std::optional<std::string>> work_by_idempotency_key(std::string_view k) override {
    return s_.work_by_idempotency_key(k);
  }
  expected<std::optional<works::stored_template>> get_template(std::string_view n,
                                                               std::string_view v) override {
    return s_.get_template(n, v);
  }
  expected<std::vector<world::entity>> world_entities() override { return s_.world_entities(); }
  expected<std::optional<world::entity>> world_entity(std::string_view id) override {
    return s_.world_entity(id);
  }
  expected<std::vector<world::entity>> entity_history(std::string_view id, int limit) override {
    return s_.entity_history(id, limit);
  }
  expected<std::vector<memory::candidate>> search_memories(const memory::query& q) override {
    return s_.search_memories(q);
  }
  expected<std::optional<memory::entry>> get_memory(std::string_view id) override {
    return s_.get_memory(id);
  }
  expected<std::optional<memory::entry>> memory_version(std::string_view id,
                                                        std::int64_t v) override {
    return s_.memory_version(id, v);
  }
  expected<std::vector<memory::entry>> memory_versions(std::string_view id) override {
    return s_.memory_versions(id);
  }
  expected<std::optional<evolve::candidate>> get_candidate(std::string_view id) override {
    return s_.get_candidate(id);
  }
  expected<std::vector<evolve::candidate>> list_candidates(int limit) override {
    return s_.list_candidates(limit);
  }
  expected<std::vector<conversation::message>>
  list_messages(std::string_view run_id, std::int64_t after_seq, int limit) override {
    return s_.list_messages(run_id, after_seq, limit);
  }
  expected<std::vector<conversation::message>> untaken_messages(std::string_view run_id) override {
    return s_.untaken_messages(run_id);
  }
  expected<std::vector<std::string>> runs_with_untaken_messages() override {
    return s_.runs_with_untaken_messages();
  }
  expected<std::optional<conversation::message>> message_by_key(std::string_view run_id,
                                                                std::string_view key) override {
    return s_.message_by_key(run_id, key);
  }
  expected<std::int64_t> last_message_seq(std::string_view run_id) override {
    return s_.last_message_seq(run_id);
  }
  sreh::error enqueue_deliveries(const std::vector<persistence::delivery>& d, std::string_view n,
                                 std::int64_t offset) override {
    return s_.enqueue_deliveries(d, n, offset);
  }
  expected<std::vector<persistence::delivery>> due_deliveries(timestamp_us now,
                                                              int limit) override {
    return s_.due_deliveries(now, limit);
  }
  expected<std::optional<timestamp_us>> next_delivery_at() override {
    return s_.next_delivery_at();
  }
  sreh::error record_attempt(const persistence::delivery& d) override {
    return s_.record_attempt(d);
  }
  expected<std::optional<persistence::delivery>> get_delivery(std::string_view id) override {
    return s_.get_delivery(id);
  }
  expected<persistence::delivery_page>
  list_deliveries(const persistence::delivery_filter& f) override {
    return s_.list_deliveries(f);
  }
  expected<std::optional<timestamp_us>> last_in_group(std::string_view r,
                                                      std::string_view g) override {
    return s_.last_in_group(r, g);
  }
  sreh::error ping() override { return s_.ping(); }
  expected<std::int64_t> relay_offset(std::string_view n) override { return s_.relay_offset(n); }
  sreh::error set_relay_offset(std::string_view n, std::int64_t seq) override {
    return s_.set_relay_offset(n, seq);
  }

 private:
  persistence::store& s_;
  std::mutex mtx_;
  std::set<std::int64_t> hidden_;
};

} // namespace sreh::test
