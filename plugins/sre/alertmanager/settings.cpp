#include "plugins/sre/alertmanager/settings.hpp"

#include <fmt/format.h>

#include "config/node/node_config.hpp"
#include "config/node/sections.hpp"
#include "config/yaml/reader.hpp"
#include "core/works/template.hpp"
#include "plugins/sections.hpp"

namespace sreh::plugins {

namespace {

using alertmanager::settings;
using config::yaml::entry;
using config::yaml::reader;

/// `receiver:` (the webhook receiver's template, its field mapping and limits).
void read_receiver(reader& r, const entry& e, settings& out) {
  for (const auto& x : r.entries(e, {"template", "fields", "severity", "max_alerts"})) {
    if (x.key == "template") {
      out.receiver_template = r.non_empty_string(x);
    } else if (x.key == "max_alerts") {
      out.max_alerts = r.integer(x, 1, 100'000);
    } else {
      auto& map = x.key == "fields" ? out.fields : out.severity;
      if (x.key == "severity")
        map.clear(); // the file's table replaces the default one
      for (const auto& p : r.pairs(x))
        map[p.key] = r.non_empty_string(p);
    }
  }
}

settings read_settings(reader& r, const entry& section, const config::section_context&) {
  settings out;
  for (const auto& e : r.entries(section, {"url", "timeout_ms", "max_alerts_listed", "receiver"})) {
    if (e.key == "url")
      config::read_server_url(r, e, out);
    else if (e.key == "timeout_ms")
      out.timeout_ms = r.integer(e, 1, 600'000);
    else if (e.key == "max_alerts_listed")
      out.max_alerts_listed = r.integer(e, 1, 10'000);
    else
      read_receiver(r, e, out);
  }
  return out;
}

/// The receiver's template is one of the node's Work templates and has every field mapped.
sreh::error check_settings(const settings& s, const config::node_config& cfg) {
  const auto& name = s.receiver_template;
  if (name.empty())
    return {};
  const works::work_template* t = nullptr;
  for (const auto& x : cfg.works.loaded)
    if (x.name == name)
      t = &x;
  if (t == nullptr)
    return config::field_error("alertmanager.receiver.template",
                               fmt::format("no Work template '{}' in works.templates", name));
  for (const auto& [field, from] : s.fields)
    if (t->field(field) == nullptr)
      return config::field_error("alertmanager.receiver.fields",
                                 fmt::format("template '{}' has no field '{}'", name, field));
  return {};
}

} // namespace

void register_alertmanager_section(config::section_registry& r) {
  r.add<settings>(read_settings, check_settings);
}

} // namespace sreh::plugins
