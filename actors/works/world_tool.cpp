#include "actors/works/world_tool.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

/// The observation kind of a world kind: GPU nodes are hosts (subkind gpu), flags are no
/// entity of the graph; other kinds as they are.
std::optional<obs::entity_ref> ref_of(const rapidjson::Value& e) {
  auto str = [&e](const char* key, const char* sub = nullptr) -> std::string {
    const rapidjson::Value* v = &e;
    for (const char* k : {key, sub}) {
      if (k == nullptr)
        break;
      auto m = v->FindMember(k);
      if (m == v->MemberEnd())
        return {};
      v = &m->value;
    }
    return v->IsString() ? v->GetString() : "";
  };
  obs::entity_ref r{str("id"), str("kind"), {}};
  if (r.name.empty() || r.kind == "flag")
    return std::nullopt;
  if (r.kind == "gpu_node" || r.kind == "host") {
    r.subkind = r.kind == "host" ? "vm" : "gpu";
    r.kind = "host";
  } else if (r.kind == "job") {
    r.subkind = str("props", "type");
  }
  return r;
}

class world_tool final : public tool {
 public:
  explicit world_tool(std::shared_ptr<const world_view> world) : world_(std::move(world)) {}

  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override { return risk_class::read_only; }
  bool idempotent() const override { return true; }

  tool_result execute(const tool_call& call) override {
    auto args = json::parse_object(call.args);
    if (!args)
      return tool_result::failure("world.get: " + args.error().message);
    std::string id, kind;
    if (auto e = args->FindMember("entity"); e != args->MemberEnd() && e->value.IsString())
      id = e->value.GetString();
    if (auto k = args->FindMember("kind"); k != args->MemberEnd() && k->value.IsString())
      kind = k->value.GetString();
    auto snap = world_->current();
    if (!snap)
      return tool_result::failure("world.get: no world state yet (the node has no world "
                                  "source, or it has not been observed yet)");
    // One entity comes with those it depends on and those that depend on it.
    const world::entity* target = nullptr;
    if (!id.empty()) {
      for (const auto& e : snap->entities)
        if (e.id == id)
          target = &e;
      if (target == nullptr)
        return tool_result::failure("world.get: world state has no entity '" + id + "'");
    }
    auto has = [](const std::vector<std::string>& xs, const std::string& x) {
      return std::find(xs.begin(), xs.end(), x) != xs.end();
    };
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("world_at");
    json::timestamp(w, snap->world_at);
    w.Key("entities");
    w.StartArray();
    for (const auto& e : snap->entities) {
      const bool related =
        target == nullptr || &e == target || has(e.depends_on, id) || has(target->depends_on, e.id);
      if (related && (kind.empty() || e.kind == kind))
        world::write_json(w, e, false);
    }
    w.EndArray();
    w.EndObject();
    return tool_result::success({buf.GetString(), buf.GetSize()});
  }

  /// The whole graph for a reasoner (no arguments): its services, hosts and jobs and the
  /// dependencies between them.
  std::vector<obs::capability> provides() const override {
    obs::capability c;
    c.kind = obs::capability_kind::topology;
    return {c};
  }

  /// A `topology` of the entities listed (complete without `entity`): a dependency on a host
  /// is where the service or job runs, any other a call.
  obs::observations observe(std::string_view args, std::string_view result) const override {
    auto a = json::parse_object(args);
    auto doc = json::parse_object(result);
    if (!a || !doc || !doc->HasMember("entities") || !(*doc)["entities"].IsArray())
      return {};
    obs::topology t;
    t.complete = !a->HasMember("entity") && !a->HasMember("kind");
    std::map<std::string, obs::entity_ref> refs;
    for (const auto& e : (*doc)["entities"].GetArray())
      if (auto r = e.IsObject() ? ref_of(e) : std::nullopt) {
        refs[r->name] = *r;
        t.entities.push_back(std::move(*r));
      }
    for (const auto& e : (*doc)["entities"].GetArray()) {
      auto from = e.IsObject() ? ref_of(e) : std::nullopt;
      auto deps = from ? e.FindMember("depends_on") : e.MemberEnd();
      if (!from || deps == e.MemberEnd() || !deps->value.IsArray())
        continue;
      for (const auto& d : deps->value.GetArray()) {
        auto to = d.IsString() ? refs.find(d.GetString()) : refs.end();
        if (to == refs.end())
          continue;
        auto rel = to->second.kind != "host" ? obs::relation::calls
                   : from->kind == "job"     ? obs::relation::job_on
                                             : obs::relation::runs_on;
        t.edges.push_back({from->name, rel, to->first});
      }
    }
    return {std::move(t)};
  }

 private:
  std::shared_ptr<const world_view> world_;
  std::string name_ = "world.get";
  std::string description_ =
    "World state: every entity (service, database, host, GPU node, job, flag) with its metrics, "
    "properties and dependencies, as last observed; `entity` narrows it to one entity with "
    "what it depends on and what depends on it, `kind` to one kind.";
  std::string schema_ = R"({"type":"object","properties":{"entity":{"type":"string",)"
                        R"("maxLength":256},"kind":{"type":"string","maxLength":64}},)"
                        R"("additionalProperties":false})";
};

} // namespace

tool_ptr make_world_tool(std::shared_ptr<const world_view> world) {
  return std::make_shared<world_tool>(std::move(world));
}

} // namespace sreh::actors
