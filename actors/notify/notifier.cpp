// The notifier thread: event log → outbox → receivers (notifier.hpp, docs/notifications.md).
#include "actors/notify/notifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/base/failpoint.hpp"
#include "core/base/json.hpp"
#include "core/notify/render.hpp"
#include "core/notify/routing.hpp"

namespace sreh::actors {

using persistence::delivery;
using persistence::delivery_state;

struct notifier::counters {
  std::atomic<std::uint64_t> enqueued{0};
  std::atomic<std::uint64_t> grouped{0};
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> attempts_failed{0};
  std::atomic<std::uint64_t> dead{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::int64_t> offset{0};
  mutable std::mutex error_mtx;
  std::string last_error; // guarded by error_mtx

  void set_error(std::string e) {
    std::lock_guard lk{error_mtx};
    last_error = std::move(e);
  }
};

notifier::notifier(notifier_stores stores, notify_transport_ptr transport, event_hub* hub,
                   notifier_options opts, const sreh::clock& clock)
  : stores_(stores), transport_(std::move(transport)), hub_(hub), opts_(std::move(opts)),
    clock_(clock), counters_(std::make_unique<counters>()) {}

notifier::~notifier() {
  stop();
}

sreh::error notifier::start(failure_handler failed) {
  if (thread_.running())
    return {errc::conflict, "notify: already started"};
  if (transport_ == nullptr)
    return {errc::invalid_argument, "notify: no transport"};
  offset_ = -1; // a restart reads the stored offset again
  leading_ = false;
  // Here rather than on the thread, so that what commits after `start` returns is never taken
  // for history; a store that is away now is tried again by the thread.
  if (auto err = load_offset())
    logger("notify")->warn("notify: reading the offset: {}; trying again", err.message);
  backoff_ = std::chrono::milliseconds{0};
  on_failure_ = std::move(failed);
  if (hub_ != nullptr)
    hub_token_ = hub_->subscribe([this](const event_hub::batch&) { wake(); });
  thread_.start([this] { run(); });
  logger("notify")->info("notify: {} receivers, {} routes", opts_.settings.receivers.size(),
                         opts_.settings.routes.size());
  return {};
}

void notifier::stop() {
  if (!thread_.running())
    return;
  thread_.stop();
  if (hub_ != nullptr)
    hub_->unsubscribe(hub_token_);
  on_failure_ = nullptr;
}

void notifier::wake() {
  thread_.wake();
}

notifier_stats notifier::stats() const {
  notifier_stats s;
  const auto& c = *counters_;
  s.enqueued = c.enqueued.load();
  s.grouped = c.grouped.load();
  s.delivered = c.delivered.load();
  s.attempts_failed = c.attempts_failed.load();
  s.dead = c.dead.load();
  s.errors = c.errors.load();
  s.offset = c.offset.load();
  std::lock_guard lk{c.error_mtx};
  s.last_error = c.last_error;
  return s;
}

void notifier::run() {
  try {
    loop();
  } catch (const std::exception& e) {
    logger("notify")->error("notify: the thread ended: {}", e.what());
    if (on_failure_)
      on_failure_(e.what());
  }
}

void notifier::loop() {
  const std::chrono::milliseconds poll{opts_.settings.poll_ms};
  while (!thread_.stopping()) {
    if (opts_.lead) {
      if (!opts_.lead()) {
        leading_ = false;
        thread_.pause(poll); // another node notifies; take over when it goes
        continue;
      }
      if (!leading_) { // taken over: go on from where the last leader stored its offset
        leading_ = true;
        offset_ = -1;
        logger("notify")->info("notify: this node notifies now");
      }
    }
    auto made = enqueue_round();
    auto sent = made ? send_round() : expected<bool>{false};
    if (!made || !sent) {
      const auto& err = !made ? made.error() : sent.error();
      counters_->errors.fetch_add(1);
      counters_->set_error(err.message);
      backoff_ = std::clamp(backoff_ * 2, std::chrono::milliseconds{100}, poll * 10);
      error_log_.log(*logger("notify"), spdlog::level::warn, "notify: {}; again in {} ms",
                     err.message, backoff_.count());
      thread_.pause(backoff_);
      continue;
    }
    backoff_ = std::chrono::milliseconds{0};
    if (*made || *sent)
      continue;
    // Idle: until the next commit, the next due retry, or the poll.
    auto wait = poll;
    if (auto next = stores_.outbox.next_delivery_at(); next && *next)
      wait = std::clamp(std::chrono::milliseconds{(**next - clock_.now_us()) / 1000 + 1},
                        std::chrono::milliseconds{1}, poll);
    thread_.pause(wait);
  }
}

sreh::error notifier::load_offset() {
  auto stored = stores_.offsets.relay_offset(offset_name);
  if (!stored)
    return stored.error();
  auto offset = *stored;
  if (offset == 0) { // never ran on this store: from the end of the log
    auto st = stores_.runs.stats();
    if (!st)
      return st.error();
    offset = st->last_event_seq + 1;
    if (auto err = stores_.outbox.enqueue_deliveries({}, offset_name, offset))
      return err;
  }
  offset_ = offset;
  counters_->offset = offset_;
  return {};
}

expected<bool> notifier::enqueue_round() {
  if (offset_ < 0)
    if (auto err = load_offset())
      return err;
  persistence::event_filter f;
  f.after_seq = offset_ - 1;
  f.limit = opts_.page_size;
  auto events = stores_.runs.read_events(f);
  if (!events)
    return events.error();
  std::vector<delivery> out;
  std::map<std::string, timestamp_us> groups;
  auto next = offset_;
  for (const auto& e : *events) {
    if (e.seq != next)
      break; // seq `next` is not visible yet (a commit of another node): read it next round
    ++next;
    auto kind = notify::notice_event(e);
    if (!kind)
      continue;
    auto facts = facts_of(e, *kind);
    if (!facts)
      return facts.error();
    auto n = notify::make_notice(e, *kind, *facts, opts_.link_base);
    if (!n) {
      logger("notify")->warn("notify: event {} (seq {}): {}", e.id, e.seq, n.error().message);
      continue;
    }
    auto ds = deliveries_of(*n, groups);
    if (!ds)
      return ds.error();
    std::move(ds->begin(), ds->end(), std::back_inserter(out));
  }
  if (next == offset_)
    return false;
  if (!out.empty())
    failpoint("notify_enqueue", 1); // the deliveries made, not stored (tests: kill -9)
  if (auto err = stores_.outbox.enqueue_deliveries(out, offset_name, next))
    return err;
  offset_ = next;
  counters_->offset = offset_;
  for (const auto& d : out) {
    counters_->enqueued.fetch_add(1);
    if (d.state == delivery_state::grouped)
      counters_->grouped.fetch_add(1);
  }
  return true;
}

expected<notify::subject_facts> notifier::facts_of(const event& e, std::string_view kind) {
  notify::subject_facts s;
  if (kind.starts_with("work.")) {
    s.kind = "work";
    auto w = stores_.works.get_work(e.run_id);
    if (!w)
      return w.error();
    if (*w) {
      s.title = (*w)->title;
      s.severity = (*w)->severity;
      s.labels = json::string_members((*w)->labels);
    }
    return s;
  }
  s.kind = "run";
  auto r = stores_.runs.get_run(e.run_id);
  if (!r)
    return r.error();
  if (*r) {
    s.title = (*r)->goal;
    s.labels = json::string_members((*r)->labels);
    s.severity = s.labels.contains("severity") ? s.labels["severity"] : "";
  }
  if (!kind.starts_with("approval."))
    return s;
  auto data = json::parse_object(e.data);
  auto id = data ? json::string_or(*data, "approval", "") : std::string{};
  auto a = stores_.approvals.get_approval(id);
  if (!a)
    return a.error();
  if (*a) {
    const auto& ap = **a;
    s.tool = ap.tool;
    s.args = ap.args;
    s.rule = ap.rule_id;
    s.reason = ap.reason;
    s.roles = ap.roles;
    s.required = ap.required;
    s.requester = ap.requester;
    s.expires_at = ap.expires_at;
    if (opts_.risk_of)
      s.risk = opts_.risk_of(ap.tool);
  }
  return s;
}

expected<std::vector<delivery>>
notifier::deliveries_of(const notify::notice& n, std::map<std::string, timestamp_us>& groups) {
  std::vector<delivery> out;
  const auto now = clock_.now_us();
  for (auto& r : notify::route_notice(opts_.settings.routes, n)) {
    delivery d;
    d.id = n.event_id + "." + r.receiver;
    d.event_seq = n.seq;
    d.event = n.event;
    d.receiver = r.receiver;
    d.subject = n.subject;
    d.group_key = r.group_key;
    d.notice = notify::to_json(n);
    d.created_at = d.next_at = now;
    if (!r.group_key.empty() && r.repeat_interval_s > 0) {
      const auto key = r.receiver + "\n" + r.group_key;
      auto last = groups.contains(key) ? std::optional{groups[key]} : std::nullopt;
      if (!last) {
        auto stored = stores_.outbox.last_in_group(r.receiver, r.group_key);
        if (!stored)
          return stored.error();
        last = *stored;
      }
      if (last && now - *last < r.repeat_interval_s * 1'000'000) {
        d.state = delivery_state::grouped;
        d.done_at = now;
      } else {
        groups[key] = now;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

expected<bool> notifier::send_round() {
  auto due = stores_.outbox.due_deliveries(clock_.now_us(), opts_.send_batch);
  if (!due)
    return due.error();
  for (auto& d : *due) {
    if (thread_.stopping())
      break;
    send_one(std::move(d));
  }
  return !due->empty();
}

void notifier::send_one(delivery d) {
  const auto* r = opts_.settings.find(d.receiver);
  sreh::error err;
  if (r == nullptr) {
    err = {errc::not_found, fmt::format("receiver '{}' is no longer configured", d.receiver)};
  } else if (auto n = notify::notice_from_json(d.notice); !n) {
    err = n.error();
  } else {
    err = transport_->send(*r, notify::render(*r, *n, d.id, clock_.now_us()));
    if (!err)
      failpoint("notify_sent", 1); // answered, not recorded: the one repeat (tests: kill -9)
  }
  const auto now = clock_.now_us();
  ++d.attempts;
  if (!err) {
    d.state = delivery_state::delivered;
    d.done_at = now;
    d.last_error.clear();
    counters_->delivered.fetch_add(1);
    logger("notify")->info("notify: {} delivered to {} ({}, attempt {})", d.event, d.receiver, d.id,
                           d.attempts);
  } else {
    d.last_error = err.message;
    counters_->attempts_failed.fetch_add(1);
    const bool dead = r == nullptr || d.attempts >= opts_.settings.max_attempts;
    if (dead) {
      d.state = delivery_state::failed;
      d.done_at = now;
      counters_->dead.fetch_add(1);
      logger("notify")->error("notify: {} to {} dead-lettered after {} attempts: {}", d.id,
                              d.receiver, d.attempts, err.message);
    } else {
      const auto delay = notify::retry_delay_ms(d.attempts, opts_.settings.min_backoff_ms,
                                                opts_.settings.max_backoff_ms);
      d.next_at = now + delay * 1000;
      logger("notify")->warn("notify: {} to {} failed (attempt {}): {}; again in {} ms", d.id,
                             d.receiver, d.attempts, err.message, delay);
    }
  }
  if (auto rec = stores_.outbox.record_attempt(d)) {
    counters_->errors.fetch_add(1);
    counters_->set_error(rec.message);
    logger("notify")->warn("notify: could not record the attempt of {}: {}", d.id, rec.message);
  }
}

} // namespace sreh::actors
