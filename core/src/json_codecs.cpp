// The wire shape of runs, steps and events (REST API, SSE, store checkpoints) and its decoders.
#include <fmt/format.h>

#include "sreh/core/json.hpp"

namespace sreh::json {

namespace {

using rapidjson::SizeType;

void str(writer& w, std::string_view s) {
  w.String(s.data(), static_cast<SizeType>(s.size()));
}

void str_or_null(writer& w, std::string_view s) {
  if (s.empty())
    w.Null();
  else
    str(w, s);
}

template <class T>
std::string serialize(const T& x) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  write(w, x);
  return {buf.GetString(), buf.GetSize()};
}

/// Reads the members of one decoded object. Missing members keep their defaults (older
/// records); a member of the wrong type records the first error and the rest are skipped.
class fields {
 public:
  fields(const rapidjson::Value& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  [[nodiscard]] const error& err() const { return err_; }

  void text(const char* name, std::string& out, bool nullable = false) {
    if (auto* v = find(name, nullable ? &out : nullptr)) {
      if (v->IsString())
        out.assign(v->GetString(), v->GetStringLength());
      else
        fail(name, "a string", *v);
    }
  }

  void integer(const char* name, std::int64_t& out) {
    if (auto* v = find(name, nullptr)) {
      if (v->IsInt64())
        out = v->GetInt64();
      else
        fail(name, "an integer", *v);
    }
  }

  void boolean(const char* name, bool& out) {
    if (auto* v = find(name, nullptr)) {
      if (v->IsBool())
        out = v->GetBool();
      else
        fail(name, "a boolean", *v);
    }
  }

  /// A JSON value stored as text; null reads as "" when `nullable`.
  void raw_text(const char* name, std::string& out, bool nullable = false) {
    if (auto* v = find(name, nullable ? &out : nullptr))
      out = stringify(*v);
  }

  /// An RFC 3339 timestamp; null reads as 0.
  void time(const char* name, timestamp_us& out) {
    std::string s;
    if (auto* v = find(name, &s)) {
      auto t = v->IsString() ? parse_rfc3339({v->GetString(), v->GetStringLength()})
                             : std::nullopt;
      if (t)
        out = *t;
      else
        fail(name, "an RFC 3339 timestamp", *v);
    } else if (err_.code == errc::ok && obj_.HasMember(name)) {
      out = 0;
    }
  }

  template <class Enum, class Parse>
  void enumeration(const char* name, Enum& out, Parse parse_fn, std::optional<Enum> null_value) {
    auto it = obj_.FindMember(name);
    if (err_ || it == obj_.MemberEnd())
      return;
    if (it->value.IsNull() && null_value) {
      out = *null_value;
      return;
    }
    auto parsed = it->value.IsString() ? parse_fn({it->value.GetString(),
                                                   it->value.GetStringLength()})
                                       : std::nullopt;
    if (parsed)
      out = *parsed;
    else
      fail(name, "a known name", it->value);
  }

  /// A nested object; nullptr (and an error) when present but not an object.
  const rapidjson::Value* object(const char* name) {
    auto* v = find(name, nullptr);
    if (v && !v->IsObject()) {
      fail(name, "an object", *v);
      return nullptr;
    }
    return v;
  }

 private:
  /// The member, or nullptr when missing, null (then `null_out` is cleared) or after an error.
  const rapidjson::Value* find(const char* name, std::string* null_out) {
    if (err_)
      return nullptr;
    auto it = obj_.FindMember(name);
    if (it == obj_.MemberEnd())
      return nullptr;
    if (it->value.IsNull() && null_out) {
      null_out->clear();
      return nullptr;
    }
    return &it->value;
  }

  void fail(const char* name, const char* what, const rapidjson::Value& got) {
    err_ = error{errc::invalid_argument, fmt::format("field '{}{}': expected {}, got {}",
                                                     prefix_, name, what, type_of(got))};
  }

  const rapidjson::Value& obj_;
  std::string prefix_;
  error err_;
};

} // namespace

void write(writer& w, const run& r) {
  w.StartObject();
  w.Key("id"), str(w, r.id);
  w.Key("goal"), str(w, r.goal);
  w.Key("state"), w.String(to_string(r.state));
  w.Key("waiting_for");
  if (r.waiting_for == wait_reason::none)
    w.Null();
  else
    w.String(to_string(r.waiting_for));
  w.Key("submitter"), str(w, r.submitter);
  w.Key("idempotency_key"), str_or_null(w, r.idempotency_key);
  w.Key("node_id"), str(w, r.node_id);
  w.Key("created_at"), timestamp(w, r.created_at);
  w.Key("updated_at"), timestamp(w, r.updated_at);
  w.Key("steps"), w.Int64(r.steps);
  w.Key("tokens"), w.Int64(r.tokens);
  w.Key("budget");
  w.StartObject();
  w.Key("max_steps"), w.Int64(r.budget.max_steps);
  w.Key("max_tokens"), w.Int64(r.budget.max_tokens);
  w.Key("deadline"), timestamp(w, r.budget.deadline_us);
  w.Key("max_result_bytes"), w.Int64(r.budget.max_result_bytes);
  w.EndObject();
  w.Key("checkpoint"), raw(w, r.checkpoint);
  w.Key("conclusion"), str_or_null(w, r.conclusion);
  w.Key("error"), str_or_null(w, r.error);
  w.Key("labels"), raw(w, r.labels);
  w.EndObject();
}

void write(writer& w, const step& s) {
  w.StartObject();
  w.Key("run_id"), str(w, s.run_id);
  w.Key("n"), w.Int64(s.n);
  w.Key("kind"), w.String(to_string(s.kind));
  w.Key("state"), w.String(to_string(s.state));
  w.Key("tool"), str_or_null(w, s.tool);
  w.Key("args"), raw(w, s.args);
  w.Key("idempotency_key"), str(w, s.idempotency_key);
  w.Key("decision"), raw(w, s.decision);
  w.Key("result"), raw(w, s.result);
  w.Key("error"), str_or_null(w, s.error);
  w.Key("result_truncated"), w.Bool(s.result_truncated);
  w.Key("started_at"), timestamp(w, s.started_at);
  w.Key("finished_at"), timestamp(w, s.finished_at);
  w.Key("attempts"), w.Int64(s.attempts);
  w.EndObject();
}

void write(writer& w, const event& e) {
  w.StartObject();
  w.Key("seq"), w.Int64(e.seq);
  w.Key("id"), str(w, e.id);
  w.Key("run_id"), str(w, e.run_id);
  w.Key("run_seq"), w.Int64(e.run_seq);
  w.Key("kind"), str(w, e.kind);
  w.Key("at"), timestamp(w, e.at);
  w.Key("data"), raw(w, e.data);
  w.EndObject();
}

std::string to_json(const run& r) {
  return serialize(r);
}

std::string to_json(const step& s) {
  return serialize(s);
}

std::string to_json(const event& e) {
  return serialize(e);
}

expected<run> run_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  run r;
  fields f{*doc, ""};
  f.text("id", r.id);
  f.text("goal", r.goal);
  f.enumeration("state", r.state, parse_run_state, std::optional<run_state>{});
  f.enumeration("waiting_for", r.waiting_for, parse_wait_reason,
                std::optional{wait_reason::none});
  f.text("submitter", r.submitter);
  f.text("idempotency_key", r.idempotency_key, true);
  f.text("node_id", r.node_id);
  f.time("created_at", r.created_at);
  f.time("updated_at", r.updated_at);
  f.integer("steps", r.steps);
  f.integer("tokens", r.tokens);
  if (auto* b = f.object("budget")) {
    fields fb{*b, "budget."};
    fb.integer("max_steps", r.budget.max_steps);
    fb.integer("max_tokens", r.budget.max_tokens);
    fb.time("deadline", r.budget.deadline_us);
    fb.integer("max_result_bytes", r.budget.max_result_bytes);
    if (fb.err())
      return fb.err();
  }
  f.raw_text("checkpoint", r.checkpoint);
  f.text("conclusion", r.conclusion, true);
  f.text("error", r.error, true);
  f.raw_text("labels", r.labels);
  if (f.err())
    return f.err();
  return r;
}

expected<step> step_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  step s;
  fields f{*doc, ""};
  f.text("run_id", s.run_id);
  f.integer("n", s.n);
  f.enumeration("kind", s.kind, parse_step_kind, std::optional<step_kind>{});
  f.enumeration("state", s.state, parse_step_state, std::optional<step_state>{});
  f.text("tool", s.tool, true);
  f.raw_text("args", s.args);
  f.text("idempotency_key", s.idempotency_key);
  f.raw_text("decision", s.decision);
  f.raw_text("result", s.result, true);
  f.text("error", s.error, true);
  f.boolean("result_truncated", s.result_truncated);
  f.time("started_at", s.started_at);
  f.time("finished_at", s.finished_at);
  f.integer("attempts", s.attempts);
  if (f.err())
    return f.err();
  return s;
}

expected<event> event_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  event e;
  fields f{*doc, ""};
  f.integer("seq", e.seq);
  f.text("id", e.id);
  f.text("run_id", e.run_id);
  f.integer("run_seq", e.run_seq);
  f.text("kind", e.kind);
  f.time("at", e.at);
  f.raw_text("data", e.data);
  if (f.err())
    return f.err();
  return e;
}

} // namespace sreh::json
