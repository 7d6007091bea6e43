#include "actors/runtime/supervision.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

namespace sreh::actors {

std::optional<std::chrono::milliseconds>
restart_budget::on_failure(std::chrono::steady_clock::time_point now) {
  while (!restarts_.empty() && now - restarts_.front() >= policy_.window)
    restarts_.pop_front();
  if (static_cast<int>(restarts_.size()) >= policy_.max_restarts)
    return std::nullopt;
  restarts_.push_back(now);
  auto wait = policy_.min_backoff;
  for (std::size_t i = 1; i < restarts_.size() && wait < policy_.max_backoff; ++i)
    wait *= 2;
  return std::min(wait, policy_.max_backoff);
}

std::optional<std::chrono::milliseconds> child_died(restart_budget& budget, const std::string& name,
                                                    const std::string& why,
                                                    supervision_table* table, spdlog::logger& log,
                                                    std::string_view consequence) {
  const auto wait = budget.on_failure(std::chrono::steady_clock::now());
  if (table != nullptr)
    table->died(name, why, wait.has_value());
  if (!wait) {
    const auto& p = budget.policy();
    log.critical("{} died ({}) after {} restarts within {} s: giving up on it{}{}", name, why,
                 p.max_restarts, p.window.count(), consequence.empty() ? "" : "; ", consequence);
    return std::nullopt;
  }
  log.error("{} died ({}); restarting it in {} ms", name, why, wait->count());
  return wait;
}

const char* to_string(child_state s) {
  switch (s) {
  case child_state::starting:
    return "starting";
  case child_state::running:
    return "running";
  case child_state::restarting:
    return "restarting";
  case child_state::failed:
    return "failed";
  case child_state::stopped:
    return "stopped";
  }
  return "unknown";
}

child_info* supervision_table::find(std::string_view name) {
  auto it =
    std::find_if(rows_.begin(), rows_.end(), [&](const child_info& c) { return c.name == name; });
  return it == rows_.end() ? nullptr : &*it;
}

void supervision_table::add(std::string name, std::string parent) {
  std::lock_guard lk{mtx_};
  child_info row;
  row.name = std::move(name);
  row.parent = std::move(parent);
  if (auto* c = find(row.name))
    *c = std::move(row);
  else
    rows_.push_back(std::move(row));
}

void supervision_table::set_state(std::string_view name, child_state s) {
  std::lock_guard lk{mtx_};
  if (auto* c = find(name))
    c->state = s;
}

void supervision_table::died(std::string_view name, std::string why, bool restarting) {
  std::lock_guard lk{mtx_};
  auto* c = find(name);
  if (c == nullptr)
    return;
  c->last_error = std::move(why);
  c->state = restarting ? child_state::restarting : child_state::failed;
  if (restarting)
    ++c->restarts;
}

void supervision_table::remove(std::string_view name) {
  std::lock_guard lk{mtx_};
  std::erase_if(rows_, [&](const child_info& c) { return c.name == name; });
}

void supervision_table::stop_all() {
  std::lock_guard lk{mtx_};
  for (auto& c : rows_)
    c.state = child_state::stopped;
}

std::vector<child_info> supervision_table::children() const {
  std::lock_guard lk{mtx_};
  return rows_;
}

std::vector<child_info> supervision_table::failed() const {
  std::lock_guard lk{mtx_};
  std::vector<child_info> out;
  std::copy_if(rows_.begin(), rows_.end(), std::back_inserter(out),
               [](const child_info& c) { return c.state == child_state::failed; });
  return out;
}

} // namespace sreh::actors
