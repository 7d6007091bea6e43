#include "actors/tools/tool.hpp"
#include "core/base/json.hpp"
#include "core/base/json_schema.hpp"

namespace sreh::actors {

const char* to_string(risk_class r) {
  switch (r) {
  case risk_class::read_only:
    return "read_only";
  case risk_class::low:
    return "low";
  case risk_class::medium:
    return "medium";
  case risk_class::high:
    return "high";
  }
  return "unknown";
}

action_scope tool::scope(std::string_view args) const {
  action_scope sc;
  auto doc = json::parse(args);
  if (!doc || !doc->IsObject())
    return sc;
  for (const char* key : {"service", "database", "host", "flag", "job", "target"}) {
    auto m = doc->FindMember(key);
    if (m != doc->MemberEnd() && m->value.IsString()) {
      sc.target = m->value.GetString();
      break;
    }
  }
  return sc;
}

expected<std::shared_ptr<const rapidjson::Document>> tool::parse_args(std::string_view args) const {
  std::call_once(schema_once_, [this] {
    if (auto doc = json::parse(schema()))
      schema_doc_ = std::make_shared<const rapidjson::Document>(std::move(*doc));
    else
      schema_error_ = "tool schema is not valid JSON: " + doc.error().message;
  });
  if (!schema_doc_)
    return sreh::error{errc::internal, schema_error_};
  auto doc = json::parse(args);
  if (!doc)
    return sreh::error{errc::invalid_argument, "arguments: " + doc.error().message};
  if (auto err = json::validate(*schema_doc_, *doc))
    return err;
  return std::make_shared<const rapidjson::Document>(std::move(*doc));
}

void tool_registry::add(tool_ptr t) {
  auto name = t->name();
  tools_[name] = std::move(t);
}

bool tool_registry::remove(std::string_view name) {
  auto i = tools_.find(name);
  if (i == tools_.end())
    return false;
  tools_.erase(i);
  return true;
}

tool_ptr tool_registry::find(std::string_view name) const {
  auto i = tools_.find(name);
  return i == tools_.end() ? nullptr : i->second;
}

outcome::mutating_fn tool_registry::mutating() const {
  return [this](std::string_view name) {
    auto t = find(name);
    return !t || t->risk() != risk_class::read_only;
  };
}

std::vector<tool_ptr> tool_registry::all() const {
  std::vector<tool_ptr> out;
  out.reserve(tools_.size());
  for (auto& [name, t] : tools_)
    out.push_back(t);
  return out;
}

std::vector<std::pair<tool_ptr, obs::capability>>
tool_registry::providing(obs::capability_kind kind) const {
  std::vector<std::pair<tool_ptr, obs::capability>> out;
  for (auto& [name, t] : tools_)
    for (auto& c : t->provides())
      if (c.kind == kind)
        out.emplace_back(t, c);
  return out;
}

obs::observations tool_registry::observations_of(const step& s) const {
  if (s.kind != step_kind::tool || s.state != step_state::succeeded || s.result_truncated)
    return {};
  auto t = find(s.tool);
  if (!t)
    return {};
  return t->observe(s.args.empty() ? "{}" : s.args, s.result.empty() ? "{}" : s.result);
}

} // namespace sreh::actors
