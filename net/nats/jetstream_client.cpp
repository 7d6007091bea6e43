// The JetStream client over nats.c 3.4: connection, stream set-up, publishing with acks. nats.c
// calls back on its own threads; the callbacks here only update atomics and the ack table.
#include <fmt/format.h>
#include <nats/nats.h>

#include <charconv>
#include <condition_variable>
#include <mutex>

#include "net/nats/jetstream.hpp"

namespace sreh::net {

namespace {

constexpr const char* seq_header = "Sreh-Seq";
constexpr const char* msg_id_header = "Nats-Msg-Id";
constexpr auto ack_poll = std::chrono::milliseconds{50};

sreh::error nats_error(std::string_view op, natsStatus s,
                       jsErrCode jerr = static_cast<jsErrCode>(0)) {
  auto msg = fmt::format("nats: {}: {}", op, natsStatus_GetText(s));
  if (jerr != 0)
    msg += fmt::format(" (jetstream error {})", static_cast<int>(jerr));
  return {s == NATS_TIMEOUT ? errc::deadline : errc::unavailable, std::move(msg)};
}

/// `nats_error` with nats.c's detail of this thread's last error (which file could not be
/// loaded, why a TLS handshake failed), when it has one.
sreh::error nats_error_detail(std::string_view op, natsStatus s) {
  auto err = nats_error(op, s);
  const char* detail = nats_GetLastError(nullptr);
  if (detail != nullptr && *detail != '\0' && std::string_view{detail} != natsStatus_GetText(s))
    err.message += fmt::format(": {}", detail);
  return err;
}

/// Sets up TLS on `o` as `tls` asks for `url`.
sreh::error configure_tls(natsOptions* o, const std::string& url, const nats_tls& tls) {
  if (!tls.wanted(url))
    return {};
  if (auto s = natsOptions_SetSecure(o, true); s != NATS_OK)
    return nats_error_detail("tls", s);
  if (!tls.ca_file.empty())
    if (auto s = natsOptions_LoadCATrustedCertificates(o, tls.ca_file.c_str()); s != NATS_OK)
      return nats_error_detail(fmt::format("tls: ca_file '{}'", tls.ca_file), s);
  if (!tls.cert_file.empty())
    if (auto s = natsOptions_LoadCertificatesChain(o, tls.cert_file.c_str(), tls.key_file.c_str());
        s != NATS_OK)
      return nats_error_detail(
        fmt::format("tls: cert_file '{}', key_file '{}'", tls.cert_file, tls.key_file), s);
  return {};
}

std::int64_t header_seq(natsMsg* m) {
  const char* v = nullptr;
  if (m == nullptr || natsMsgHeader_Get(m, seq_header, &v) != NATS_OK || v == nullptr)
    return 0;
  std::int64_t seq = 0;
  std::from_chars(v, v + std::char_traits<char>::length(v), seq);
  return seq;
}

/// A received message as a `stream_message` (headers, and the stream and consumer seqs from
/// the JetStream metadata when it has them).
stream_message to_stream_message(natsMsg* m) {
  stream_message sm;
  if (const char* subj = natsMsg_GetSubject(m); subj != nullptr)
    sm.subject = subj;
  if (const char* d = natsMsg_GetData(m); d != nullptr)
    sm.data.assign(d, static_cast<std::size_t>(natsMsg_GetDataLength(m)));
  const char* id = nullptr;
  if (natsMsgHeader_Get(m, msg_id_header, &id) == NATS_OK && id != nullptr)
    sm.msg_id = id;
  sm.seq = header_seq(m);
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
    sm.stream_seq = meta->Sequence.Stream;
    sm.consumer_seq = meta->Sequence.Consumer;
    jsMsgMetaData_Destroy(meta);
  }
  return sm;
}

/// The acks of the current `publish`: one slot per message, by seq.
struct ack_table {
  std::mutex mtx;
  std::condition_variable cv;
  std::int64_t first = 0;          // seq of slot 0
  std::vector<std::uint8_t> state; // 0 pending, 1 stored, 2 failed
  std::size_t acked = 0;
  std::size_t failed = 0;
  std::size_t duplicates = 0;
  std::string first_error;

  void reset(std::int64_t first_seq, std::size_t n) {
    std::lock_guard lk{mtx};
    first = first_seq;
    state.assign(n, 0);
    acked = failed = duplicates = 0;
    first_error.clear();
  }

  /// The slot of `seq`, or nullptr when it is not part of the current publish (a late ack).
  std::uint8_t* slot(std::int64_t seq) {
    if (seq < first || seq - first >= static_cast<std::int64_t>(state.size()))
      return nullptr;
    return &state[static_cast<std::size_t>(seq - first)];
  }
};

} // namespace

struct jetstream_client::impl {
  jetstream_options opts;
  natsOptions* nopts = nullptr;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::atomic<std::uint64_t> disconnects{0};
  ack_table acks;
  std::mutex closed_mtx;
  std::condition_variable closed_cv;
  bool closed = false; // guarded by closed_mtx
  bool published = false;

  ~impl() {
    if (js != nullptr) {
      drop_pending();
      jsCtx_Destroy(js);
    }
    if (nc != nullptr) {
      natsConnection_Close(nc);
      // nats.c runs connection callbacks on one thread, in order: once the closed callback
      // has run, no earlier callback (which gets `this`) is still queued.
      std::unique_lock lk{closed_mtx};
      closed_cv.wait_for(lk, std::chrono::seconds{5}, [this] { return closed; });
      lk.unlock();
      natsConnection_Destroy(nc);
    }
    if (nopts != nullptr)
      natsOptions_Destroy(nopts);
  }

  /// Forgets every publish still waiting for its ack.
  void drop_pending() {
    if (!published)
      return; // nats.c 3.4.1 crashes on a context that never published asynchronously
    natsMsgList pending{};
    if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK)
      natsMsgList_Destroy(&pending);
  }

  static void on_ack(jsCtx*, natsMsg* m, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* self = static_cast<impl*>(closure);
    const auto seq = header_seq(m);
    {
      std::lock_guard lk{self->acks.mtx};
      if (auto* s = self->acks.slot(seq); s != nullptr && *s == 0) {
        if (pa != nullptr) {
          *s = 1;
          ++self->acks.acked;
          if (pa->Duplicate)
            ++self->acks.duplicates;
        } else {
          *s = 2;
          ++self->acks.failed;
          if (self->acks.first_error.empty() && pae != nullptr)
            self->acks.first_error =
              fmt::format("nats: publish seq {}: {}{}", seq, natsStatus_GetText(pae->Err),
                          pae->ErrText != nullptr ? fmt::format(" ({})", pae->ErrText) : "");
        }
      }
    }
    self->acks.cv.notify_one();
    natsMsg_Destroy(m); // with an AckHandler the message is ours
  }

  static void on_disconnected(natsConnection*, void* closure) {
    auto* self = static_cast<impl*>(closure);
    self->disconnects.fetch_add(1);
    self->acks.cv.notify_one();
    if (self->opts.on_connection_change)
      self->opts.on_connection_change(false);
  }

  static void on_closed(natsConnection*, void* closure) {
    auto* self = static_cast<impl*>(closure);
    // Notified under the lock: the destructor, once it sees `closed`, destroys the condition
    // variable, which must not happen while notify_all still runs here (TSan saw it).
    std::lock_guard lk{self->closed_mtx};
    self->closed = true;
    self->closed_cv.notify_all();
  }

  static void on_async_error(natsConnection*, natsSubscription* sub, natsStatus err,
                             void* closure) {
    auto* self = static_cast<impl*>(closure);
    if (self->opts.on_async_error)
      self->opts.on_async_error(
        fmt::format("{}{}", natsStatus_GetText(err), sub != nullptr ? " (subscription)" : ""));
  }

  static void on_reconnected(natsConnection*, void* closure) {
    auto* self = static_cast<impl*>(closure);
    if (self->opts.on_connection_change)
      self->opts.on_connection_change(true);
  }
};

jetstream_client::jetstream_client(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

jetstream_client::~jetstream_client() = default;

expected<std::unique_ptr<jetstream_client>> jetstream_client::connect(jetstream_options opts) {
  auto p = std::make_unique<impl>();
  p->opts = std::move(opts);
  auto* raw = p.get();
  natsStatus s = natsOptions_Create(&p->nopts);
  auto set = [&](natsStatus st) {
    if (s == NATS_OK)
      s = st;
  };
  set(natsOptions_SetURL(p->nopts, p->opts.url.c_str()));
  set(natsOptions_SetName(p->nopts, p->opts.client_name.c_str()));
  set(natsOptions_SetAllowReconnect(p->nopts, p->opts.reconnect));
  if (p->opts.reconnect) {
    set(natsOptions_SetMaxReconnect(p->nopts, -1)); // forever
    set(natsOptions_SetReconnectWait(p->nopts, 250));
    // With a connected callback a first connect that fails returns at once (and goes on in the
    // background); without one it would block until the server is there.
    set(natsOptions_SetRetryOnFailedConnect(p->nopts, true, &impl::on_reconnected, raw));
  }
  set(natsOptions_SetSendAsap(p->nopts, true));
  set(natsOptions_SetTimeout(p->nopts, 2'000));
  set(natsOptions_SetDisconnectedCB(p->nopts, &impl::on_disconnected, raw));
  set(natsOptions_SetReconnectedCB(p->nopts, &impl::on_reconnected, raw));
  set(natsOptions_SetClosedCB(p->nopts, &impl::on_closed, raw));
  set(natsOptions_SetErrorHandler(p->nopts, &impl::on_async_error, raw));
  if (s != NATS_OK)
    return nats_error(fmt::format("options for {}", p->opts.url), s);
  if (auto err = configure_tls(p->nopts, p->opts.url, p->opts.tls))
    return err;
  s = natsConnection_Connect(&p->nc, p->nopts);
  if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) // not yet: it keeps trying in the background
    return nats_error_detail(fmt::format("connect {}", p->opts.url), s);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = p->opts.max_pending;
  jo.PublishAsync.AckHandler = &impl::on_ack;
  jo.PublishAsync.AckHandlerClosure = raw;
  jo.Wait = p->opts.ack_wait.count();
  if (s = natsConnection_JetStream(&p->js, p->nc, &jo); s != NATS_OK)
    return nats_error("jetstream context", s);
  return std::unique_ptr<jetstream_client>{new jetstream_client(std::move(p))};
}

bool jetstream_client::connected() const {
  return natsConnection_Status(impl_->nc) == NATS_CONN_STATUS_CONNECTED;
}

std::uint64_t jetstream_client::disconnects() const {
  return impl_->disconnects.load();
}

sreh::error jetstream_client::ensure_stream() {
  const auto subject = impl_->opts.subject_prefix + ".>";
  const char* subjects[] = {subject.c_str()};
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = impl_->opts.stream.c_str();
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  sc.Duplicates =
    std::chrono::duration_cast<std::chrono::nanoseconds>(impl_->opts.dedupe_window).count();
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, impl_->js, &sc, nullptr, &jerr);
  if (s != NATS_OK && jerr == JSStreamNameExistErr) {
    jerr = static_cast<jsErrCode>(0);
    s = js_UpdateStream(&si, impl_->js, &sc, nullptr, &jerr);
  }
  if (si != nullptr)
    jsStreamInfo_Destroy(si);
  if (s != NATS_OK)
    return nats_error(fmt::format("ensure stream {}", impl_->opts.stream), s, jerr);
  return {};
}

publish_outcome jetstream_client::publish(std::span<const jetstream_message> msgs,
                                          const std::atomic<bool>& cancel) {
  publish_outcome out;
  if (msgs.empty())
    return out;
  auto& acks = impl_->acks;
  acks.reset(msgs.front().seq, msgs.size());
  const auto epoch = disconnects();
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = impl_->opts.ack_wait.count();
  for (const auto& m : msgs) {
    if (cancel.load() || !connected() || disconnects() != epoch) {
      out.err = {errc::unavailable, "nats: not connected"};
      break;
    }
    natsMsg* nm = nullptr;
    natsStatus s = natsMsg_Create(&nm, m.subject.c_str(), nullptr, m.data.data(),
                                  static_cast<int>(m.data.size()));
    const auto seq_text = std::to_string(m.seq);
    if (s == NATS_OK)
      s = natsMsgHeader_Set(nm, msg_id_header, m.msg_id.c_str());
    if (s == NATS_OK)
      s = natsMsgHeader_Set(nm, seq_header, seq_text.c_str());
    if (s == NATS_OK)
      s = js_PublishMsgAsync(impl_->js, &nm, &po); // takes the message on success
    impl_->published = true;
    natsMsg_Destroy(nm); // no-op when taken
    if (s != NATS_OK) {
      out.err = nats_error(fmt::format("publish seq {}", m.seq), s);
      break;
    }
    ++out.sent;
  }
  // Wait for the acks of what was sent: until all are in, one failed, the connection was lost
  // (those acks are gone with it), the deadline passed or the caller cancels.
  const auto deadline = std::chrono::steady_clock::now() + impl_->opts.ack_wait + ack_poll;
  std::unique_lock lk{acks.mtx};
  while (acks.acked < out.sent && acks.failed == 0 && !cancel.load() && disconnects() == epoch &&
         std::chrono::steady_clock::now() < deadline)
    acks.cv.wait_for(lk, ack_poll);
  out.acked = acks.acked;
  out.duplicates = acks.duplicates;
  while (out.acked_prefix < out.sent && acks.state[out.acked_prefix] == 1)
    ++out.acked_prefix;
  if (out.acked_prefix < msgs.size() && !out.err) {
    if (!acks.first_error.empty())
      out.err = {errc::unavailable, acks.first_error};
    else if (cancel.load())
      out.err = {errc::unavailable, "nats: publish cancelled"};
    else if (disconnects() != epoch)
      out.err = {errc::unavailable, "nats: connection lost while waiting for acks"};
    else
      out.err = {errc::deadline, fmt::format("nats: {} of {} acks within {} ms", out.acked,
                                             out.sent, impl_->opts.ack_wait.count())};
  }
  acks.state.clear(); // late acks find no slot
  lk.unlock();
  if (out.acked < out.sent)
    impl_->drop_pending();
  return out;
}

/// The callback's closure: it lives until nats.c says the subscription's handler has returned
/// for the last time (the on-complete callback).
struct jetstream_subscription::state {
  std::function<void(stream_message&&)> on_message;
  natsSubscription* sub = nullptr;
  std::mutex mtx;
  std::condition_variable cv;
  bool complete = false; // guarded by mtx

  static void on_msg(natsConnection*, natsSubscription*, natsMsg* m, void* closure) {
    auto* self = static_cast<state*>(closure);
    auto sm = to_stream_message(m);
    natsMsg_Destroy(m);
    self->on_message(std::move(sm));
  }

  static void on_complete(void* closure) {
    auto* self = static_cast<state*>(closure);
    {
      std::lock_guard lk{self->mtx};
      self->complete = true;
    }
    self->cv.notify_all();
  }
};

jetstream_subscription::jetstream_subscription(std::unique_ptr<state> s) : state_(std::move(s)) {}

jetstream_subscription::~jetstream_subscription() {
  if (!state_ || state_->sub == nullptr)
    return;
  natsSubscription_Unsubscribe(state_->sub); // also deletes the consumer (when it can)
  std::unique_lock lk{state_->mtx};
  const bool done =
    state_->cv.wait_for(lk, std::chrono::seconds{10}, [this] { return state_->complete; });
  lk.unlock();
  natsSubscription_Destroy(state_->sub);
  if (!done)
    (void)state_.release(); // a handler may still run: leak the closure rather than free it
}

expected<std::unique_ptr<jetstream_subscription>>
jetstream_client::subscribe_ordered(subscribe_options opts,
                                    std::function<void(stream_message&&)> on_message) {
  auto st = std::make_unique<jetstream_subscription::state>();
  st->on_message = std::move(on_message);
  const auto subject = impl_->opts.subject_prefix + ".>";
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = impl_->opts.stream.c_str();
  so.Ordered = true; // nats.c sets flow control, no acks, max deliver 1, memory storage
  so.Config.DeliverPolicy = opts.from == deliver_from::last       ? js_DeliverLast
                            : opts.from == deliver_from::new_only ? js_DeliverNew
                                                                  : js_DeliverAll;
  so.Config.Heartbeat =
    std::chrono::duration_cast<std::chrono::nanoseconds>(opts.heartbeat).count();
  natsSubscription* sub = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s =
    js_Subscribe(&sub, impl_->js, subject.c_str(), &jetstream_subscription::state::on_msg, st.get(),
                 nullptr, &so, &jerr);
  if (s != NATS_OK) {
    auto err = nats_error(fmt::format("subscribe to stream {}", impl_->opts.stream), s, jerr);
    if (const char* last = nats_GetLastError(nullptr); last != nullptr && *last != '\0')
      err.message += fmt::format(": {}", last); // e.g. "stream not found"
    return err;
  }
  st->sub = sub;
  if (s = natsSubscription_SetOnCompleteCB(sub, &jetstream_subscription::state::on_complete,
                                           st.get());
      s != NATS_OK) {
    // Without it the closure could not be freed safely: give up on this subscription.
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    (void)st.release();
    return nats_error("subscription completion callback", s);
  }
  return std::unique_ptr<jetstream_subscription>{new jetstream_subscription(std::move(st))};
}

expected<std::vector<stream_message>>
jetstream_client::read_stream(std::uint64_t start_seq, std::chrono::milliseconds idle) {
  static std::atomic<int> counter{0};
  const auto durable =
    fmt::format("sreh-read-{}-{}", reinterpret_cast<std::uintptr_t>(this), ++counter);
  const auto subject = impl_->opts.subject_prefix + ".>";
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = impl_->opts.stream.c_str();
  so.Config.AckPolicy = js_AckNone;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = start_seq;
  natsSubscription* sub = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s =
    js_PullSubscribe(&sub, impl_->js, subject.c_str(), durable.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK)
    return nats_error(fmt::format("subscribe to {}", impl_->opts.stream), s, jerr);
  std::vector<stream_message> out;
  sreh::error err;
  for (;;) {
    natsMsgList list{};
    s = natsSubscription_Fetch(&list, sub, 1'024, idle.count(), &jerr);
    for (int i = 0; i < list.Count; ++i)
      out.push_back(to_stream_message(list.Msgs[i]));
    natsMsgList_Destroy(&list);
    if (s == NATS_TIMEOUT)
      break; // idle: the end of the stream
    if (s != NATS_OK) {
      err = nats_error("fetch", s, jerr);
      break;
    }
  }
  natsSubscription_Unsubscribe(sub); // deletes the durable this call created
  natsSubscription_Destroy(sub);
  if (err)
    return err;
  return out;
}

sreh::error jetstream_client::delete_stream() {
  jsErrCode jerr = static_cast<jsErrCode>(0);
  if (natsStatus s = js_DeleteStream(impl_->js, impl_->opts.stream.c_str(), nullptr, &jerr);
      s != NATS_OK)
    return nats_error(fmt::format("delete stream {}", impl_->opts.stream), s, jerr);
  return {};
}

} // namespace sreh::net
