#include "net/sse/sse_format.hpp"

#include <charconv>

#include "core/base/json.hpp"

namespace sreh::net {

std::optional<std::int64_t> parse_last_event_id(const std::string& s) {
  // Digits only: from_chars alone would take "-0" (found by the fuzz target last_event_id).
  if (s.empty() || s.size() > 19 || s[0] < '0' || s[0] > '9')
    return std::nullopt;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v < 0)
    return std::nullopt;
  return v;
}

std::string sse_frame(const event& e) {
  std::string out;
  auto data = json::to_json(e);
  out.reserve(data.size() + e.kind.size() + 40);
  out += "id: ";
  out += std::to_string(e.seq);
  out += "\nevent: ";
  // Kinds are the kernel's own names; a line break in one would still split the frame.
  if (e.kind.find_first_of("\r\n") == std::string::npos) {
    out += e.kind;
  } else {
    for (char c : e.kind)
      out += c == '\r' || c == '\n' ? '_' : c;
  }
  out += "\ndata: ";
  out += data;
  out += "\n\n";
  return out;
}

bool sse_parser::feed(std::string_view bytes, const callback& on_event) {
  for (char c : bytes) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n')
        continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      std::string l;
      l.swap(line_);
      if (!line(l, on_event))
        return false;
    } else {
      line_.push_back(c);
    }
  }
  return true;
}

bool sse_parser::line(std::string_view l, const callback& on_event) {
  if (l.empty()) {
    bool keep = true;
    if (has_data_) {
      sse_event ev;
      ev.id = last_id_;
      ev.event = event_.empty() ? "message" : event_;
      ev.data = std::move(data_);
      keep = on_event(ev);
    }
    data_.clear();
    has_data_ = false;
    event_.clear();
    return keep;
  }
  if (l.front() == ':')
    return true; // comment (heartbeat)
  auto colon = l.find(':');
  auto field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ')
      value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_)
      data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos)
      last_id_.assign(value);
  }
  return true;
}

} // namespace sreh::net
