#include "net/http/router.hpp"

#include <algorithm>

namespace sreh::net {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path == "/")
    return out;
  if (path.front() == '/')
    path.remove_prefix(1);
  while (true) {
    auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos)
      break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

namespace {

bool is_param(std::string_view seg) {
  return seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
}

bool matches(const router::route& r, const std::vector<std::string_view>& parts,
             std::map<std::string, std::string>* params) {
  if (r.segments.size() != parts.size())
    return false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& seg = r.segments[i];
    if (is_param(seg)) {
      if (parts[i].empty())
        return false;
    } else if (seg != parts[i]) {
      return false;
    }
  }
  if (params) {
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (is_param(r.segments[i]))
        (*params)[r.segments[i].substr(1, r.segments[i].size() - 2)] = std::string(parts[i]);
  }
  return true;
}

std::vector<std::string> segments_of(const std::string& pattern) {
  std::vector<std::string> out;
  for (auto s : split_path(pattern))
    out.emplace_back(s);
  return out;
}

} // namespace

void router::add(std::string method, std::string pattern, access need, plain_handler h) {
  auto segs = segments_of(pattern);
  routes_.push_back(
    route{std::move(method), std::move(pattern), std::move(segs), need, std::move(h), {}});
}

void router::add_nonblocking(std::string method, std::string pattern, access need,
                             plain_handler h) {
  add(std::move(method), std::move(pattern), need, std::move(h));
  routes_.back().on_io_thread = true;
}

void router::add_sse(std::string pattern, access need, sse_handler h) {
  auto segs = segments_of(pattern);
  routes_.push_back(route{"GET", std::move(pattern), std::move(segs), need, {}, std::move(h)});
}

router::match router::find(std::string_view method, std::string_view path) const {
  match m;
  auto parts = split_path(path);
  std::vector<std::string> allowed;
  for (const auto& r : routes_) {
    if (!matches(r, parts, nullptr))
      continue;
    if (r.method == method) {
      matches(r, parts, &m.params);
      m.found = &r;
      return m;
    }
    if (std::find(allowed.begin(), allowed.end(), r.method) == allowed.end())
      allowed.push_back(r.method);
  }
  if (allowed.empty()) {
    m.status = 404;
    return m;
  }
  m.status = 405;
  for (const auto& a : allowed) {
    if (!m.allow.empty())
      m.allow += ", ";
    m.allow += a;
  }
  return m;
}

} // namespace sreh::net
