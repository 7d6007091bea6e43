#include "core/base/sse.hpp"

namespace sreh {

bool sse_parser::feed(std::string_view bytes, const callback& on) {
  for (char c : bytes) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n')
        continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      std::string l;
      l.swap(partial_);
      if (!line(l, on))
        return false;
      continue;
    }
    if (partial_.size() < max_line)
      partial_.push_back(c);
  }
  return true;
}

bool sse_parser::flush(const callback& on) {
  if (!partial_.empty()) {
    std::string l;
    l.swap(partial_);
    if (!line(l, on))
      return false;
  }
  return line("", on);
}

bool sse_parser::line(std::string_view l, const callback& on) {
  if (l.empty()) {
    if (!has_data_ && pending_.error.empty()) {
      pending_ = {};
      return true;
    }
    sse_event m = std::move(pending_);
    m.id = last_id_;
    pending_ = {};
    has_data_ = false;
    return on(m);
  }
  if (l.front() == ':')
    return true; // a comment (keep-alive)
  auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value =
    colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ')
    value.remove_prefix(1);
  if (field == "data") {
    if (has_data_)
      pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event = std::string{value};
  } else if (field == "error") {
    pending_.error = std::string{value};
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos)
      last_id_.assign(value);
  }
  return true;
}

} // namespace sreh
