#include "core/flows/flow_json.hpp"

#include <variant>

namespace sreh::flows {

namespace {

void put(json::writer& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

void put_ms(json::writer& w, const char* key, std::int64_t ms) {
  w.Key(key);
  w.Int64(ms);
}

void write_call(json::writer& w, const tool_call& c) {
  w.StartObject();
  put(w, "tool", c.tool);
  w.Key("args");
  json::raw(w, c.args_json);
  w.EndObject();
}

// One writer per kind of step body; write_body picks it by the body's type.

void write_kind(json::writer& w, const tool_call& c) {
  put(w, "tool", c.tool);
  w.Key("args");
  json::raw(w, c.args_json);
}

void write_kind(json::writer& w, const goal_step& g) {
  put(w, "goal", g.goal);
  w.Key("labels");
  w.StartObject();
  for (const auto& [k, v] : g.labels)
    put(w, k.c_str(), v);
  w.EndObject();
}

void write_kind(json::writer& w, const approval_step& a) {
  w.Key("approval");
  w.StartObject();
  w.Key("approvers");
  w.Int(a.approvers);
  w.Key("roles");
  w.StartArray();
  for (const auto& r : a.roles)
    w.String(r);
  w.EndArray();
  put_ms(w, "timeout_ms", a.timeout_ms);
  put(w, "reason", a.reason);
  w.EndObject();
}

void write_kind(json::writer& w, const condition_step& c) {
  w.Key("cases");
  w.StartArray();
  for (const auto& k : c.cases) {
    w.StartObject();
    put(w, "when", k.when);
    put(w, "then", k.then);
    w.EndObject();
  }
  w.EndArray();
  if (!c.otherwise.empty())
    put(w, "else", c.otherwise);
}

void write_kind(json::writer& w, const parallel_step& p) {
  put(w, "join", to_string(p.join));
  w.Key("branches");
  w.StartArray();
  for (const auto& b : p.branches) {
    w.StartObject();
    put(w, "name", b.name);
    w.Key("steps");
    w.StartArray();
    for (const auto& x : b.steps)
      write(w, x);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_kind(json::writer& w, const wait_step& x) {
  w.Key("wait");
  w.StartObject();
  if (x.until.empty()) {
    put_ms(w, "duration_ms", x.duration_ms);
  } else {
    put(w, "until", x.until);
    put_ms(w, "deadline_ms", x.deadline_ms);
    put_ms(w, "every_ms", x.every_ms);
  }
  w.EndObject();
}

void write_kind(json::writer& w, const flow_call& c) {
  put(w, "flow", c.flow);
  w.Key("inputs");
  json::raw(w, c.inputs_json);
}

void write_body(json::writer& w, const step& s) {
  std::visit([&w](const auto& body) { write_kind(w, body); }, s.body);
}

void write_head(json::writer& w, const flow& f) {
  put(w, "name", f.name);
  put(w, "version", f.version);
  if (!f.label.empty())
    put(w, "label", f.label);
  put(w, "description", f.description);
  w.Key("inputs");
  w.StartArray();
  for (const auto& i : f.inputs)
    write(w, i);
  w.EndArray();
}

} // namespace

void write(json::writer& w, const input_spec& i) {
  w.StartObject();
  put(w, "name", i.name);
  put(w, "type", to_string(i.type));
  w.Key("required");
  w.Bool(i.required());
  if (i.default_json) {
    w.Key("default");
    json::raw(w, *i.default_json);
  }
  if (!i.description.empty())
    put(w, "description", i.description);
  w.EndObject();
}

void write(json::writer& w, const step& s) {
  w.StartObject();
  put(w, "id", s.id);
  put(w, "kind", to_string(s.kind()));
  if (!s.description.empty())
    put(w, "description", s.description);
  write_body(w, s);
  if (s.retries.max > 0) {
    w.Key("retries");
    w.StartObject();
    w.Key("max");
    w.Int(s.retries.max);
    put_ms(w, "initial_ms", s.retries.initial_ms);
    put_ms(w, "max_ms", s.retries.max_ms);
    w.Key("multiplier");
    w.Double(s.retries.multiplier);
    w.EndObject();
  }
  if (s.timeout_ms > 0)
    put_ms(w, "timeout_ms", s.timeout_ms);
  put(w, "on_failure", s.failure.text());
  if (s.compensate) {
    w.Key("compensate");
    write_call(w, *s.compensate);
  }
  if (!s.next.empty())
    put(w, "next", s.next);
  w.EndObject();
}

void write(json::writer& w, const graph& g) {
  w.StartObject();
  w.Key("nodes");
  w.StartArray();
  for (const auto& n : g.nodes) {
    w.StartObject();
    put(w, "id", n.id);
    put(w, "kind", to_string(n.kind));
    put(w, "label", n.label);
    if (!n.parallel.empty()) {
      put(w, "parallel", n.parallel);
      put(w, "branch", n.branch);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("edges");
  w.StartArray();
  for (const auto& e : g.edges) {
    w.StartObject();
    put(w, "from", e.from);
    put(w, "to", e.to);
    put(w, "label", e.label);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void write_summary(json::writer& w, const flow& f) {
  w.StartObject();
  write_head(w, f);
  w.Key("steps");
  w.Uint64(f.all_steps().size());
  w.EndObject();
}

void write_detail(json::writer& w, const flow& f) {
  w.StartObject();
  write_head(w, f);
  w.Key("steps");
  w.StartArray();
  for (const auto& s : f.steps)
    write(w, s);
  w.EndArray();
  w.Key("graph");
  write(w, make_graph(f));
  put(w, "source", f.source);
  w.EndObject();
}

} // namespace sreh::flows
