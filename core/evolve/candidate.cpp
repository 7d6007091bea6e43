#include "core/evolve/candidate.hpp"

#include <array>
#include <utility>

#include "core/model/json_codecs.hpp"
#include "core/model/json_fields.hpp"

namespace sreh::evolve {

namespace {

constexpr std::array<std::pair<artefact, const char*>, 4> artefact_names{{
  {artefact::knowledge_base, "knowledge_base"},
  {artefact::policy, "policy"},
  {artefact::prompt, "prompt"},
  {artefact::model_route, "model_route"},
}};

constexpr std::array<std::pair<candidate_state, const char*>, 7> state_names{{
  {candidate_state::evaluating, "evaluating"},
  {candidate_state::refused, "refused"},
  {candidate_state::failed, "failed"},
  {candidate_state::awaiting_approval, "awaiting_approval"},
  {candidate_state::promoted, "promoted"},
  {candidate_state::superseded, "superseded"},
  {candidate_state::rolled_back, "rolled_back"},
}};

template <class Enum, std::size_t N>
const char* name_in(const std::array<std::pair<Enum, const char*>, N>& names, Enum e) {
  for (const auto& [v, n] : names)
    if (v == e)
      return n;
  return "?";
}

template <class Enum, std::size_t N>
std::optional<Enum> parse_in(const std::array<std::pair<Enum, const char*>, N>& names,
                             std::string_view s) {
  for (const auto& [v, n] : names)
    if (s == n)
      return v;
  return std::nullopt;
}

using namespace json::detail;

void write_candidate(json::writer& w, const candidate& c) {
  w.StartObject();
  w.Key("id"), str(w, c.id);
  w.Key("revision"), w.Int64(c.revision);
  w.Key("kind"), w.String(to_string(c.kind));
  w.Key("state"), w.String(to_string(c.state));
  w.Key("proposer"), str(w, c.proposer);
  w.Key("reason"), str_or_null(w, c.reason);
  w.Key("sha256"), str(w, c.sha256);
  w.Key("base"), str(w, c.base);
  w.Key("regressions");
  w.StartArray();
  for (const auto& r : c.regressions)
    str(w, r);
  w.EndArray();
  w.Key("error"), str_or_null(w, c.error);
  w.Key("promotion");
  if (c.promotion)
    json::write(w, *c.promotion);
  else
    w.Null();
  w.Key("replaced"), str_or_null(w, c.replaced);
  w.Key("ended_by"), str_or_null(w, c.ended_by);
  w.Key("created_at"), json::timestamp(w, c.created_at);
  w.Key("evaluated_at"), json::timestamp(w, c.evaluated_at);
  w.Key("promoted_at"), json::timestamp(w, c.promoted_at);
  w.Key("ended_at"), json::timestamp(w, c.ended_at);
  w.Key("report"), json::raw(w, c.report);
  w.Key("body"), str(w, c.body);
  w.EndObject();
}

} // namespace

const char* to_string(artefact a) {
  return name_in(artefact_names, a);
}

const char* to_string(candidate_state s) {
  return name_in(state_names, s);
}

std::optional<artefact> parse_artefact(std::string_view s) {
  return parse_in(artefact_names, s);
}

std::optional<candidate_state> parse_candidate_state(std::string_view s) {
  return parse_in(state_names, s);
}

std::string pinned_version(std::string_view spec, artefact kind) {
  auto doc = json::parse_object(spec);
  if (!doc)
    return std::string{config_version};
  const auto* versions = json::member(*doc, "versions");
  if (versions == nullptr || !versions->IsObject())
    return std::string{config_version};
  auto v = json::string_or(*versions, to_string(kind), std::string{config_version});
  return v.empty() ? std::string{config_version} : v;
}

std::string pin_version(std::string_view spec, artefact kind, std::string_view version) {
  if (version == config_version && spec.find("\"versions\"") == std::string_view::npos)
    return std::string{spec}; // nothing pinned: the config's already
  auto doc = json::parse_object(spec.empty() ? std::string_view{"{}"} : spec);
  if (!doc)
    return std::string{spec};
  auto& a = doc->GetAllocator();
  auto m = doc->FindMember("versions");
  if (m == doc->MemberEnd() || !m->value.IsObject()) {
    if (m != doc->MemberEnd())
      doc->RemoveMember(m);
    doc->AddMember("versions", rapidjson::Value{rapidjson::kObjectType}, a);
    m = doc->FindMember("versions");
  }
  m->value.RemoveMember(to_string(kind));
  if (version != config_version) {
    rapidjson::Value key{to_string(kind), a};
    rapidjson::Value value{version.data(), static_cast<rapidjson::SizeType>(version.size()), a};
    m->value.AddMember(key, value, a);
  }
  return json::stringify(*doc);
}

std::string unpinned(std::string_view spec) {
  auto doc = json::parse_object(spec.empty() ? std::string_view{"{}"} : spec);
  if (!doc)
    return std::string{spec};
  doc->RemoveMember("versions");
  return json::stringify(*doc);
}

const candidate* current_of(const std::vector<candidate>& all, artefact kind) {
  for (const auto& c : all)
    if (c.kind == kind && c.state == candidate_state::promoted)
      return &c;
  return nullptr;
}

std::string to_json(const candidate& c) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  write_candidate(w, c);
  return {buf.GetString(), buf.GetSize()};
}

expected<candidate> candidate_from_json(std::string_view text) {
  auto doc = json::parse_object(text);
  if (!doc)
    return doc.error();
  candidate c;
  fields f{*doc, ""};
  f.text("id", c.id);
  f.integer("revision", c.revision);
  f.enumeration("kind", c.kind, parse_artefact, std::optional<artefact>{});
  f.enumeration("state", c.state, parse_candidate_state, std::optional<candidate_state>{});
  f.text("proposer", c.proposer);
  f.text("reason", c.reason, true);
  f.text("sha256", c.sha256);
  f.text("base", c.base);
  f.text("error", c.error, true);
  f.text("replaced", c.replaced, true);
  f.text("ended_by", c.ended_by, true);
  f.time("created_at", c.created_at);
  f.time("evaluated_at", c.evaluated_at);
  f.time("promoted_at", c.promoted_at);
  f.time("ended_at", c.ended_at);
  f.raw_text("report", c.report);
  f.text("body", c.body);
  if (f.err())
    return f.err();
  if (auto m = doc->FindMember("regressions"); m != doc->MemberEnd() && m->value.IsArray())
    for (const auto& r : m->value.GetArray())
      if (r.IsString())
        c.regressions.emplace_back(r.GetString(), r.GetStringLength());
  if (auto m = doc->FindMember("promotion"); m != doc->MemberEnd() && m->value.IsObject()) {
    auto a = json::approval_from_json(json::stringify(m->value));
    if (!a)
      return sreh::error{a.error().code, "promotion: " + a.error().message};
    c.promotion = std::move(*a);
  }
  return c;
}

} // namespace sreh::evolve
