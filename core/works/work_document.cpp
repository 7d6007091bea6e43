// The stored document of a Work: every member as JSON (times as integer microseconds, `fields`
// and `labels` as the JSON objects they are, `marks` as an object, `runs` as an array, the state
// by name), and back.
#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/model/json_fields.hpp"
#include "core/works/work.hpp"

namespace sreh::works {

namespace {

using json::detail::fields;
using json::detail::str;

sreh::error bad_document(std::string_view what) {
  return {errc::internal, fmt::format("work document: {}", what)};
}

/// The JSON object `text` written as a value: `{}` when it is not one (the writer never makes
/// a document that does not parse).
void object_text(json::writer& w, std::string_view text) {
  auto doc = json::parse_object(text);
  if (doc)
    doc->Accept(w);
  else
    w.StartObject(), w.EndObject();
}

void write_marks(json::writer& w, const sla_marks& m) {
  w.StartObject();
  w.Key("created_at"), w.Int64(m.created_at);
  w.Key("acknowledged_at"), w.Int64(m.acknowledged_at);
  w.Key("mitigated_at"), w.Int64(m.mitigated_at);
  w.Key("resolved_at"), w.Int64(m.resolved_at);
  w.EndObject();
}

/// The member `name`, which must be an object, as compact JSON text.
sreh::error read_object_text(const rapidjson::Value& doc, const char* name, std::string& out) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd())
    return {};
  if (!it->value.IsObject())
    return bad_document(
      fmt::format("member '{}': expected an object, got {}", name, json::type_of(it->value)));
  out = json::stringify(it->value);
  return {};
}

sreh::error read_runs(const rapidjson::Value& doc, std::vector<std::string>& out) {
  auto it = doc.FindMember("runs");
  if (it == doc.MemberEnd())
    return {};
  if (!it->value.IsArray())
    return bad_document(
      fmt::format("member 'runs': expected an array, got {}", json::type_of(it->value)));
  out.clear();
  for (const auto& x : it->value.GetArray()) {
    if (!x.IsString())
      return bad_document(fmt::format("member 'runs': expected strings, got {}", json::type_of(x)));
    out.emplace_back(x.GetString(), x.GetStringLength());
  }
  return {};
}

sreh::error read_marks(const rapidjson::Value& doc, sla_marks& m) {
  auto it = doc.FindMember("marks");
  if (it == doc.MemberEnd())
    return {};
  if (!it->value.IsObject())
    return bad_document(
      fmt::format("member 'marks': expected an object, got {}", json::type_of(it->value)));
  fields f{it->value, "marks."};
  f.integer("created_at", m.created_at);
  f.integer("acknowledged_at", m.acknowledged_at);
  f.integer("mitigated_at", m.mitigated_at);
  f.integer("resolved_at", m.resolved_at);
  return f.err() ? bad_document(f.err().message) : sreh::error{};
}

} // namespace

std::string to_document(const work& w) {
  rapidjson::StringBuffer buf;
  json::writer out{buf};
  out.StartObject();
  out.Key("id"), str(out, w.id);
  out.Key("template"), str(out, w.template_name);
  out.Key("template_version"), str(out, w.template_version);
  out.Key("kind"), str(out, w.kind);
  out.Key("title"), str(out, w.title);
  out.Key("severity"), str(out, w.severity);
  out.Key("state"), out.String(to_string(w.state));
  out.Key("fields"), object_text(out, w.fields);
  out.Key("labels"), object_text(out, w.labels);
  out.Key("creator"), str(out, w.creator);
  out.Key("idempotency_key"), str(out, w.idempotency_key);
  out.Key("node_id"), str(out, w.node_id);
  out.Key("created_at"), out.Int64(w.created_at);
  out.Key("updated_at"), out.Int64(w.updated_at);
  out.Key("marks"), write_marks(out, w.marks);
  out.Key("runs");
  out.StartArray();
  for (const auto& r : w.runs)
    str(out, r);
  out.EndArray();
  out.Key("active_run"), str(out, w.active_run);
  out.Key("queued"), out.Int64(w.queued);
  out.Key("triggers"), out.Int64(w.triggers);
  out.Key("sla_breached"), out.Int64(w.sla_breached);
  out.Key("holds_since"), out.Int64(w.holds_since);
  out.Key("world_at"), out.Int64(w.world_at);
  out.Key("next_check"), out.Int64(w.next_check);
  out.Key("seq"), out.Int64(w.seq);
  out.Key("alerts"), object_text(out, w.alerts);
  out.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

expected<work> work_from_document(std::string_view doc_text) {
  auto doc = json::parse_object(doc_text);
  if (!doc)
    return bad_document(doc.error().message);
  const auto& d = *doc;
  if (!d.HasMember("id"))
    return bad_document("member 'id' is missing");
  work w;
  fields f{d, ""};
  f.text("id", w.id);
  f.text("template", w.template_name);
  f.text("template_version", w.template_version);
  f.text("kind", w.kind);
  f.text("title", w.title);
  f.text("severity", w.severity);
  f.enumeration("state", w.state, parse_work_state, std::optional<work_state>{});
  f.text("creator", w.creator);
  f.text("idempotency_key", w.idempotency_key);
  f.text("node_id", w.node_id);
  f.integer("created_at", w.created_at);
  f.integer("updated_at", w.updated_at);
  f.text("active_run", w.active_run);
  f.integer("queued", w.queued);
  f.integer("triggers", w.triggers);
  f.integer("sla_breached", w.sla_breached);
  f.integer("holds_since", w.holds_since);
  f.integer("world_at", w.world_at);
  f.integer("next_check", w.next_check);
  f.integer("seq", w.seq);
  if (f.err())
    return bad_document(f.err().message);
  for (auto err :
       {read_object_text(d, "fields", w.fields), read_object_text(d, "labels", w.labels),
        read_object_text(d, "alerts", w.alerts), read_marks(d, w.marks), read_runs(d, w.runs)})
    if (err)
      return err;
  return w;
}

} // namespace sreh::works
