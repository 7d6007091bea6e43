#include "actors/hub/event_hub.hpp"

namespace sreh::actors {

const std::vector<std::string>&
published_batch::formatted(std::string (*format)(const event&)) const {
  std::call_once(once_, [&] {
    formatted_.reserve(events.size());
    for (const auto& e : events)
      formatted_.push_back(format(e));
  });
  return formatted_;
}

std::uint64_t event_hub::subscribe(subscriber s) {
  std::lock_guard<std::mutex> lock{mtx_};
  auto token = next_++;
  subs_.emplace(token, std::make_shared<subscriber>(std::move(s)));
  return token;
}

void event_hub::unsubscribe(std::uint64_t token) {
  std::lock_guard<std::mutex> lock{mtx_};
  subs_.erase(token);
}

void event_hub::publish(std::vector<event> events) {
  if (events.empty())
    return;
  auto b = std::make_shared<published_batch>();
  b->events = std::move(events);
  batch shared = std::move(b);
  // Copy the subscriber list so callbacks run without the lock (they may unsubscribe).
  std::vector<std::shared_ptr<subscriber>> targets;
  {
    std::lock_guard<std::mutex> lock{mtx_};
    if (shared->events.back().seq > 0) // 0: an ephemeral event (model.delta), never stored
      last_seq_ = shared->events.back().seq;
    targets.reserve(subs_.size());
    for (auto& [token, s] : subs_)
      targets.push_back(s);
  }
  for (auto& s : targets)
    (*s)(shared);
}

std::size_t event_hub::subscribers() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return subs_.size();
}

std::int64_t event_hub::last_seq() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return last_seq_;
}

} // namespace sreh::actors
