// Model gateway benchmark: N concurrent calls through model_gateway and the asynchronous HTTP
// client (net/client/model_http) to a local OpenAI-compatible server that answers each request
// after a delay. The server is a child process (forked before any thread starts: a single-thread
// Beast server), so the figures of this process are the gateway's and the client's alone:
//   - CPU per call: getrusage(RUSAGE_SELF) user + system over a round / N (every thread of this
//     process: the caller making the calls and the client's io thread);
//   - RSS per in-flight call: (RSS when the server holds all N requests − RSS before the round,
//     after malloc_trim) / N;
//   - the thread count of this process at that moment, and the round's wall time.
//
//   build/release/bench/sreh_gateway_bench [--calls 1000] [--delay-ms 200] [--rounds 3]
//                                          [--context-bytes 2048]
//
// Prints one line per round, the medians, the command to reproduce, and last one JSON line.

#include <fmt/format.h>
#include <malloc.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/gateway/model_gateway.hpp"
#include "bench/bench_util.hpp"
#include "core/base/clock.hpp"
#include "core/base/logger.hpp"
#include "net/client/model_http.hpp"
#include "net/http/beast.hpp"

namespace {

using namespace sreh;
using namespace sreh::bench;
using steady = std::chrono::steady_clock;

int thread_count() {
  std::ifstream f{"/proc/self/status"};
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0)
      return std::stoi(line.substr(8));
  return -1;
}

double cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// -- the server (child process) -----------------------------------------------------------------

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

/// Answers every POST after `delay` with a small chat completion; keep-alive. Writes one byte to
/// `peak_fd` each time `calls` requests are held at once.
class delay_server {
 public:
  delay_server(boost::asio::io_context& ioc, tcp::acceptor& acc, std::chrono::milliseconds delay,
               int calls, int peak_fd)
    : ioc_(ioc), acc_(acc), delay_(delay), calls_(calls), peak_fd_(peak_fd) {}

  void accept() {
    acc_.async_accept([this](boost::beast::error_code ec, tcp::socket s) {
      if (!ec)
        std::make_shared<conn>(*this, std::move(s))->read();
      accept();
    });
  }

 private:
  struct conn : std::enable_shared_from_this<conn> {
    conn(delay_server& srv, tcp::socket s) : srv(srv), sock(std::move(s)), timer(srv.ioc_) {}
    void read() {
      req = {};
      http::async_read(
        sock, buf, req, [self = shared_from_this()](boost::beast::error_code ec, std::size_t) {
          if (ec)
            return;
          self->srv.held(+1);
          self->timer.expires_after(self->srv.delay_);
          self->timer.async_wait([self](boost::beast::error_code) { self->answer(); });
        });
    }
    void answer() {
      srv.held(-1);
      res = {};
      res.result(http::status::ok);
      res.version(11);
      res.set(http::field::content_type, "application/json");
      res.body() =
        R"({"id":"chatcmpl-b","object":"chat.completion","created":1,"model":"bench","choices":)"
        R"([{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],)"
        R"("usage":{"prompt_tokens":600,"completion_tokens":1,"total_tokens":601}})";
      res.keep_alive(true);
      res.prepare_payload();
      http::async_write(sock, res,
                        [self = shared_from_this()](boost::beast::error_code ec, std::size_t) {
                          if (!ec)
                            self->read();
                        });
    }
    delay_server& srv;
    tcp::socket sock;
    boost::asio::steady_timer timer;
    boost::beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
  };

  void held(int d) {
    held_ += d;
    if (d > 0 && held_ == calls_) {
      char b = 1;
      (void)!::write(peak_fd_, &b, 1);
    }
  }

  boost::asio::io_context& ioc_;
  tcp::acceptor& acc_;
  std::chrono::milliseconds delay_;
  int calls_;
  int peak_fd_;
  int held_ = 0;
};

/// Forks the server; returns its pid and port, and the fd that says "all calls are held".
struct server_proc {
  pid_t pid = -1;
  int port = 0;
  int peak_fd = -1;
};

server_proc start_server(std::chrono::milliseconds delay, int calls) {
  int port_pipe[2], peak_pipe[2];
  if (::pipe(port_pipe) != 0 || ::pipe(peak_pipe) != 0)
    std::abort();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(port_pipe[0]);
    ::close(peak_pipe[0]);
    boost::asio::io_context ioc{1};
    tcp::acceptor acc{ioc, {boost::asio::ip::make_address("127.0.0.1"), 0}};
    acc.listen(4096);
    int port = acc.local_endpoint().port();
    (void)!::write(port_pipe[1], &port, sizeof port);
    delay_server srv{ioc, acc, delay, calls, peak_pipe[1]};
    srv.accept();
    ioc.run();
    ::_exit(0);
  }
  ::close(port_pipe[1]);
  ::close(peak_pipe[1]);
  server_proc p;
  p.pid = pid;
  p.peak_fd = peak_pipe[0];
  if (::read(port_pipe[0], &p.port, sizeof p.port) != sizeof p.port)
    std::abort();
  ::close(port_pipe[0]);
  return p;
}

// -- the client side ----------------------------------------------------------------------------

/// A request the size of a small reason step: a system prompt, a goal with `context_bytes` of
/// prior steps, and three tools.
llm::chat_request bench_request(int context_bytes) {
  llm::chat_request req;
  req.system = "You are sreh, an SRE agent. Find the cause with the tools, fix it, verify.";
  req.messages.push_back(llm::message::user(
    "Goal: checkout is failing.\n" + std::string(static_cast<std::size_t>(context_bytes), 'x')));
  for (const char* name : {"sandbox_metrics", "sandbox_logs", "sandbox_restart"})
    req.tools.push_back({name, "a sandbox tool",
                         R"({"type":"object","properties":{"service":{"type":"string"}},)"
                         R"("required":["service"]})"});
  return req;
}

struct round_figures {
  double cpu_us_per_call = 0;
  double rss_bytes_per_call = 0;
  int threads = 0;
  double wall_ms = 0;
  int failed = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Drives calls through the gateway and counts their ends.
struct call_driver {
  call_driver(actors::model_gateway& g, const llm::chat_request& r) : gateway(g), req(r) {}

  actors::model_gateway& gateway;
  const llm::chat_request& req;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0, failed = 0;

  void run(int n) {
    {
      std::lock_guard lock{mu};
      done = failed = 0;
    }
    for (int i = 0; i < n; ++i)
      gateway.call(req, [this, n](actors::gateway_result res) {
        std::lock_guard lock{mu};
        failed += res.ok ? 0 : 1;
        if (++done == n)
          cv.notify_all();
      });
  }
  void wait(int n) {
    std::unique_lock lock{mu};
    cv.wait(lock, [&] { return done == n; });
  }
};

/// One round: `calls` calls at once, measured while the server holds them all.
round_figures measure_round(call_driver& d, int peak_fd, int calls, int delay_ms, int round) {
  malloc_trim(0);
  long base_rss = current_rss_kb();
  double cpu0 = cpu_us();
  auto t0 = steady::now();
  d.run(calls);
  pollfd pfd{peak_fd, POLLIN, 0}; // the server holds all N: every call is in flight
  bool peak = ::poll(&pfd, 1, delay_ms * 10 + 10'000) == 1;
  char b = 0;
  if (peak && ::read(peak_fd, &b, 1) != 1)
    peak = false;
  if (!peak)
    std::fprintf(stderr, "round %d: the server never held all %d calls at once\n", round, calls);
  long peak_rss = current_rss_kb();
  int threads = thread_count();
  d.wait(calls);
  auto wall = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
  round_figures f;
  f.cpu_us_per_call = (cpu_us() - cpu0) / calls;
  f.rss_bytes_per_call = static_cast<double>(peak_rss - base_rss) * 1024.0 / calls;
  f.threads = threads;
  f.wall_ms = wall;
  f.failed = d.failed;
  std::printf("round %d: %d calls, %d failed; CPU %.1f us/call; RSS %.1f KB per in-flight call "
              "(%ld -> %ld KB); %d threads; wall %.0f ms\n",
              round, calls, f.failed, f.cpu_us_per_call, f.rss_bytes_per_call / 1024, base_rss,
              peak_rss, threads, wall);
  return f;
}

/// Raises the open-file limit to its maximum; false (said on stderr) when `need` do not fit.
bool enough_descriptors(int need) {
  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  setrlimit(RLIMIT_NOFILE, &nofile);
  if (nofile.rlim_cur >= static_cast<rlim_t>(need))
    return true;
  std::fprintf(stderr, "need %d file descriptors, have %lu\n", need,
               static_cast<unsigned long>(nofile.rlim_cur));
  return false;
}

/// Prints the medians of the rounds, the command to reproduce them and one JSON line; returns
/// the calls that failed in all rounds.
int print_summary(const std::vector<round_figures>& figures, int calls, int delay_ms, int rounds,
                  int context_bytes) {
  std::vector<double> cpu, rss, wall;
  int threads = 0, failed_all = 0;
  for (const auto& f : figures) {
    cpu.push_back(f.cpu_us_per_call);
    rss.push_back(f.rss_bytes_per_call);
    wall.push_back(f.wall_ms);
    threads = std::max(threads, f.threads);
    failed_all += f.failed;
  }
  std::printf("median of %d rounds: CPU %.1f us per call, %.1f KB per in-flight call, wall %.0f ms "
              "(server delay %d ms); at most %d threads in this process\n",
              rounds, median(cpu), median(rss) / 1024, median(wall), delay_ms, threads);
  std::printf("reproduce: build/release/bench/sreh_gateway_bench --calls %d --delay-ms %d "
              "--rounds %d --context-bytes %d\n",
              calls, delay_ms, rounds, context_bytes);
  std::printf("{\"bench\":\"gateway\",\"calls\":%d,\"delay_ms\":%d,\"rounds\":%d,"
              "\"cpu_us_per_call\":%.1f,\"rss_bytes_per_call\":%.0f,\"threads\":%d,"
              "\"wall_ms\":%.0f,\"failed\":%d}\n",
              calls, delay_ms, rounds, median(cpu), median(rss), threads, median(wall), failed_all);
  return failed_all;
}

} // namespace

int main(int argc, char** argv) {
  const int calls = arg(argc, argv, "--calls", 1000);
  const int delay_ms = arg(argc, argv, "--delay-ms", 200);
  const int rounds = arg(argc, argv, "--rounds", 3);
  const int context_bytes = arg(argc, argv, "--context-bytes", 2048);
  if (!enough_descriptors(calls + 64))
    return 1;
  auto srv = start_server(std::chrono::milliseconds{delay_ms}, calls);
  (void)setup_logging("warn", "text");

  static const sreh::system_clock clock;
  config::model_route r;
  r.name = "main";
  r.provider = "openai";
  r.base_url = fmt::format("http://127.0.0.1:{}/v1", srv.port);
  r.model = "bench";
  r.max_concurrency = calls;
  r.max_queue = calls;
  auto gateway =
    std::make_shared<actors::model_gateway>(std::vector{r}, net::make_model_http(), clock);
  const auto req = bench_request(context_bytes);

  call_driver driver{*gateway, req};
  driver.run(10); // warm-up: the client's thread, the first connections, the allocator
  driver.wait(10);
  for (pollfd pfd{srv.peak_fd, POLLIN, 0}; ::poll(&pfd, 1, 0) == 1;) { // a warm-up as big as N
    char b = 0;
    if (::read(srv.peak_fd, &b, 1) != 1)
      break;
  }

  std::vector<round_figures> figures;
  for (int round = 1; round <= rounds; ++round)
    figures.push_back(measure_round(driver, srv.peak_fd, calls, delay_ms, round));
  ::kill(srv.pid, SIGTERM);
  ::waitpid(srv.pid, nullptr, 0);

  const int failed_all = print_summary(figures, calls, delay_ms, rounds, context_bytes);
  return failed_all == 0 ? 0 : 1;
}
