#include "config/node/sections.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace sreh::config {

void section_registry::add(section_spec s) {
  for (auto& x : specs_)
    if (x.path == s.path) {
      x = std::move(s);
      return;
    }
  specs_.push_back(std::move(s));
}

const section_spec* section_registry::find(std::string_view path) const {
  for (const auto& s : specs_)
    if (s.path == path)
      return &s;
  return nullptr;
}

std::vector<std::string_view> section_registry::keys_under(std::string_view parent) const {
  std::vector<std::string_view> keys;
  for (const auto& s : specs_) {
    std::string_view path = s.path;
    auto dot = path.rfind('.');
    auto owner = dot == std::string_view::npos ? std::string_view{} : path.substr(0, dot);
    if (owner == parent)
      keys.push_back(dot == std::string_view::npos ? path : path.substr(dot + 1));
  }
  return keys;
}

std::string read_path(yaml::reader& r, const yaml::entry& e, const std::string& config_file) {
  auto path = r.string(e);
  if (path.empty())
    r.fail(e, "must not be empty");
  std::filesystem::path p{path};
  if (p.is_relative())
    p = (std::filesystem::path{config_file}.parent_path() / p).lexically_normal();
  if (::access(p.c_str(), R_OK) != 0)
    r.fail(e, fmt::format("cannot read '{}': {}", p.string(), std::strerror(errno)));
  return p.string();
}

sreh::error field_error(std::string_view field, std::string_view what) {
  return sreh::error{errc::invalid_argument, fmt::format("{}: {}", field, what)};
}

} // namespace sreh::config
