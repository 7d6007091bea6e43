#include "config/flows/flow_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>

#include "config/flows/flow_read.hpp"
#include "core/base/json.hpp"
#include "core/flows/inputs.hpp"

namespace sreh::config {

namespace {

using yaml::entry;
using yaml::reader;
using namespace sreh::flows;

bool valid_input_name(std::string_view n) {
  if (n.empty() || n.size() > 64 ||
      !(std::isalpha(static_cast<unsigned char>(n.front())) || n.front() == '_'))
    return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// A default of the input's type, as JSON.
std::string default_json(reader& r, const entry& e, input_type t) {
  switch (t) {
  case input_type::number:
    return fmt::format("{}", r.number(e));
  case input_type::boolean:
    return r.boolean(e) ? "true" : "false";
  case input_type::duration:
    return std::to_string(r.duration_s(e));
  case input_type::list: {
    if (!e.value.is_sequence())
      r.fail(e, fmt::format("expected a list of strings, got {}", e.value.kind_name()));
    std::string out = "[";
    for (const auto& x : r.items(e))
      out += (out.size() > 1 ? "," : "") + json::quote(r.string(x));
    return out + "]";
  }
  case input_type::string:
    break;
  }
  return json::quote(r.string(e));
}

input_spec read_input(reader& r, const entry& e) {
  input_spec in;
  in.name = e.key;
  if (!valid_input_name(in.name))
    r.fail(e, fmt::format("input name '{}': letters, digits and '_', starting with a letter or '_'",
                          in.name));
  if (!e.value.is_null() && !e.value.is_mapping())
    r.fail(e, "expected a mapping with type, default, description");
  std::optional<entry> dflt;
  for (const auto& x : r.entries(e, {"type", "default", "description"})) {
    if (x.key == "type")
      in.type = *parse_input_type(r.one_of(x, {"string", "number", "bool", "duration", "list"}));
    else if (x.key == "default")
      dflt = x;
    else
      in.description = r.string(x);
  }
  if (dflt)
    in.default_json = default_json(r, *dflt, in.type);
  return in;
}

void read_top(flow_detail::load_state& s, const entry& root) {
  auto& r = s.r;
  auto& f = s.f;
  auto entries = r.entries(root, {"flow", "version", "description", "inputs", "steps"});
  auto find = [&](std::string_view key) -> const entry* {
    for (const auto& e : entries)
      if (e.key == key)
        return &e;
    return nullptr;
  };
  for (auto key : {"flow", "steps"})
    if (!find(key))
      r.fail(root, fmt::format("missing key '{}'", key));
  if (const auto* in = find("inputs")) // first: every step may name them
    for (const auto& x : r.pairs(*in))
      f.inputs.push_back(read_input(r, x));
  for (const auto& e : entries) {
    if (e.key == "flow") {
      f.name = r.non_empty_string(e);
      if (f.name.size() > 64 || f.name.find_first_of(" /{}$") != std::string::npos)
        r.fail(e, "a flow name is 1-64 characters without spaces, slashes, braces or '$'");
    } else if (e.key == "version") {
      f.label = r.non_empty_string(e);
    } else if (e.key == "description") {
      f.description = r.string(e);
    } else if (e.key == "steps") {
      f.steps = flow_detail::read_steps(s, e);
    }
  }
  flow_detail::check_flow(s);
}

std::string at(const flow& f, const source_pos& p, std::string_view what) {
  return fmt::format("{}:{}:{}: {}: {}", f.source, p.line, p.column, p.path, what);
}

/// A `flow` step's callee and inputs against the flows of the folder.
sreh::error check_call(const flow& f, const flow_call& call, const std::vector<flow>& all) {
  const flow* callee = nullptr;
  std::vector<std::string_view> names;
  for (const auto& x : all) {
    names.push_back(x.name);
    if (x.name == call.flow)
      callee = &x;
  }
  if (callee == nullptr)
    return {errc::invalid_argument, at(f, call.flow_pos, yaml::unknown("flow", call.flow, names))};
  auto inputs = json::parse_object(call.inputs_json);
  if (!inputs)
    return {errc::invalid_argument, at(f, call.flow_pos, inputs.error().message)};
  for (const auto& m : inputs->GetObject()) {
    const auto* in = callee->input(m.name.GetString());
    if (in == nullptr) {
      std::vector<std::string_view> names;
      for (const auto& i : callee->inputs)
        names.push_back(i.name);
      return {errc::invalid_argument,
              at(f, call.flow_pos,
                 fmt::format("flow '{}': {}", call.flow,
                             yaml::unknown("input", m.name.GetString(), names)))};
    }
    // A value with placeholders is known only at run time; a literal is checked now.
    const bool later = m.value.IsString() &&
                       std::string_view{m.value.GetString()}.find("${") != std::string_view::npos;
    if (auto v = input_value(*in, m.value); !later && !v)
      return {errc::invalid_argument,
              at(f, call.flow_pos, fmt::format("flow '{}': {}", call.flow, v.error().message))};
  }
  for (const auto& i : callee->inputs)
    if (i.required() && !inputs->HasMember(i.name.c_str()))
      return {errc::invalid_argument,
              at(f, call.flow_pos,
                 fmt::format("flow '{}' needs input '{}' (it has no default)", call.flow, i.name))};
  return {};
}

/// Flows that call each other in a circle, as "a → b → a"; "" when none do.
std::string call_cycle(const std::vector<flow>& all) {
  std::map<std::string, int> state; // 1 on the path, 2 done
  std::vector<std::string> path;
  std::string found;
  std::function<bool(const flow&)> visit = [&](const flow& f) {
    state[f.name] = 1;
    path.push_back(f.name);
    for (const auto* s : f.all_steps())
      if (const auto* c = std::get_if<flow_call>(&s->body))
        for (const auto& g : all)
          if (g.name == c->flow) {
            if (state[g.name] == 1) {
              auto from = std::find(path.begin(), path.end(), g.name);
              found = fmt::format("{} → {}", fmt::join(from, path.end(), " → "), g.name);
              return true;
            }
            if (state[g.name] == 0 && visit(g))
              return true;
          }
    state[f.name] = 2;
    path.pop_back();
    return false;
  };
  for (const auto& f : all)
    if (state[f.name] == 0 && visit(f))
      return found;
  return {};
}

} // namespace

expected<flow> load_flow_string(const std::string& text, const std::string& name,
                                const flow_options& o) {
  flow f;
  f.source = name;
  f.text = text;
  f.version = yaml::content_version(text);
  reader r{name};
  flow_detail::load_state s{r, f, o, {}, {}, {}};
  try {
    auto root = r.parse(text);
    if (!root.value.is_mapping())
      r.fail(root, "expected a mapping with flow, inputs, steps, ...");
    read_top(s, root);
  } catch (const yaml::load_error& e) {
    return sreh::error{errc::invalid_argument, e.message};
  }
  return f;
}

expected<flow> load_flow_file(const std::string& path, const flow_options& o) {
  auto text = yaml::read_text_file(path);
  if (!text)
    return text.error();
  return load_flow_string(*text, path, o);
}

expected<std::vector<flow>> load_flow_dir(const std::string& dir, const flow_options& o) {
  auto files = yaml::yaml_files_in(dir, "flows");
  if (!files)
    return files.error();
  std::vector<flow> out;
  for (const auto& file : *files) {
    auto f = load_flow_file(file, o);
    if (!f)
      return f.error();
    for (const auto& other : out)
      if (other.name == f->name)
        return sreh::error{
          errc::invalid_argument,
          fmt::format("{}: flow '{}' is also defined in {}", file, f->name, other.source)};
    out.push_back(std::move(*f));
  }
  for (const auto& f : out)
    for (const auto* s : f.all_steps())
      if (const auto* c = std::get_if<flow_call>(&s->body))
        if (auto err = check_call(f, *c, out))
          return err;
  if (auto cycle = call_cycle(out); !cycle.empty())
    return sreh::error{errc::invalid_argument,
                       fmt::format("{}: flows call each other in a circle: {}", dir, cycle)};
  return out;
}

sreh::error check_flow_tools(const std::vector<flow>& flows,
                             const std::vector<std::string>& tools) {
  auto known = [&](const std::string& t) {
    return std::find(tools.begin(), tools.end(), t) != tools.end();
  };
  for (const auto& f : flows)
    for (const auto* s : f.all_steps()) {
      std::vector<const tool_call*> calls;
      if (const auto* c = std::get_if<tool_call>(&s->body))
        calls.push_back(c);
      if (s->compensate)
        calls.push_back(&*s->compensate);
      for (const auto* c : calls)
        if (!known(c->tool))
          return {errc::invalid_argument,
                  at(f, c->tool_pos,
                     yaml::unknown("tool", c->tool,
                                   std::vector<std::string_view>(tools.begin(), tools.end())))};
    }
  return {};
}

bool looks_like_flow(const std::string& text) {
  return yaml::has_top_level_key(text, "flow");
}

} // namespace sreh::config
