#include "net/http/url.hpp"

#include "core/base/http_url.hpp"

namespace sreh::net {

std::optional<split_target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/')
    return std::nullopt;
  split_target out;
  auto q = target.find('?');
  auto raw_path = target.substr(0, q);
  auto hash = raw_path.find('#');
  if (hash != std::string_view::npos)
    raw_path = raw_path.substr(0, hash);
  auto path = percent_decode(raw_path, false);
  if (!path)
    return std::nullopt;
  out.path = std::move(*path);
  if (q == std::string_view::npos)
    return out;
  auto query = target.substr(q + 1);
  if (auto h = query.find('#'); h != std::string_view::npos)
    query = query.substr(0, h);
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty())
      continue;
    auto eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    auto value =
      percent_decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (!key || !value)
      return std::nullopt;
    out.query.emplace(std::move(*key), std::move(*value));
  }
  return out;
}

} // namespace sreh::net
