#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/event.hpp"

namespace sreh::actors {

/// Local fan-out of committed events to live subscribers (SSE streams). Fed by the group-commit
/// writer after each commit, in seq order.
///
/// Concurrency: thread-safe. Subscriber callbacks run on the publishing thread (the writer):
/// they must only enqueue and return; a subscriber that falls behind cuts itself off, it never
/// slows the writer or other subscribers.
/// One publication: the events of one commit (or feed delivery), shared by every subscriber.
struct published_batch {
  std::vector<event> events;

  /// `format(e)` of each event, made once by the first caller and shared by every later one,
  /// so that 1,000 SSE streams serialise an event once, not 1,000 times. One format per batch
  /// (the SSE frame). Thread-safe.
  [[nodiscard]] const std::vector<std::string>&
    formatted(std::string (*format)(const event&)) const;

 private:
  mutable std::once_flag once_;
  mutable std::vector<std::string> formatted_;
};

class event_hub {
 public:
  using batch = std::shared_ptr<const published_batch>;
  using subscriber = std::function<void(const batch&)>;

  /// Returns a token for `unsubscribe`.
  std::uint64_t subscribe(subscriber s);
  void unsubscribe(std::uint64_t token);
  /// Hands `events` (one commit's, in seq order) to every subscriber as one shared batch.
  void publish(std::vector<event> events);
  [[nodiscard]] std::size_t subscribers() const;
  /// Highest seq published so far.
  [[nodiscard]] std::int64_t last_seq() const;

 private:
  mutable std::mutex mtx_;
  std::uint64_t next_ = 1;
  std::int64_t last_seq_ = 0;
  std::unordered_map<std::uint64_t, std::shared_ptr<subscriber>> subs_;
};

} // namespace sreh::actors
