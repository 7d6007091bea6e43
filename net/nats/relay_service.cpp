// The relay thread: event log → JetStream, from the durable offset, one acknowledged page at a
// time (docs/relay.md).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/base/fault.hpp"
#include "core/base/json.hpp"
#include "core/base/logger.hpp"
#include "core/model/json_codecs.hpp"
#include "net/nats/jetstream.hpp"
#include "net/nats/relay.hpp"

namespace sreh::net {

struct relay::counters {
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> acked{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> gap_waits{0};
  std::atomic<std::int64_t> offset{0};
  std::atomic<std::int64_t> newest{0}; // highest seq read from the store
  std::atomic<bool> connected{false};
  std::atomic<bool> active{false};
  mutable std::mutex error_mtx;
  std::string last_error; // guarded by error_mtx

  void set_error(std::string e) {
    std::lock_guard lk{error_mtx};
    last_error = std::move(e);
  }
};

relay::relay(persistence::run_store& events, persistence::relay_store& offsets,
             actors::event_hub* hub, relay_options opts, persistence::relay_lock* lock)
  : events_(events), offsets_(offsets), hub_(hub), opts_(std::move(opts)), lock_(lock),
    counters_(std::make_unique<counters>()), error_log_(opts_.log_every),
    gap_log_(opts_.log_every) {
  counters_->active = lock_ == nullptr;
}

relay::~relay() {
  stop();
}

sreh::error relay::start(actors::failure_handler failed) {
  if (thread_.running())
    return {errc::conflict, "relay: already started"};
  if (opts_.url.empty())
    return {errc::invalid_argument, "relay: nats url is required"};
  if (opts_.name.empty() || opts_.stream.empty() || opts_.subject_prefix.empty())
    return {errc::invalid_argument, "relay: name, stream and subject_prefix must not be empty"};
  if (opts_.page_size < 1 || opts_.page_size > 10'000)
    return {errc::invalid_argument,
            fmt::format("relay: page_size {}: expected 1..10000", opts_.page_size)};
  // A start after a stop (a restart by the supervisor) begins as the first did: from the
  // stored offset, with the stream and the lock checked again.
  stream_ready_ = false;
  offset_loaded_ = false;
  leading_ = false;
  backoff_ = std::chrono::milliseconds{0};
  recovering_ = false;
  on_failure_ = std::move(failed);
  if (hub_ != nullptr)
    hub_token_ = hub_->subscribe([this](const actors::event_hub::batch&) {
      thread_.wake(); // on the group-commit writer's thread: signal only
    });
  thread_.start([this] { run(); });
  logger("relay")->info("relay {}: publishing the event log to {} (stream {}, subjects {}.>)",
                        opts_.name, opts_.url, opts_.stream, opts_.subject_prefix);
  return {};
}

void relay::stop() {
  if (!thread_.running())
    return;
  thread_.stop();
  if (hub_ != nullptr)
    hub_->unsubscribe(hub_token_);
  js_.reset(); // closes the connection; its callbacks have run when this returns
  counters_->connected = false;
  on_failure_ = nullptr;
}

relay_stats relay::stats() const {
  relay_stats s;
  const auto& c = *counters_;
  s.published = c.published.load();
  s.acked = c.acked.load();
  s.duplicates = c.duplicates.load();
  s.errors = c.errors.load();
  s.gap_waits = c.gap_waits.load();
  s.offset = c.offset.load();
  const auto newest = std::max(c.newest.load(), hub_ != nullptr ? hub_->last_seq() : 0);
  s.lag = std::max<std::int64_t>(0, newest - s.offset);
  s.connected = c.connected.load();
  s.active = c.active.load();
  std::lock_guard lk{c.error_mtx};
  s.last_error = c.last_error;
  return s;
}

void relay::pause(std::chrono::milliseconds d, bool wakeable) {
  thread_.pause(d, wakeable);
}

void relay::failed(const sreh::error& err, bool connecting) {
  counters_->errors.fetch_add(1);
  counters_->set_error(err.message);
  recovering_ = true;
  // A failed connect is tried again every reconnect_wait (nothing else would wake the relay when
  // the server is back); other failures (lock, store, JetStream) double the wait up to the max.
  const auto wait = connecting
                      ? opts_.reconnect_wait
                      : (backoff_ = std::clamp(backoff_ * 2, opts_.min_backoff, opts_.max_backoff));
  error_log_.log(*logger("relay"), spdlog::level::warn,
                 "relay {}: {}; retrying from seq {} in {} ms", opts_.name, err.message, offset_,
                 wait.count());
  pause(wait, false);
}

bool relay::lead() {
  if (lock_ == nullptr)
    return true;
  auto log = logger("relay");
  auto held = lock_->acquire();
  if (!held) {
    if (leading_)
      log->warn("relay {}: lost the relay lock ({}); standing by", opts_.name,
                held.error().message);
    leading_ = false;
    counters_->active = false;
    failed(held.error());
    return false;
  }
  if (*held != leading_) {
    if (*held)
      log->info("relay {}: took the relay lock; publishing from the stored offset", opts_.name);
    else
      log->info("relay {}: another node holds the relay lock; standing by", opts_.name);
  }
  if (*held && !leading_)
    offset_loaded_ = false; // another relay may have moved the offset: start from the store's
  leading_ = *held;
  counters_->active = *held;
  if (!*held)
    pause(opts_.poll_interval, false);
  return *held;
}

void relay::run() {
  std::string why;
  try {
    return loop();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "an unknown exception";
  }
  if (on_failure_) {
    logger("relay")->error("relay {}: the relay thread died: {}", opts_.name, why);
    on_failure_("the relay thread died: " + why);
  } else {
    logger("relay")->critical("relay {}: the relay thread died: {}; nothing restarts it",
                              opts_.name, why);
  }
}

void relay::loop() {
  auto log = logger("relay");
  while (!thread_.stopping()) {
    if (!lead())
      continue;
    if (!js_) {
      jetstream_options jo;
      jo.url = opts_.url;
      jo.tls = opts_.tls;
      jo.stream = opts_.stream;
      jo.subject_prefix = opts_.subject_prefix;
      jo.client_name = "sreh-relay-" + opts_.name;
      jo.ack_wait = opts_.ack_wait;
      jo.dedupe_window = opts_.dedupe_window;
      jo.max_pending = std::max(2 * opts_.page_size, 1'024);
      jo.reconnect = false; // a lost connection is replaced by a new one: see jetstream_options
      jo.on_connection_change = [this](bool up) {
        counters_->connected = up;
        thread_.interrupt(); // a pause ends: connect again, or go on
      };
      auto js = jetstream_client::connect(std::move(jo));
      if (!js) {
        failed(js.error(), true);
        continue;
      }
      js_ = std::move(*js);
      counters_->connected = true;
      stream_ready_ = false;                   // a restarted server may have lost it
      backoff_ = std::chrono::milliseconds{0}; // a new connection: failures start over
    }
    auto more = round();
    if (!more) {
      failed(more.error(), !js_); // a lost connection was dropped: the next attempt connects
      continue;
    }
    if (recovering_) {
      log->info("relay {}: delivering again from seq {}", opts_.name, offset_);
      recovering_ = false;
      backoff_ = std::chrono::milliseconds{0};
      error_log_.reset(); // the next failure is reported at once
      counters_->set_error({});
    }
    if (*more)
      continue;
    if (lock_ == nullptr) {
      pause(opts_.poll_interval, true);
    } else { // commits of every node notify the lock's session; short waits keep stop() prompt
      const auto until = std::chrono::steady_clock::now() + opts_.poll_interval;
      while (!thread_.stopping() && std::chrono::steady_clock::now() < until)
        if (lock_->wait_for_commit(std::chrono::milliseconds{100}))
          break;
    }
  }
}

expected<bool> relay::round() {
  counters_->connected = js_->connected();
  if (!counters_->connected) {
    js_.reset(); // closed for good (no reconnect): the next round connects anew
    return sreh::error{errc::unavailable, fmt::format("nats: connection to {} lost", opts_.url)};
  }
  if (!stream_ready_) {
    if (auto err = js_->ensure_stream())
      return err;
    stream_ready_ = true;
  }
  if (!offset_loaded_) {
    auto off = offsets_.relay_offset(opts_.name);
    if (!off)
      return off.error();
    offset_ = *off;
    offset_loaded_ = true;
    counters_->offset = offset_;
  }
  persistence::event_filter f;
  f.after_seq = offset_;
  f.limit = opts_.page_size;
  auto evs = events_.read_events(f);
  if (!evs)
    return evs.error();
  if (evs->empty())
    return false;
  if (evs->back().seq > counters_->newest.load())
    counters_->newest = evs->back().seq;
  // Only the gap-free run after the offset: seq N+2 is never published before N+1.
  std::size_t n = 0;
  while (n < evs->size() && (*evs)[n].seq == offset_ + 1 + static_cast<std::int64_t>(n))
    ++n;
  if (n == 0) {
    counters_->gap_waits.fetch_add(1);
    gap_log_.log(*logger("relay"), spdlog::level::warn,
                 "relay {}: waiting for seq {} (seq {} is already visible)", opts_.name,
                 offset_ + 1, evs->front().seq);
    pause(opts_.gap_poll, false);
    return true;
  }
  // The payload is the whole event (seq, id, run_id, run_seq, kind, at, data), as SSE shows it.
  std::vector<std::string> bodies;
  bodies.reserve(n);
  std::vector<jetstream_message> msgs;
  msgs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& e = (*evs)[i];
    bodies.push_back(json::to_json(e));
    msgs.push_back({event_subject(opts_.subject_prefix, e), e.id, e.seq, bodies.back()});
  }
  const auto out = js_->publish(msgs, thread_.stop_flag());
  counters_->published.fetch_add(out.sent);
  counters_->acked.fetch_add(out.acked);
  counters_->duplicates.fetch_add(out.duplicates);
  if (out.acked_prefix > 0 && fault("relay.round")) // published, not yet stored: the worst time
    throw std::runtime_error("fault injected at relay.round");
  if (out.acked_prefix > 0) {
    const auto next = msgs[out.acked_prefix - 1].seq;
    if (auto err = offsets_.set_relay_offset(opts_.name, next)) {
      offset_loaded_ = false; // re-read what the store has before going on
      return err;
    }
    offset_ = next;
    counters_->offset = next;
  }
  if (out.err) {
    if (thread_.stopping())
      return true;         // cancelled by stop: not an error
    stream_ready_ = false; // a restarted server may have lost it: check again
    if (!js_->connected()) {
      counters_->connected = false;
      js_.reset(); // the next round connects anew
    }
    return out.err;
  }
  return true;
}

} // namespace sreh::net
