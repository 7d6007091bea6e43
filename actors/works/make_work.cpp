// A new Work from its template and the request's fields and labels (the orchestrator's create).

#include "actors/works/make_work.hpp"

#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/expr/expression.hpp"

namespace sreh::actors {

namespace {

/// The fields as a JSON object of their types (text values from resolve_fields).
std::string fields_json(const works::work_template& t,
                        const std::map<std::string, std::string>& values) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    for (const auto& f : t.fields) {
      auto v = values.find(f.name);
      if (v == values.end())
        continue;
      const bool raw = f.type == works::field_type::integer ||
                       f.type == works::field_type::number || f.type == works::field_type::boolean;
      if (raw)
        json::field(w, f.name, json::raw_text{v->second});
      else
        json::field(w, f.name, v->second);
    }
    w.EndObject();
  });
}

/// The labels as a JSON object of strings.
std::string labels_json(const std::map<std::string, std::string>& labels) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    for (const auto& [k, v] : labels)
      json::field(w, k, v);
    w.EndObject();
  });
}

} // namespace

expected<works::work> make_work(const works_env& env, const works::work_template& t,
                                const new_work& req) {
  auto values = works::resolve_fields(t, req.fields);
  if (!values)
    return values.error();
  auto title = works::render(t.title.text, *values);
  if (!title)
    return sreh::error{errc::invalid_argument, "title: " + title.error().message};
  std::map<std::string, std::string> label_map;
  for (const auto& [k, text] : t.labels) {
    auto v = works::render(text.text, *values);
    if (!v)
      return sreh::error{errc::invalid_argument, "run.labels." + k + ": " + v.error().message};
    label_map[k] = std::move(*v);
  }
  if (auto extra = json::parse(req.labels); extra && extra->IsObject())
    for (const auto& m : extra->GetObject())
      if (m.value.IsString())
        label_map[m.name.GetString()] = m.value.GetString();
  auto labels = labels_json(label_map);
  if (t.done) {
    auto text = works::render(t.done->condition.text, *values);
    auto parsed = text ? expr::parse(*text) : expected<expr::expression>{text.error()};
    if (!parsed)
      return sreh::error{errc::invalid_argument,
                         fmt::format("fields: the done-criteria '{}' do not parse with these "
                                     "fields: {}",
                                     text ? *text : t.done->condition.text,
                                     parsed.error().message)};
  }
  const auto now = env.rt->clock.now_us();
  works::work w;
  w.id = env.rt->ids.next("wrk");
  w.template_name = t.name;
  w.template_version = t.version;
  w.kind = t.kind;
  w.title = std::move(*title);
  if (auto s = values->find("severity"); s != values->end())
    w.severity = s->second;
  w.fields = fields_json(t, *values);
  w.labels = std::move(labels);
  w.creator = req.creator;
  w.idempotency_key = req.idempotency_key;
  w.node_id = env.rt->cfg.node_id;
  w.created_at = w.updated_at = w.marks.created_at = now;
  return w;
}

} // namespace sreh::actors
