// A model-route candidate (docs/evolve.md): the `model:` and `models:` sections of a node config,
// proposed over the API and read with the node config's own readers, but holding no secret and
// naming no file of the node's: its routes borrow the key and CA of the node's route to the same
// server.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "config/node/section_readers.hpp"

namespace sreh::config {

using yaml::entry;
using yaml::reader;

namespace {

/// Keys a candidate may not have: they read secrets, files or the environment of the node.
constexpr std::array<std::string_view, 5> forbidden_keys{"api_key", "api_key_file", "ca_file", "kb",
                                                         "script"};

/// Fails on a forbidden key of `section` (`model:` or one route of `models:`).
void refuse_secrets(reader& r, const entry& section) {
  if (!section.value.is_mapping())
    return; // the section's reader names the type error
  for (const auto& e : r.pairs(section)) {
    if (std::find(forbidden_keys.begin(), forbidden_keys.end(), e.key) != forbidden_keys.end())
      r.fail(e, "a model-route candidate names no secret or file: each route uses the key and "
                "CA of the node's route to the same base_url (kb and system_prompt are "
                "candidates of their own)");
    if (e.key == "system_prompt")
      r.fail(e, "the system prompt is a candidate of its own (kind prompt)");
  }
}

/// `${` anywhere in `text`: a candidate is read without the node's environment.
void refuse_env(const reader& r, std::string_view text) {
  auto at = text.find("${");
  if (at == std::string_view::npos)
    return;
  yaml::mark m;
  m.line = static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  auto line_start = text.rfind('\n', at);
  m.column = static_cast<int>(line_start == std::string_view::npos ? at : at - line_start - 1);
  r.fail(m, "", "a candidate is read without the node's environment: no ${NAME}");
}

/// The node's route that `route` talks to (same provider and base_url), if any.
const model_route* same_server(const model_config& node, const model_route& route) {
  auto same = [&](const model_route& n) {
    return n.provider == route.provider && n.base_url == route.base_url;
  };
  if (same(node.main))
    return &node.main;
  for (const auto& [_, n] : node.routes)
    if (same(n))
      return &n;
  return nullptr;
}

void borrow_credentials(const model_config& node, model_route& route) {
  if (const auto* n = same_server(node, route)) {
    route.api_key = n->api_key;
    route.api_key_unset = n->api_key_unset;
    route.ca_file = n->ca_file;
  }
}

} // namespace

expected<model_config> load_model_candidate(std::string_view text, std::string_view source,
                                            const model_config& node) {
  model_config out;
  reader r{std::string{source}};
  try {
    refuse_env(r, text);
    auto root = r.parse(text);
    if (!root.value.is_mapping())
      r.fail(root, "expected a mapping with model: (and models: for the routes it names)");
    std::optional<entry> model;
    for (const auto& e : r.entries(root, {"model", "models"})) {
      if (e.key == "model") {
        model = e;
        continue;
      }
      for (const auto& route : r.pairs(e))
        refuse_secrets(r, route);
      detail::read_models(r, e, std::string{source}, out);
    }
    if (!model)
      r.fail(root, "missing key 'model'");
    refuse_secrets(r, *model);
    detail::read_model(r, *model, std::string{source}, out);
  } catch (const yaml::load_error& e) {
    return sreh::error{errc::invalid_argument, e.message};
  }
  if (out.provider == "scripted")
    return sreh::error{
      errc::invalid_argument,
      fmt::format("{}: model.provider: scripted is for tests, not a candidate", source)};
  borrow_credentials(node, out.main);
  for (auto& [_, route] : out.routes)
    borrow_credentials(node, route);
  out.kb = node.kb;
  out.kb_text = node.kb_text;
  out.kb_source = node.kb_source;
  out.system_prompt = node.system_prompt;
  out.system_prompt_version = node.system_prompt_version;
  return out;
}

} // namespace sreh::config
