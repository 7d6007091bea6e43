// The wire shape of approvals (REST API, kernel replies) and its decoder.
#include "core/base/json.hpp"
#include "core/model/json_codecs.hpp"
#include "core/model/json_fields.hpp"

namespace sreh::json {

using namespace detail;

namespace {

void strings(writer& w, const std::vector<std::string>& xs) {
  w.StartArray();
  for (auto& x : xs)
    str(w, x);
  w.EndArray();
}

sreh::error read_strings(const rapidjson::Value& obj, const char* name,
                         std::vector<std::string>& out) {
  auto m = obj.FindMember(name);
  if (m == obj.MemberEnd() || m->value.IsNull())
    return {};
  if (!m->value.IsArray())
    return {errc::invalid_argument, fmt::format("field '{}': expected an array", name)};
  out.clear();
  for (auto& x : m->value.GetArray()) {
    if (!x.IsString())
      return {errc::invalid_argument, fmt::format("field '{}': expected strings", name)};
    out.emplace_back(x.GetString(), x.GetStringLength());
  }
  return {};
}

} // namespace

void write(writer& w, const approval& a) {
  w.StartObject();
  w.Key("id"), str(w, a.id);
  w.Key("run_id"), str(w, a.run_id);
  w.Key("step"), w.Int64(a.step_n);
  w.Key("kind"), w.String(to_string(a.kind));
  w.Key("state"), w.String(to_string(a.state));
  w.Key("tool"), str_or_null(w, a.tool);
  w.Key("args"), raw(w, a.args);
  w.Key("rule"), str_or_null(w, a.rule_id);
  w.Key("reason"), str_or_null(w, a.reason);
  w.Key("required"), w.Int64(a.required);
  w.Key("roles"), strings(w, a.roles);
  w.Key("requester"), str(w, a.requester);
  w.Key("votes");
  w.StartArray();
  for (auto& v : a.votes) {
    w.StartObject();
    w.Key("by"), str(w, v.by);
    w.Key("role"), str(w, v.role);
    w.Key("approve"), w.Bool(v.approve);
    w.Key("comment"), str_or_null(w, v.comment);
    w.Key("at"), timestamp(w, v.at);
    w.EndObject();
  }
  w.EndArray();
  w.Key("created_at"), timestamp(w, a.created_at);
  w.Key("expires_at"), timestamp(w, a.expires_at);
  w.Key("on_timeout"), str(w, a.on_timeout);
  w.Key("escalate_to"), strings(w, a.escalate_to);
  w.Key("escalated"), w.Bool(a.escalated);
  w.Key("decided_at"), timestamp(w, a.decided_at);
  w.EndObject();
}

std::string to_json(const approval& a) {
  return serialize(a);
}

expected<approval> approval_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  approval a;
  fields f{*doc, ""};
  f.text("id", a.id);
  f.text("run_id", a.run_id);
  f.integer("step", a.step_n);
  f.enumeration("kind", a.kind, parse_approval_kind, std::optional<approval_kind>{});
  f.enumeration("state", a.state, parse_approval_state, std::optional<approval_state>{});
  f.text("tool", a.tool, true);
  f.raw_text("args", a.args);
  f.text("rule", a.rule_id, true);
  f.text("reason", a.reason, true);
  f.integer("required", a.required);
  f.text("requester", a.requester);
  f.time("created_at", a.created_at);
  f.time("expires_at", a.expires_at);
  f.text("on_timeout", a.on_timeout);
  f.boolean("escalated", a.escalated);
  f.time("decided_at", a.decided_at);
  if (f.err())
    return f.err();
  if (auto err = read_strings(*doc, "roles", a.roles))
    return err;
  if (auto err = read_strings(*doc, "escalate_to", a.escalate_to))
    return err;
  if (auto m = doc->FindMember("votes"); m != doc->MemberEnd() && m->value.IsArray()) {
    for (auto& v : m->value.GetArray()) {
      if (!v.IsObject())
        return sreh::error{errc::invalid_argument, "field 'votes': expected objects"};
      approval_vote vote;
      fields fv{v, "votes."};
      fv.text("by", vote.by);
      fv.text("role", vote.role);
      fv.boolean("approve", vote.approve);
      fv.text("comment", vote.comment, true);
      fv.time("at", vote.at);
      if (fv.err())
        return fv.err();
      a.votes.push_back(std::move(vote));
    }
  }
  return a;
}

} // namespace sreh::json
