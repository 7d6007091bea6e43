#include "net/http/sse_session.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "net/http/routes/routes.hpp"
#include "net/http/sse_format.hpp"

namespace sreh::net {

namespace {
constexpr int catchup_page = 1000;
/// A write that has not completed after this long means a client that stopped reading: cut it.
/// (Live streams are cut sooner, by the queue bound; this also covers a stream stalled in its
/// catch-up, whose live events are dropped rather than queued.) One more second per 64 KiB of
/// the write, so a big catch-up page on a slow but moving link is not taken for a stall.
constexpr auto write_stall_timeout = std::chrono::seconds(10);

std::chrono::seconds stall_timeout(std::size_t bytes) {
  return write_stall_timeout + std::chrono::seconds(bytes / 65536);
}
} // namespace

/// The part of the session the hub's callback sees. The callback runs on the store writer
/// thread: it filters, appends and posts a drain, nothing else.
struct sse_session::live_queue {
  std::mutex mtx;
  // Shared with every other stream (no copies on the publishing thread); filtered in drain.
  std::vector<actors::event_hub::batch> batches;
  std::size_t queued = 0; // events in `batches` that pass this stream's filter
  bool posted = false;    // a drain is on its way
  bool overflow = false;  // live and too far behind: cut
  bool dropped = false;   // overflowed during catch-up: catch up again before going live
  bool live = false;
  bool closed = false;
  std::size_t limit = 0;
  std::string run_id;
  std::string kind_prefix;
  std::shared_ptr<server_core> core; // keeps the io_context alive for the post
  asio::any_io_executor exec;
  std::weak_ptr<sse_session> session;

  void push(const actors::event_hub::batch& b) {
    bool notify = false;
    {
      std::lock_guard<std::mutex> lk(mtx);
      if (closed || overflow)
        return;
      std::size_t n = 0;
      for (const auto& e : b->events) {
        if (!run_id.empty() && e.run_id != run_id)
          continue;
        // Terminal events always pass: they end per-run streams.
        if (!kind_prefix.empty() && e.kind.rfind(kind_prefix, 0) != 0 && !is_terminal_kind(e.kind))
          continue;
        ++n;
      }
      if (n > 0) {
        batches.push_back(b);
        queued += n;
      }
      if (queued > limit) {
        batches.clear();
        queued = 0;
        if (live)
          overflow = true;
        else
          dropped = true; // the store still has them; catch-up reads them again
      }
      if (!posted && live && (overflow || !batches.empty()))
        posted = notify = true;
    }
    if (notify)
      asio::post(exec, [w = session] {
        if (auto s = w.lock())
          s->drain();
      });
  }
};

sse_session::sse_session(std::shared_ptr<server_core> core, maybe_tls_stream&& stream,
                         beast::flat_buffer&& buffer, sse_spec spec, connection_slot slot,
                         std::string request_id, unsigned version)
  : core_(std::move(core)), stream_(std::move(stream)), buffer_(std::move(buffer)),
    spec_(std::move(spec)), slot_(std::move(slot)), request_id_(std::move(request_id)),
    version_(version), heartbeat_(stream_.get_executor()) {}

sse_session::~sse_session() {
  if (token_ != 0)
    core_->ctx.hub.unsubscribe(token_);
}

void sse_session::shutdown() {
  asio::post(stream_.get_executor(),
             [self = shared_from_this()] { self->close("server stopping"); });
}

void sse_session::start() {
  slot_.bind(weak_from_this());
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->stream_.expires_never();
    self->last_seq_ = self->spec_.after_seq;
    auto q = std::make_shared<live_queue>();
    q->limit = static_cast<std::size_t>(self->core_->ctx.cfg.limits.sse_queue_events);
    q->run_id = self->spec_.run_id;
    q->kind_prefix = self->spec_.kind_prefix;
    q->core = self->core_;
    q->exec = self->stream_.get_executor();
    q->session = self;
    self->queue_ = q;
    // (1) Subscribe before reading the store, so nothing committed in between is missed.
    self->token_ =
      self->core_->ctx.hub.subscribe([q](const actors::event_hub::batch& b) { q->push(b); });

    auto res = std::make_shared<http::response<http::empty_body>>(http::status::ok, self->version_);
    res->set(http::field::server, "sreh");
    res->set(http::field::content_type, "text/event-stream");
    res->set(http::field::cache_control, "no-cache");
    res->set("X-Request-Id", self->request_id_);
    res->set("X-Accel-Buffering", "no");
    res->keep_alive(false);
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    http::async_write_header(
      self->stream_, *sr,
      [self, res, sr](beast::error_code ec, std::size_t) { self->on_header_written(ec); });
  });
}

void sse_session::on_header_written(beast::error_code ec) {
  if (ec)
    return close("write failed: " + ec.message());
  watch_peer();
  arm_heartbeat();
  catch_up();
}

// (2) Catch-up from the store, one page per write so memory stays bounded. The store is read on
// the handler pool (it may be slow or hang); the page is sent from the strand.
void sse_session::catch_up() {
  if (closed_)
    return;
  asio::post(core_->handlers, [self = shared_from_this(), after = last_seq_] {
    if (self->core_->stopping)
      return;
    auto& store = self->core_->ctx.store;
    // Read the run's state before the page: if it is terminal now, its terminal event is
    // committed and the page (or a later one) contains it.
    bool terminal_known = false;
    if (self->spec_.finish_on_terminal) {
      auto r = store.get_run(self->spec_.run_id);
      terminal_known = r && *r && is_terminal((*r)->state);
    }
    persistence::event_filter f;
    f.after_seq = after;
    f.run_id = self->spec_.run_id;
    f.limit = catchup_page;
    auto events = store.read_events(f);
    asio::post(self->stream_.get_executor(),
               [self, terminal_known, events = std::move(events)]() mutable {
                 self->on_page(terminal_known, std::move(events));
               });
  });
}

void sse_session::on_page(bool terminal_known, expected<std::vector<event>> events) {
  if (closed_)
    return;
  if (!events) {
    core_->log->warn("{} sse: reading events failed: {}", request_id_, events.error().message);
    return close("store read failed");
  }
  for (const auto& e : *events) {
    consider(e);
    if (finishing_)
      return flush();
  }
  if (static_cast<int>(events->size()) >= catchup_page) {
    if (pending_.empty() && !writing_) {
      asio::post(stream_.get_executor(), [self = shared_from_this()] { self->catch_up(); });
    } else {
      catchup_more_ = true;
      flush();
    }
    return;
  }
  if (terminal_known) {
    finishing_ = true;
    return flush();
  }
  go_live();
}

void sse_session::go_live() {
  // Live events dropped while we caught up are in the store: read on before going live.
  bool again = false;
  {
    std::lock_guard<std::mutex> lk(queue_->mtx);
    if (queue_->dropped) {
      queue_->dropped = false;
      again = true;
    } else {
      queue_->live = true;
    }
  }
  if (again) {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->catch_up(); });
    return;
  }
  live_ = true;
  drain();
}

// (3) Live events, skipping what catch-up covered.
void sse_session::drain() {
  if (closed_ || !live_)
    return;
  std::vector<actors::event_hub::batch> batches;
  bool overflow = false;
  {
    std::lock_guard<std::mutex> lk(queue_->mtx);
    if (writing_ && !queue_->overflow) {
      // A write is in flight: leave the events queued, so that a client that stops reading
      // fills its bounded queue and is cut (instead of growing our buffer without bound).
      // on_written drains again.
      queue_->posted = false;
      return;
    }
    batches.swap(queue_->batches);
    queue_->queued = 0;
    overflow = queue_->overflow;
    queue_->posted = false;
  }
  if (overflow) {
    core_->log->warn("{} sse: client too slow (more than {} events queued), cutting the stream",
                     request_id_, queue_->limit);
    return close("too slow");
  }
  for (const auto& b : batches) {
    const auto& frames = b->formatted(sse_frame); // made once for every stream
    for (std::size_t i = 0; i < b->events.size() && !finishing_; ++i)
      consider(b->events[i], &frames[i]);
  }
  flush();
}

void sse_session::consider(const event& e, const std::string* frame) {
  if (e.seq == 0) { // ephemeral (model.delta): live only, no id, never replayed
    if ((spec_.run_id.empty() || e.run_id == spec_.run_id) &&
        (spec_.kind_prefix.empty() || e.kind.rfind(spec_.kind_prefix, 0) == 0)) {
      auto f = frame != nullptr ? *frame : sse_frame(e);
      pending_.append(f, f.find('\n') + 1, std::string::npos); // without "id: 0"
      activity_ = true;
    }
    return;
  }
  if (e.seq <= last_seq_)
    return;
  last_seq_ = e.seq;
  if (!spec_.run_id.empty() && e.run_id != spec_.run_id)
    return;
  bool terminal = spec_.finish_on_terminal && is_terminal_kind(e.kind);
  if (spec_.kind_prefix.empty() || e.kind.rfind(spec_.kind_prefix, 0) == 0) {
    if (frame != nullptr)
      pending_ += *frame;
    else
      pending_ += sse_frame(e);
    ++sent_;
    activity_ = true;
  }
  if (terminal)
    finishing_ = true;
}

void sse_session::flush() {
  if (closed_ || writing_ || final_sent_)
    return;
  if (pending_.empty()) {
    if (!finishing_)
      return;
    final_sent_ = true;
    writing_ = true;
    stream_.expires_after(write_stall_timeout);
    asio::async_write(
      stream_, http::make_chunk_last(),
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_written(ec); });
    return;
  }
  out_.swap(pending_);
  pending_.clear();
  writing_ = true;
  stream_.expires_after(
    stall_timeout(out_.size())); // the write only: watch_peer's read started before
  asio::async_write(
    stream_, http::make_chunk(asio::buffer(out_)),
    [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_written(ec); });
}

void sse_session::on_written(beast::error_code ec) {
  writing_ = false;
  if (ec == beast::error::timeout) {
    core_->log->warn("{} sse: client too slow (a write waited {} s), cutting the stream",
                     request_id_, stall_timeout(out_.size()).count());
    return close("too slow");
  }
  if (ec)
    return close("write failed: " + ec.message());
  stream_.expires_never();
  if (final_sent_)
    return close("run ended");
  if (catchup_more_) {
    catchup_more_ = false;
    return catch_up();
  }
  if (live_)
    return drain();
  flush();
}

void sse_session::arm_heartbeat() {
  heartbeat_.expires_after(
    std::chrono::milliseconds(std::max<std::int64_t>(100, core_->ctx.cfg.limits.sse_heartbeat_ms)));
  heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_)
      return;
    if (!self->activity_ && !self->writing_ && self->pending_.empty() && !self->finishing_) {
      self->pending_.assign(sse_heartbeat);
      self->flush();
    }
    self->activity_ = false;
    self->arm_heartbeat();
  });
}

// The client never sends anything on an SSE stream: a completed read means it went away.
void sse_session::watch_peer() {
  stream_.async_read_some(asio::buffer(peek_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (self->closed_)
                              return;
                            // A stalled write closes the stream: its handler says why.
                            if (ec == asio::error::operation_aborted && self->writing_)
                              return;
                            if (ec)
                              return self->close("client closed");
                            self->watch_peer();
                          });
}

void sse_session::close(std::string_view why) {
  if (closed_)
    return;
  closed_ = true;
  if (token_ != 0) {
    core_->ctx.hub.unsubscribe(token_);
    token_ = 0;
  }
  if (queue_) {
    std::lock_guard<std::mutex> lk(queue_->mtx);
    queue_->closed = true;
    queue_->batches.clear();
    queue_->queued = 0;
  }
  heartbeat_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
  core_->log->debug("{} sse closed ({}): {} events sent, last seq {}", request_id_, why, sent_,
                    last_seq_);
}

} // namespace sreh::net
