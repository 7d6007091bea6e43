#include "core/base/fault.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace sreh {

namespace {

struct armed_fault {
  std::string name;
  std::int64_t left = 0; // calls until it fires (1: the next one)
  bool every = false;    // `NAME:N+`: fires at the N-th call and at every one after it
};

struct fault_table {
  std::mutex mtx;
  std::vector<armed_fault> armed; // guarded by mtx
  std::atomic<bool> any{false};

  fault_table() {
    const char* v = std::getenv("SREH_FAULT");
    std::string_view s = v != nullptr ? v : "";
    while (!s.empty()) {
      auto item = s.substr(0, s.find(','));
      s.remove_prefix(std::min(s.size(), item.size() + 1));
      auto colon = item.rfind(':');
      if (colon == std::string_view::npos)
        continue;
      auto count = item.substr(colon + 1);
      const bool every = !count.empty() && count.back() == '+';
      if (every)
        count.remove_suffix(1);
      auto n = std::strtoll(std::string{count}.c_str(), nullptr, 10);
      if (n >= 1)
        armed.push_back({std::string{item.substr(0, colon)}, n, every});
    }
    any = !armed.empty();
  }
};

fault_table& table() {
  static fault_table t;
  return t;
}

} // namespace

bool fault(std::string_view name) {
  auto& t = table();
  if (!t.any.load(std::memory_order_relaxed))
    return false;
  std::lock_guard lk{t.mtx};
  for (auto it = t.armed.begin(); it != t.armed.end(); ++it)
    if (it->name == name && --it->left == 0) {
      if (it->every) {
        it->left = 1;
        return true;
      }
      t.armed.erase(it);
      t.any = !t.armed.empty();
      return true;
    }
  return false;
}

void arm_fault(std::string_view name, std::int64_t n, bool every) {
  auto& t = table();
  std::lock_guard lk{t.mtx};
  std::erase_if(t.armed, [&](const armed_fault& f) { return f.name == name; });
  if (n >= 1)
    t.armed.push_back({std::string{name}, n, every});
  t.any = !t.armed.empty();
}

} // namespace sreh
