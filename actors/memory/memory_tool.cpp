#include "actors/memory/memory_tool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/json_object.hpp"
#include "core/base/text.hpp"

namespace sreh::actors {

namespace {

/// The search a call asks for (its arguments are valid against the schema).
expected<memory::query> query_of(std::string_view args) {
  auto a = json::parse_object(args);
  if (!a)
    return sreh::error{errc::invalid_argument, "memory.search: " + a.error().message};
  memory::query q;
  q.text = json::string_or(*a, "query");
  if (const auto* near = json::member(*a, "near"); near && near->IsObject())
    for (const auto& m : near->GetObject())
      if (m.value.IsString())
        q.labels.emplace(m.name.GetString(), m.value.GetString());
  if (const auto* entities = json::member(*a, "entities"); entities && entities->IsArray())
    for (const auto& e : entities->GetArray())
      if (e.IsString())
        q.entities.emplace_back(e.GetString());
  if (auto k = json::string_or(*a, "kind"); !k.empty()) {
    q.kind = memory::parse_kind(k);
    if (!q.kind)
      return sreh::error{errc::invalid_argument,
                         fmt::format("memory.search: unknown kind '{}' (postmortem, incident, "
                                     "note or runbook)",
                                     k)};
  }
  q.limit = static_cast<int>(json::int_of(*a, "limit").value_or(5));
  q.limit = std::clamp(q.limit, 1, max_recalled);
  return q;
}

void write_case(json::writer& w, const memory::hit& h) {
  const auto& e = h.e;
  auto text = utf8_prefix(e.text, recalled_text_bytes);
  w.StartObject();
  json::fields(w, "id", e.id, "version", e.version, "kind", memory::to_string(e.kind), "score",
               std::round(h.score * 1000) / 1000);
  w.Key("labels");
  json::raw(w, memory::labels_json(e.labels));
  w.Key("entities");
  json::raw(w, memory::entities_json(e.entities));
  json::fields(w, "text", text);
  if (text.size() < e.text.size())
    json::fields(w, "truncated", true);
  w.EndObject();
}

obs::past_case read_case(const rapidjson::Value& c) {
  obs::past_case p;
  p.id = json::string_or(c, "id");
  p.version = json::int_of(c, "version").value_or(0);
  p.kind = json::string_or(c, "kind");
  if (const auto* s = json::member(c, "score"); s && s->IsNumber())
    p.score = s->GetDouble();
  if (const auto* labels = json::member(c, "labels"); labels && labels->IsObject())
    for (const auto& m : labels->GetObject())
      if (m.value.IsString())
        p.labels.emplace(m.name.GetString(), m.value.GetString());
  if (const auto* entities = json::member(c, "entities"); entities && entities->IsArray())
    for (const auto& e : entities->GetArray())
      if (e.IsString())
        p.entities.emplace_back(e.GetString());
  p.text = json::string_or(c, "text");
  p.truncated = json::bool_or(c, "truncated");
  return p;
}

class memory_tool final : public tool {
 public:
  explicit memory_tool(std::shared_ptr<const memory_link> link) : link_(std::move(link)) {}

  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override { return risk_class::read_only; }
  bool idempotent() const override { return true; }
  bool blocking() const override { return true; } // a store read

  tool_result execute(const tool_call& call) override {
    auto* svc = link_ ? link_->service : nullptr;
    if (svc == nullptr)
      return tool_result::failure("memory.search: the node's memory is not up yet");
    auto q = query_of(call.args);
    if (!q)
      return tool_result::from_error(q.error());
    auto hits = svc->search(*q);
    if (!hits)
      return tool_result::from_error(
        sreh::error{hits.error().code, "memory.search: " + hits.error().message});
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("memories");
    w.StartArray();
    for (const auto& h : *hits)
      write_case(w, h);
    w.EndArray();
    w.EndObject();
    return tool_result::success({buf.GetString(), buf.GetSize()});
  }

  std::vector<obs::capability> provides() const override {
    obs::capability c;
    c.kind = obs::capability_kind::recall;
    c.args = {{std::string{obs::role::query}, "query"},
              {std::string{obs::role::near}, "near"},
              {std::string{obs::role::limit}, "limit"}};
    return {c};
  }

  obs::observations observe(std::string_view, std::string_view result) const override {
    auto doc = json::parse_object(result);
    if (!doc)
      return {};
    const auto* list = json::member(*doc, "memories");
    if (!list || !list->IsArray())
      return {obs::call_failed{"the result has no 'memories' list"}};
    obs::past_cases found;
    for (const auto& c : list->GetArray())
      if (c.IsObject())
        found.cases.push_back(read_case(c));
    return {std::move(found)};
  }

 private:
  std::shared_ptr<const memory_link> link_;
  std::string name_ = "memory.search";
  std::string description_ =
    "Search the team's long-term memory — past incidents, postmortems, runbooks and operators' "
    "notes — for cases like this one. `query` is free text (any of its words may match; the "
    "ranking decides), `near` the labels of the case at hand (service, alert, ...) to rank "
    "entries that share them first. Each memory comes with its id and version: cite them. A "
    "memory is a lead, not evidence: confirm what it suggests with the system's own tools.";
  std::string schema_ =
    R"({"type":"object","properties":{)"
    R"("query":{"type":"string","maxLength":1024},)"
    R"("near":{"type":"object","maxProperties":32,)"
    R"("additionalProperties":{"type":"string","maxLength":256}},)"
    R"("entities":{"type":"array","maxItems":32,"items":{"type":"string","maxLength":128}},)"
    R"("kind":{"type":"string","enum":["postmortem","incident","note","runbook"]},)"
    R"("limit":{"type":"integer","minimum":1,"maximum":10}},)"
    R"("required":["query"],"additionalProperties":false})";
};

} // namespace

tool_ptr make_memory_tool(std::shared_ptr<const memory_link> link) {
  return std::make_shared<memory_tool>(std::move(link));
}

} // namespace sreh::actors
