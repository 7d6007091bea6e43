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
      auto n = std::strtoll(std::string{item.substr(colon + 1)}.c_str(), nullptr, 10);
      if (n >= 1)
        armed.push_back({std::string{item.substr(0, colon)}, n});
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
      t.armed.erase(it);
      t.any = !t.armed.empty();
      return true;
    }
  return false;
}

void arm_fault(std::string_view name, std::int64_t n) {
  auto& t = table();
  std::lock_guard lk{t.mtx};
  std::erase_if(t.armed, [&](const armed_fault& f) { return f.name == name; });
  if (n >= 1)
    t.armed.push_back({std::string{name}, n});
  t.any = !t.armed.empty();
}

} // namespace sreh
