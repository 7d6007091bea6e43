#include "plugins/models/builtin/toolbox.hpp"

#include <map>

#include "actors/tools/tool.hpp"
#include "core/base/json.hpp"

namespace sreh::plugins::reasoner {

namespace {

using obs::capability_kind;

/// Arguments by the tool's name for them, each a JSON value; written in name order, so the
/// same call is always spelled the same.
using arguments = std::map<std::string, std::string>;

planned_call call_of(const std::string& tool, const arguments& args) {
  std::string text = "{";
  for (auto& [name, v] : args)
    text += (text.size() > 1 ? "," : "") + json::quote(name) + ":" + v;
  return {tool, text + "}", {}, 0, false};
}

/// Puts `value` (JSON) under the tool's argument for `role`, when it takes one.
void fill(arguments& args, const obs::capability& c, std::string_view role, std::string value) {
  if (auto name = c.argument(role))
    args[*name] = std::move(value);
}

std::string kind_or_service(const std::string& kind) {
  return kind.empty() ? std::string{"service"} : kind;
}

} // namespace

toolbox::toolbox(const actors::tool_registry& tools) {
  for (auto& t : tools.all())
    for (auto& c : t->provides())
      caps_.emplace_back(t->name(), c);
}

template <class Pred>
const toolbox::entry* toolbox::first(capability_kind k, Pred pred) const {
  for (auto& e : caps_)
    if (e.second.kind == k && pred(e.second))
      return &e;
  return nullptr;
}

namespace {

constexpr auto any = [](const obs::capability&) { return true; };

} // namespace

std::optional<planned_call> toolbox::topology() const {
  if (auto* e = first(capability_kind::topology, any))
    return call_of(e->first, {});
  return std::nullopt;
}

std::optional<planned_call> toolbox::alerts() const {
  if (auto* e = first(capability_kind::alerts, any))
    return call_of(e->first, {});
  return std::nullopt;
}

std::optional<planned_call> toolbox::flags() const {
  if (auto* e = first(capability_kind::flags, any))
    return call_of(e->first, {});
  return std::nullopt;
}

std::optional<planned_call> toolbox::deploys(const std::string& window) const {
  auto* e = first(capability_kind::deploys, any);
  if (!e)
    return std::nullopt;
  arguments args;
  fill(args, e->second, obs::role::window, json::quote(window));
  return call_of(e->first, args);
}

std::optional<planned_call> toolbox::describe(const std::string& name,
                                              const std::string& kind) const {
  auto k = kind_or_service(kind);
  auto* e = first(capability_kind::describe, [&](const obs::capability& c) {
    return c.covers(k) && c.argument(obs::role::entity);
  });
  if (!e)
    return listing(k);
  arguments args;
  fill(args, e->second, obs::role::entity, json::quote(name));
  fill(args, e->second, obs::role::kind, json::quote(k));
  return call_of(e->first, args);
}

std::optional<planned_call> toolbox::listing(const std::string& kind) const {
  auto k = kind_or_service(kind);
  if (auto* e = first(capability_kind::describe, [&](const obs::capability& c) {
        return c.covers(k) && !c.argument(obs::role::entity);
      }))
    return call_of(e->first, {});
  return std::nullopt;
}

std::optional<planned_call> toolbox::logs(const std::string& name, const std::string& kind) const {
  auto k = kind_or_service(kind);
  auto* e = first(capability_kind::logs, [&](const obs::capability& c) {
    return c.covers(k) && c.argument(obs::role::entity);
  });
  if (!e)
    return std::nullopt;
  arguments args;
  fill(args, e->second, obs::role::entity, json::quote(name));
  fill(args, e->second, obs::role::limit, "100");
  return call_of(e->first, args);
}

std::optional<planned_call> toolbox::remedy(const std::string& action,
                                            const std::string& args) const {
  auto* e =
    first(capability_kind::remedy, [&](const obs::capability& c) { return c.action == action; });
  if (!e)
    return std::nullopt;
  planned_call out{e->first, args, {}, 0, true};
  if (e->second.args.empty())
    return out;
  auto doc = json::parse(args);
  if (!doc || !doc->IsObject())
    return std::nullopt;
  // The action's arguments under the tool's names, in the template's order.
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  for (auto& m : doc->GetObject()) {
    w.Key(e->second.renamed(m.name.GetString()).c_str());
    m.value.Accept(w);
  }
  w.EndObject();
  out.args = buf.GetString();
  return out;
}

} // namespace sreh::plugins::reasoner
