#include "config/templates/template_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "config/yaml/reader.hpp"
#include "core/base/duration.hpp"
#include "core/expr/expression.hpp"

namespace sreh::config {

namespace {

using yaml::entry;
using yaml::reader;
using namespace sreh::works;

/// Checks that every placeholder of `e`'s text names a field of `t`.
text_template template_text(reader& r, const entry& e, const work_template& t) {
  auto text = r.non_empty_string(e);
  auto names = placeholders(text);
  if (!names)
    r.fail(e, names.error().message);
  for (const auto& n : *names)
    if (!t.field(n)) {
      std::vector<std::string_view> fields;
      for (const auto& f : t.fields)
        fields.push_back(f.name);
      r.fail(e, yaml::unknown("field", n, fields));
    }
  return {text};
}

/// A default (or a choice) checked against the field's type.
std::string typed_value(reader& r, const entry& e, const field_spec& f) {
  switch (f.type) {
  case field_type::integer:
    return std::to_string(r.integer(e, std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max()));
  case field_type::number:
    return fmt::format("{}", r.number(e));
  case field_type::boolean:
    return r.boolean(e) ? "true" : "false";
  case field_type::choice: {
    auto s = r.string(e);
    if (std::find(f.choices.begin(), f.choices.end(), s) == f.choices.end())
      r.fail(e, fmt::format("expected one of {}, got '{}'", fmt::join(f.choices, ", "), s));
    return s;
  }
  case field_type::string:
    break;
  }
  return r.string(e);
}

field_spec read_field(reader& r, const entry& e) {
  field_spec f;
  f.name = e.key;
  if (f.name.find_first_of(" {}.") != std::string::npos)
    r.fail(e, fmt::format("field name '{}' must not contain spaces, braces or dots", f.name));
  std::optional<entry> dflt;
  for (const auto& x : r.entries(e, {"type", "required", "default", "values", "description"})) {
    if (x.key == "type") {
      auto t = r.one_of(x, {"string", "integer", "number", "boolean", "choice"});
      f.type = *parse_field_type(t);
    } else if (x.key == "required") {
      f.required = r.boolean(x);
    } else if (x.key == "default") {
      dflt = x;
    } else if (x.key == "values") {
      for (const auto& v : r.non_empty_items(x)) {
        auto s = r.non_empty_string(v);
        if (std::find(f.choices.begin(), f.choices.end(), s) != f.choices.end())
          r.fail(v, fmt::format("'{}' is listed twice", s));
        f.choices.push_back(s);
      }
    } else {
      f.description = r.string(x);
    }
  }
  if (f.type == field_type::choice && f.choices.empty())
    r.fail(e, "a field of type choice needs 'values'");
  if (f.type != field_type::choice && !f.choices.empty())
    r.fail(e, "'values' is only for fields of type choice");
  if (dflt) {
    if (f.required)
      r.fail(*dflt, "a required field takes no default");
    f.default_value = typed_value(r, *dflt, f);
  }
  return f;
}

void read_sla(reader& r, const entry& e, sla_policy& sla) {
  for (const auto& x : r.entries(e, {"acknowledge", "mitigate", "resolve"})) {
    auto ms = 1000 * r.duration_s(x);
    (x.key == "acknowledge" ? sla.acknowledge_ms
     : x.key == "mitigate"  ? sla.mitigate_ms
                            : sla.resolve_ms) = ms;
  }
  if (sla.mitigate_ms && sla.resolve_ms && sla.mitigate_ms > sla.resolve_ms)
    r.fail(e, "mitigate is due after resolve");
  if (sla.acknowledge_ms && sla.mitigate_ms && sla.acknowledge_ms > sla.mitigate_ms)
    r.fail(e, "acknowledge is due after mitigate");
}

void read_run(reader& r, const entry& e, work_template& t) {
  std::optional<entry> flow;
  std::optional<entry> inputs;
  for (const auto& x : r.entries(e, {"goal", "flow", "inputs", "labels"})) {
    if (x.key == "goal") {
      t.goal = template_text(r, x, t);
    } else if (x.key == "flow") {
      flow = x;
      t.flow = r.non_empty_string(x);
      t.flow_where = r.where(x.mark);
    } else if (x.key == "inputs") {
      inputs = x;
      for (const auto& l : r.pairs(x))
        t.flow_inputs[l.key] = template_text(r, l, t);
    } else {
      for (const auto& l : r.pairs(x))
        t.labels[l.key] = template_text(r, l, t);
    }
  }
  if (flow && !t.goal.empty())
    r.fail(*flow, "a run has a goal or a flow, not both (a flow hands over to the reasoner "
                  "with a goal step)");
  if (inputs && !flow)
    r.fail(*inputs, "inputs are for a flow (run.flow)");
  if (t.goal.empty() && !flow)
    r.fail(e, "missing key 'goal' (or 'flow')");
}

void read_done(reader& r, const entry& e, work_template& t) {
  auto text = template_text(r, e, t);
  auto d = parse_done_criteria(text.text);
  if (!d)
    r.fail(e, d.error().message);
  // Placeholders stand for entity names: with a stand-in the condition must parse.
  std::map<std::string, std::string> stand_in;
  for (const auto& f : t.fields)
    stand_in.emplace(f.name, std::string(1, 'x'));
  auto probe = render(d->condition.text, stand_in);
  auto parsed = expr::parse(*probe);
  if (!parsed)
    r.fail(e, fmt::format("in '{}': {}", d->condition.text, parsed.error().message));
  t.done = std::move(*d);
}

void read_top(reader& r, const entry& root, work_template& t, const template_options& o) {
  auto entries = r.entries(root, {"template", "version", "kind", "description", "title", "fields",
                                  "sla", "run", "policy", "done", "double_texting"});
  auto find = [&](std::string_view key) -> const entry* {
    for (const auto& e : entries)
      if (e.key == key)
        return &e;
    return nullptr;
  };
  for (auto key : {"template", "kind", "run"})
    if (!find(key))
      r.fail(root, fmt::format("missing key '{}'", key));
  // Fields first: every text below may name them.
  if (const auto* f = find("fields"))
    for (const auto& x : r.pairs(*f))
      t.fields.push_back(read_field(r, x));
  for (const auto& e : entries) {
    if (e.key == "template") {
      t.name = r.non_empty_string(e);
      if (t.name.size() > 64 || t.name.find_first_of(" /{}") != std::string::npos)
        r.fail(e, "a template name is 1-64 characters without spaces, slashes or braces");
    } else if (e.key == "version") {
      t.label = r.non_empty_string(e);
    } else if (e.key == "kind") {
      const auto& kinds = o.kinds != nullptr ? *o.kinds : works::builtin_kind_registry();
      t.kind = r.non_empty_string(e);
      if (kinds.find(t.kind) == nullptr) {
        auto names = kinds.names();
        r.fail(e, yaml::unknown("kind", t.kind,
                                std::vector<std::string_view>(names.begin(), names.end())));
      }
      if (auto lacks = kinds.unmet(t))
        r.fail(e, *lacks);
    } else if (e.key == "description") {
      t.description = r.string(e);
    } else if (e.key == "title") {
      t.title = template_text(r, e, t);
    } else if (e.key == "sla") {
      read_sla(r, e, t.sla);
    } else if (e.key == "run") {
      read_run(r, e, t);
    } else if (e.key == "policy") {
      t.policy_scope = r.non_empty_string(e);
    } else if (e.key == "done") {
      read_done(r, e, t);
    } else if (e.key == "double_texting") {
      t.on_trigger = *parse_double_texting(r.one_of(e, {"enqueue", "join", "interrupt", "reject"}));
    }
  }
  if (t.title.empty())
    t.title.text = t.name;
}

} // namespace

expected<work_template> load_template_string(const std::string& text, const std::string& name,
                                             const template_options& o) {
  work_template t;
  t.source = name;
  t.text = text;
  t.version = yaml::content_version(text);
  reader r{name};
  try {
    auto root = r.parse(text);
    if (!root.value.is_mapping())
      r.fail(root, "expected a mapping with template, kind, fields, run, ...");
    read_top(r, root, t, o);
  } catch (const yaml::load_error& e) {
    return sreh::error{errc::invalid_argument, e.message};
  }
  return t;
}

expected<work_template> load_template_file(const std::string& path, const template_options& o) {
  auto text = yaml::read_text_file(path);
  if (!text)
    return text.error();
  return load_template_string(*text, path, o);
}

expected<std::vector<work_template>> load_template_dir(const std::string& dir,
                                                       const template_options& o) {
  auto files = yaml::yaml_files_in(dir, "Work templates");
  if (!files)
    return files.error();
  std::vector<work_template> out;
  for (const auto& f : *files) {
    auto t = load_template_file(f, o);
    if (!t)
      return t.error();
    for (const auto& other : out)
      if (other.name == t->name)
        return sreh::error{
          errc::invalid_argument,
          fmt::format("{}: template '{}' is also defined in {}", f, t->name, other.source)};
    out.push_back(std::move(*t));
  }
  return out;
}

bool looks_like_template(const std::string& text) {
  return yaml::has_top_level_key(text, "template");
}

} // namespace sreh::config
