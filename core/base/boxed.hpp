#pragma once
// An optional value held on the heap: a pointer's size when empty, where `std::optional<T>` is
// always as large as T. For members that are usually empty in objects there are many of at once:
// a write batch's run rows and Works (every run in flight has a batch queued), a step's rarer
// facts (a run keeps those of all its steps). Reads and assigns like `std::optional<T>`; copies
// copy the value.

#include <memory>
#include <optional>
#include <utility>

namespace sreh {

template <class T>
class boxed {
 public:
  boxed() = default;
  boxed(T v) : p_(std::make_unique<T>(std::move(v))) {} // NOLINT: assigned as an optional is
  boxed(std::optional<T> v)                             // NOLINT
    : p_(v ? std::make_unique<T>(std::move(*v)) : nullptr) {}
  boxed(const boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  boxed(boxed&&) noexcept = default;
  boxed& operator=(const boxed& o) {
    if (this != &o)
      p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  boxed& operator=(boxed&&) noexcept = default;
  ~boxed() = default;

  [[nodiscard]] bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  [[nodiscard]] T value_or(T otherwise) const { return p_ ? *p_ : std::move(otherwise); }
  void reset() { p_.reset(); }

 private:
  std::unique_ptr<T> p_;
};

} // namespace sreh
