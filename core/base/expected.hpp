#pragma once

#include <utility>
#include <variant>

#include "core/base/status.hpp"

namespace sreh {

/// A value or an error. (std::expected is C++23; this is the small subset we need.)
template <class T>
class [[nodiscard]] expected {
 public:
  expected(T v) : v_(std::move(v)) {}
  expected(sreh::error e) : v_(std::move(e)) {}
  [[nodiscard]] bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  [[nodiscard]] const sreh::error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, sreh::error> v_;
};

} // namespace sreh
