// The event feed: JetStream (ordered push consumer) + the store → `deliver`, in seq order,
// gap-free, once (docs/relay.md, "The event feed"). One worker thread owns the position; the
// nats.c callback only enqueues.
#include "net/nats/event_feed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "core/base/json.hpp"
#include "core/base/logger.hpp"
#include "core/model/json_codecs.hpp"
#include "net/nats/jetstream.hpp"

namespace sreh::net {

namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds min_backoff{100};
constexpr milliseconds max_backoff{2'000};

/// A message from the subscription of one generation (a new subscription, not a reset of the
/// ordered consumer, starts a new generation).
struct incoming {
  std::uint64_t generation = 0;
  stream_message msg;
};

} // namespace

struct event_feed::impl {
  persistence::run_store& store;
  event_feed_options opts;
  std::function<void(const std::vector<event>&)> deliver;
  std::shared_ptr<spdlog::logger> log = logger("feed");

  // Shared with nats.c threads and `stop`.
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<incoming> queue;  // guarded by mtx
  bool stopping = false;        // guarded by mtx
  std::string last_async_error; // guarded by mtx
  std::atomic<std::uint64_t> async_errors{0};

  // Counters (stats).
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> filled{0};
  std::atomic<std::uint64_t> resets{0};
  std::atomic<std::int64_t> last_seq{0};
  std::atomic<bool> connected{false};

  std::thread worker;

  // Worker thread only.
  std::unique_ptr<jetstream_client> js;
  std::unique_ptr<jetstream_subscription> sub;
  std::uint64_t generation = 0;                   // of `sub`
  std::uint64_t prev_consumer_seq = 0;            // of the current generation
  std::int64_t last = 0;                          // the last seq delivered
  std::map<std::int64_t, stream_message> pending; // seq > last, not delivered yet
  std::int64_t hole_upto = 0;                     // a seq known to exist whose message was unusable
  steady::time_point gap_since{};                 // when the current gap was first seen; {} = none
  steady::time_point last_nats{};                 // the last message from NATS
  steady::time_point next_store_poll{};
  std::int64_t store_ahead_at = -1; // `last` when the store was last seen ahead of it
  steady::time_point next_subscribe{};
  milliseconds backoff{0};
  std::uint64_t async_seen = 0;
  bool was_connected = false;
  std::vector<event> batch;
  // At most one line per opts.log_every for each kind of trouble.
  log_limiter log_conn, log_gap, log_missing, log_store, log_bad, log_silence, log_async, log_reset;

  impl(persistence::run_store& st, event_feed_options o,
       std::function<void(const std::vector<event>&)> d)
    : store(st), opts(std::move(o)),
      deliver(std::move(d)), log_conn{opts.log_every}, log_gap{opts.log_every},
      log_missing{opts.log_every}, log_store{opts.log_every}, log_bad{opts.log_every},
      log_silence{opts.log_every}, log_async{opts.log_every}, log_reset{opts.log_every} {}

  void run();
  void ensure_subscribed(steady::time_point now);
  void take(std::vector<incoming>& in, steady::time_point now);
  void advance(steady::time_point now);
  std::size_t fill_from_store(std::int64_t upto);
  void flush();
};

event_feed::event_feed(persistence::run_store& st, event_feed_options o,
                       std::function<void(const std::vector<event>&)> deliver)
  : impl_(std::make_unique<impl>(st, std::move(o), std::move(deliver))) {}

event_feed::~event_feed() {
  stop();
}

sreh::error event_feed::start(std::int64_t start_after) {
  auto& p = *impl_;
  if (p.worker.joinable())
    return {errc::conflict, "event feed: already started"};
  if (p.opts.url.empty())
    return {errc::invalid_argument, "event feed: nats url is required"};
  if (p.opts.stream.empty() || p.opts.subject_prefix.empty())
    return {errc::invalid_argument, "event feed: stream and subject_prefix must not be empty"};
  if (p.opts.gap_wait.count() <= 0 || p.opts.relay_silence.count() <= 0 ||
      p.opts.heartbeat.count() <= 0 || p.opts.api_wait.count() <= 0)
    return {errc::invalid_argument,
            "event feed: gap_wait, relay_silence, heartbeat and api_wait must be positive"};
  if (p.opts.page_size < 1 || p.opts.page_size > 10'000)
    return {errc::invalid_argument,
            fmt::format("event feed: page_size {}: expected 1..10000", p.opts.page_size)};
  if (start_after < 0)
    return {errc::invalid_argument, "event feed: start_after must not be negative"};
  {
    std::lock_guard lk{p.mtx};
    p.stopping = false;
    p.queue.clear();
  }
  p.last = start_after;
  p.last_seq = start_after;
  p.pending.clear();
  p.hole_upto = 0;
  p.gap_since = {};
  p.store_ahead_at = -1;
  p.next_store_poll = {};
  p.next_subscribe = {};
  p.backoff = milliseconds{0};
  p.worker = std::thread{[&p] { p.run(); }};
  p.log->info("event feed: following stream {} ({}.>) on {} after seq {}", p.opts.stream,
              p.opts.subject_prefix, p.opts.url, start_after);
  return {};
}

void event_feed::stop() {
  auto& p = *impl_;
  if (!p.worker.joinable())
    return;
  {
    std::lock_guard lk{p.mtx};
    p.stopping = true;
  }
  p.cv.notify_all();
  p.worker.join();
}

event_feed_stats event_feed::stats() const {
  const auto& p = *impl_;
  event_feed_stats s;
  s.received = p.received.load();
  s.delivered = p.delivered.load();
  s.duplicates = p.duplicates.load();
  s.filled_from_store = p.filled.load();
  s.resets = p.resets.load();
  s.last_seq = p.last_seq.load();
  s.connected = p.connected.load();
  return s;
}

void event_feed::impl::run() {
  const auto tick = std::clamp(opts.gap_wait / 4, milliseconds{5}, milliseconds{100});
  last_nats = steady::now();
  std::vector<incoming> in;
  for (;;) {
    {
      std::unique_lock lk{mtx};
      cv.wait_for(lk, tick, [this] { return stopping || !queue.empty(); });
      if (stopping)
        break;
      in.swap(queue);
    }
    const auto now = steady::now();
    ensure_subscribed(now);
    take(in, now);
    in.clear();
    advance(now);
    flush();
  }
  // The subscription first: its destructor waits for the last callback (which uses `this`).
  sub.reset();
  js.reset();
  connected = false;
}

void event_feed::impl::ensure_subscribed(steady::time_point now) {
  if (const auto n = async_errors.load(); n != async_seen) {
    std::string what;
    {
      std::lock_guard lk{mtx};
      what = last_async_error;
    }
    log_async.log(*log, spdlog::level::warn,
                  "event feed: nats reports \"{}\" ({} such reports; the ordered consumer is "
                  "re-created by nats.c)",
                  what, n - async_seen);
    async_seen = n;
  }
  if (!js) {
    if (now < next_subscribe)
      return;
    jetstream_options jo;
    jo.url = opts.url;
    jo.tls = opts.tls;
    jo.stream = opts.stream;
    jo.subject_prefix = opts.subject_prefix;
    jo.client_name = opts.client_name;
    jo.ack_wait = opts.api_wait;
    jo.on_async_error = [this](std::string_view what) {
      std::lock_guard lk{mtx};
      last_async_error.assign(what);
      async_errors.fetch_add(1);
    };
    auto c = jetstream_client::connect(std::move(jo));
    if (!c) {
      backoff = std::clamp(backoff * 2, min_backoff, max_backoff);
      next_subscribe = now + backoff;
      log_conn.log(*log, spdlog::level::warn,
                   "event feed: {}; retrying in {} ms, following the store meanwhile",
                   c.error().message, backoff.count());
      return;
    }
    js = std::move(*c);
  }
  const bool up = js->connected();
  connected = up && sub != nullptr;
  if (!up) {
    log_conn.log(*log, spdlog::level::warn,
                 "event feed: nats not connected to {}; at seq {}, following the store after {} ms "
                 "of silence",
                 opts.url, last, opts.relay_silence.count());
    was_connected = false;
    return;
  }
  if (!was_connected && sub != nullptr)
    log->info("event feed: nats connected again to {} at seq {}", opts.url, last);
  was_connected = true;
  if (sub != nullptr || now < next_subscribe)
    return;
  const auto gen = generation + 1;
  subscribe_options so;
  so.from = deliver_from::last; // the newest message proves at once how far the stream is
  so.heartbeat = opts.heartbeat;
  auto s = js->subscribe_ordered(so, [this, gen](stream_message&& m) {
    {
      std::lock_guard lk{mtx};
      queue.push_back({gen, std::move(m)});
    }
    cv.notify_one();
  });
  if (!s) {
    backoff = std::clamp(backoff * 2, min_backoff, max_backoff);
    next_subscribe = steady::now() + backoff;
    log_conn.log(*log, spdlog::level::warn, "event feed: {}; at seq {}, retrying in {} ms",
                 s.error().message, last, backoff.count());
    return;
  }
  sub = std::move(*s);
  generation = gen;
  prev_consumer_seq = 0;
  backoff = milliseconds{0};
  connected = true;
  log->info("event feed: subscribed to stream {} ({}.>) at seq {}", opts.stream,
            opts.subject_prefix, last);
}

void event_feed::impl::take(std::vector<incoming>& in, steady::time_point now) {
  if (in.empty())
    return;
  received.fetch_add(in.size());
  last_nats = now;
  for (auto& m : in) {
    if (m.generation == generation && m.msg.consumer_seq != 0) {
      if (prev_consumer_seq != 0 && m.msg.consumer_seq <= prev_consumer_seq) {
        resets.fetch_add(1);
        log_reset.log(*log, spdlog::level::info,
                      "event feed: ordered consumer re-created, resuming at stream seq {} "
                      "(event seq {}, delivered up to {})",
                      m.msg.stream_seq, m.msg.seq, last);
      }
      prev_consumer_seq = m.msg.consumer_seq;
    }
    auto seq = m.msg.seq;
    if (seq <= 0) { // no Sreh-Seq header: the body says
      auto e = json::event_from_json(m.msg.data);
      seq = e ? e->seq : 0;
    }
    if (seq <= 0) {
      log_bad.log(*log, spdlog::level::warn,
                  "event feed: dropped a message without a seq (subject {}, stream seq {})",
                  m.msg.subject, m.msg.stream_seq);
      continue;
    }
    if (seq <= last || pending.contains(seq)) {
      duplicates.fetch_add(1);
      continue;
    }
    m.msg.seq = seq;
    pending.emplace(seq, std::move(m.msg));
  }
}

void event_feed::impl::advance(steady::time_point now) {
  for (;;) {
    // Everything that continues the position, in order.
    while (!pending.empty() && pending.begin()->first == last + 1) {
      auto node = pending.extract(pending.begin());
      const auto seq = node.key();
      auto e = json::event_from_json(node.mapped().data);
      if (e && e->seq != seq)
        e = sreh::error{errc::invalid_argument,
                        fmt::format("Sreh-Seq {} but the body says seq {}", seq, e->seq)};
      if (!e) {
        log_bad.log(*log, spdlog::level::warn,
                    "event feed: message of seq {} unusable ({}); reading it from the store", seq,
                    e.error().message);
        hole_upto = std::max(hole_upto, seq);
        gap_since = now - opts.gap_wait; // no point waiting for NATS
        break;
      }
      batch.push_back(std::move(*e));
      last = seq;
    }
    // The highest seq known to exist that has not arrived yet.
    const auto proven = std::max(hole_upto, pending.empty() ? 0 : pending.begin()->first - 1);
    if (proven <= last) {
      gap_since = {};
      break;
    }
    if (gap_since == steady::time_point{})
      gap_since = now;
    if (now - gap_since < opts.gap_wait)
      return; // NATS may still bring them (out of order in the stream)
    const auto from = last;
    const auto n = fill_from_store(proven);
    if (n > 0)
      log_gap.log(*log, spdlog::level::info,
                  "event feed: gap filled from the store: seq {}..{} ({} events) before seq {}",
                  from + 1, last, n, proven + 1);
    if (last < proven) {
      log_missing.log(*log, spdlog::level::warn,
                      "event feed: seq {} is missing from both NATS and the store (seq {} has "
                      "arrived); waiting for it, retrying every {} ms",
                      last + 1, proven + 1, opts.gap_wait.count());
      gap_since = now; // read again after another gap_wait; never skip it
      return;
    }
    gap_since = {};
  }
  if (hole_upto <= last)
    hole_upto = 0;
  // No gap. When NATS has been silent for a while, follow the store: what it has had for one
  // poll interval without NATS delivering it is delivered from the store.
  if (now - last_nats < opts.relay_silence || now < next_store_poll)
    return;
  next_store_poll = now + opts.gap_wait;
  if (store_ahead_at == last) {
    const auto from = last;
    const auto n = fill_from_store(std::numeric_limits<std::int64_t>::max());
    if (n > 0)
      log_silence.log(*log, spdlog::level::warn,
                      "event feed: nothing from nats for {} ms; delivered seq {}..{} ({} events) "
                      "from the store",
                      std::chrono::duration_cast<milliseconds>(now - last_nats).count(), from + 1,
                      last, n);
    store_ahead_at = -1;
    return;
  }
  persistence::event_filter f;
  f.after_seq = last;
  f.limit = 1;
  auto evs = store.read_events(f);
  if (!evs) {
    log_store.log(*log, spdlog::level::warn, "event feed: reading the store after seq {}: {}", last,
                  evs.error().message);
    return;
  }
  store_ahead_at = evs->empty() ? -1 : last;
}

std::size_t event_feed::impl::fill_from_store(std::int64_t upto) {
  std::size_t total = 0;
  while (last < upto) {
    persistence::event_filter f;
    f.after_seq = last;
    f.limit = static_cast<int>(std::min<std::int64_t>(opts.page_size, upto - last));
    auto evs = store.read_events(f);
    if (!evs) {
      log_store.log(*log, spdlog::level::warn, "event feed: reading the store after seq {}: {}",
                    last, evs.error().message);
      break;
    }
    std::size_t n = 0;
    for (auto& e : *evs) {
      if (e.seq != last + 1)
        break; // a hole in the store too: never skip it
      last = e.seq;
      batch.push_back(std::move(e));
      ++n;
    }
    total += n;
    filled.fetch_add(n);
    flush();
    if (n < static_cast<std::size_t>(f.limit))
      break;
  }
  // What the store delivered may have been pending from NATS too.
  while (!pending.empty() && pending.begin()->first <= last) {
    pending.erase(pending.begin());
    duplicates.fetch_add(1);
  }
  return total;
}

void event_feed::impl::flush() {
  if (batch.empty())
    return;
  const auto n = batch.size();
  try {
    deliver(batch);
  } catch (const std::exception& ex) {
    log->error("event feed: deliver threw at seq {}..{}: {}", batch.front().seq, batch.back().seq,
               ex.what());
  }
  batch.clear();
  delivered.fetch_add(n);
  last_seq = last;
}

} // namespace sreh::net
