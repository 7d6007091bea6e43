// `sreh flows`, `sreh flow show NAME`, `sreh flow graph NAME [--dot]`: the flows a node loaded,
// one flow's inputs and steps, and its graph as a text tree or Graphviz dot.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "app/cli/commands.hpp"
#include "core/base/http_url.hpp"
#include "core/flows/inputs.hpp"

namespace sreh::app::cli {

namespace {

/// "service* window(=15m)": required ones marked with `*`, defaults after `=`.
std::string inputs_of(const rapidjson::Value& inputs) {
  std::string out;
  if (!inputs.IsArray())
    return out;
  for (const auto& i : inputs.GetArray()) {
    out += (out.empty() ? "" : " ") + str(i, "name") + ":" + str(i, "type");
    if (i.HasMember("required") && i["required"].IsBool() && i["required"].GetBool())
      out += "*";
    else if (i.HasMember("default"))
      out += "=" + str(i, "default");
  }
  return out;
}

/// The graph's edges leaving `id`, as "→ b, then → c, on failure → d" (branch edges left out:
/// the tree shows them).
std::string exits(const rapidjson::Value& edges, const std::string& id) {
  std::string out;
  if (!edges.IsArray())
    return out;
  for (const auto& e : edges.GetArray()) {
    if (str(e, "from") != id)
      continue;
    auto label = str(e, "label");
    if (label.rfind("branch ", 0) == 0)
      continue;
    out += (out.empty() ? "" : ", ") + (label.empty() ? "" : label + " ") + "→ " + str(e, "to");
  }
  return out;
}

/// The terminal columns of `s` (UTF-8: continuation bytes take none).
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

/// The steps of a flow's JSON by id, those of parallel branches too.
void index_steps(const rapidjson::Value& steps,
                 std::map<std::string, const rapidjson::Value*>& out) {
  if (!steps.IsArray())
    return;
  for (const auto& s : steps.GetArray()) {
    out[str(s, "id")] = &s;
    const auto& branches = member(s, "branches");
    if (branches.IsArray())
      for (const auto& b : branches.GetArray())
        index_steps(member(b, "steps"), out);
  }
}

/// `text` in lines of at most `width` columns, broken at spaces (a longer word has a line of
/// its own): the tree shows a step's whole label, never a cut one.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines{""};
  std::size_t at = 0;
  while (at < text.size()) {
    auto space = text.find(' ', at);
    auto word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty())
      continue;
    auto& line = lines.back();
    if (!line.empty() && columns(line) + 1 + columns(word) > width)
      lines.push_back(word);
    else
      line += (line.empty() ? "" : " ") + word;
  }
  return lines;
}

/// What the tree says a step does: the graph's label, but a goal step's whole goal (the
/// graph's label keeps a few words of it).
std::string tree_label(const rapidjson::Value& node,
                       const std::map<std::string, const rapidjson::Value*>& steps) {
  auto it = steps.find(str(node, "id"));
  if (str(node, "kind") == "goal" && it != steps.end())
    return "goal: " + str(*it->second, "goal");
  return str(node, "label");
}

constexpr std::size_t label_width = 56;

/// The nodes of branch `branch` of `parallel` ("" "": the flow's own), as a tree.
void print_tree(const style& st, const rapidjson::Value& g,
                const std::map<std::string, const rapidjson::Value*>& steps,
                const std::string& parallel, const std::string& branch, const std::string& indent) {
  const auto& nodes = member(g, "nodes");
  if (!nodes.IsArray())
    return;
  for (const auto& n : nodes.GetArray()) {
    if (str(n, "parallel") != parallel || str(n, "branch") != branch)
      continue;
    auto id = str(n, "id");
    auto go = exits(member(g, "edges"), id);
    // Columns line up whatever the depth: the id column ends at the same place.
    const auto width = std::max<std::size_t>(8, 20 - std::min<std::size_t>(20, columns(indent)));
    auto lines = wrap(tree_label(n, steps), label_width);
    std::printf("%s%s  %s%s\n", indent.c_str(), st.bold(pad(id, width)).c_str(),
                go.empty() ? lines.front().c_str()
                           : pad(lines.front(), lines.size() > 1 ? label_width : 40).c_str(),
                go.empty() ? "" : st.dim("  " + go).c_str());
    for (std::size_t i = 1; i < lines.size(); ++i)
      std::printf("%s%s  %s\n", indent.c_str(), std::string(width, ' ').c_str(), lines[i].c_str());
    if (str(n, "kind") != "parallel")
      continue;
    std::vector<std::string> names;
    for (const auto& b : nodes.GetArray())
      if (str(b, "parallel") == id) {
        auto name = str(b, "branch");
        if (names.empty() || names.back() != name)
          names.push_back(name);
      }
    for (std::size_t i = 0; i < names.size(); ++i) {
      const bool last = i + 1 == names.size();
      std::printf("%s  %s branch %s\n", indent.c_str(), last ? "└─" : "├─", names[i].c_str());
      print_tree(st, g, steps, id, names[i], indent + (last ? "     " : "  │  "));
    }
  }
}

/// A flow's graph as a text tree, with its steps' whole labels.
void print_tree(const style& st, const rapidjson::Value& f) {
  std::map<std::string, const rapidjson::Value*> steps;
  index_steps(member(f, "steps"), steps);
  print_tree(st, member(f, "graph"), steps, "", "", "  ");
}

std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s)
    out += c == '\n'               ? std::string{"\\n"}
           : c == '"' || c == '\\' ? std::string{'\\', c}
                                   : std::string(1, c);
  return out + "\"";
}

const char* dot_shape(const std::string& kind) {
  return kind == "condition"  ? "diamond"
         : kind == "approval" ? "hexagon"
         : kind == "wait"     ? "ellipse"
         : kind == "parallel" ? "box3d"
         : kind == "flow"     ? "component"
                              : "box";
}

void print_dot(const std::string& name, const rapidjson::Value& g) {
  std::printf("digraph %s {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n",
              dot_quote(name).c_str());
  std::string cluster; // the branch being written, "parallel/branch"
  const auto& nodes = member(g, "nodes");
  if (nodes.IsArray())
    for (const auto& n : nodes.GetArray()) {
      auto where = str(n, "parallel").empty() ? "" : str(n, "parallel") + "/" + str(n, "branch");
      if (where != cluster) {
        if (!cluster.empty())
          std::printf("  }\n");
        if (!where.empty())
          std::printf("  subgraph %s {\n    label=%s;\n", dot_quote("cluster_" + where).c_str(),
                      dot_quote("branch " + str(n, "branch")).c_str());
        cluster = where;
      }
      std::printf("  %s [shape=%s, label=%s];\n", dot_quote(str(n, "id")).c_str(),
                  dot_shape(str(n, "kind")),
                  dot_quote(str(n, "id") + "\n" + str(n, "label")).c_str());
    }
  if (!cluster.empty())
    std::printf("  }\n");
  const auto& edges = member(g, "edges");
  if (edges.IsArray())
    for (const auto& e : edges.GetArray())
      std::printf(
        "  %s -> %s%s;\n", dot_quote(str(e, "from")).c_str(), dot_quote(str(e, "to")).c_str(),
        str(e, "label").empty() ? "" : (" [label=" + dot_quote(str(e, "label")) + "]").c_str());
  std::printf("}\n");
}

void print_flow(const style& st, const rapidjson::Value& f) {
  std::printf("%s  version %s%s\n", st.bold(str(f, "name")).c_str(), str(f, "version").c_str(),
              str(f, "label").empty() ? "" : (" (" + str(f, "label") + ")").c_str());
  if (auto d = str(f, "description"); !d.empty())
    std::printf("  %s\n", st.dim(d).c_str());
  std::printf("%s %s\n", st.dim("inputs").c_str(), inputs_of(member(f, "inputs")).c_str());
  std::printf("%s %s\n", st.dim("source").c_str(), str(f, "source").c_str());
  std::printf("%s\n", st.bold("steps").c_str());
  print_tree(st, f);
}

} // namespace

int flows(int argc, char** argv) {
  int code = exit_ok;
  auto doc = get_listing(argc, argv, "flows", "/v1/flows", code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "flows");
  if (!list.IsArray() || list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("this node has no flows (flows: DIR)").c_str());
    return exit_ok;
  }
  std::printf("%s\n", st.bold(pad("FLOW", 22) + "  " + pad("VERSION", 16) + "  " + pad("STEPS", 5) +
                              "  INPUTS (* required)")
                        .c_str());
  for (const auto& f : list.GetArray()) {
    std::printf("%s  %s  %s  %s\n", pad(str(f, "name"), 22).c_str(),
                pad(str(f, "version"), 16).c_str(), pad(std::to_string(num(f, "steps")), 5).c_str(),
                inputs_of(member(f, "inputs")).c_str());
    if (auto d = str(f, "description"); !d.empty())
      std::printf("  %s\n", st.dim(d).c_str());
  }
  return exit_ok;
}

namespace {

/// `--input k=v` as JSON of the input's type (the flow's definition says which; the node checks
/// it and names what is wrong).
bool write_input(json::writer& w, const rapidjson::Value& inputs, const std::string& kv) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) {
    (void)usage_error("--input expects k=v, got '" + kv + "'");
    return false;
  }
  flows::input_spec spec;
  spec.name = kv.substr(0, eq);
  if (inputs.IsArray())
    for (const auto& i : inputs.GetArray())
      if (str(i, "name") == spec.name)
        spec.type = flows::parse_input_type(str(i, "type")).value_or(flows::input_type::string);
  auto value = flows::input_from_text(spec, kv.substr(eq + 1));
  w.Key(spec.name.c_str(), static_cast<rapidjson::SizeType>(spec.name.size()));
  w.RawValue(value.c_str(), value.size(), rapidjson::kObjectType);
  return true;
}

/// `sreh flow run NAME [--input k=v]... [--label k=v]... [--idempotency-key K] [--watch]`.
int run_flow(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"input", "label", "idempotency-key"}, {"watch", "json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("flow run takes exactly one flow NAME");
  const auto& name = o->positional[0];
  int code = exit_ok;
  auto def = call_readable(*o, "GET", "/v1/flows/" + percent_encode(name), code);
  if (!def)
    return code;
  const auto& inputs = member(member(*def, "flow"), "inputs");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("inputs");
  w.StartObject();
  if (auto it = o->values.find("input"); it != o->values.end())
    for (const auto& kv : it->second)
      if (!write_input(w, inputs, kv))
        return exit_usage;
  w.EndObject();
  if (!write_labels(w, *o))
    return exit_usage;
  w.EndObject();
  return post_run(*o, "/v1/flows/" + percent_encode(name) + "/runs",
                  std::string(buf.GetString(), buf.GetSize()));
}

} // namespace

int flow(int argc, char** argv) {
  if (argc < 1)
    return usage_error("flow needs a command: run, show, graph");
  const std::string sub = argv[0];
  if (sub == "run")
    return run_flow(argc - 1, argv + 1);
  if (sub != "show" && sub != "graph")
    return usage_error("unknown flow command '" + sub + "' (run, show, graph)");
  auto o = parse_options(argc - 1, argv + 1, {}, {"json", "dot"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("flow " + sub + " takes exactly one flow NAME");
  if (sub == "show" && o->flag("dot"))
    return usage_error("--dot is for flow graph");
  int code = exit_ok;
  auto doc = call_readable(*o, "GET", "/v1/flows/" + percent_encode(o->positional[0]), code);
  if (!doc)
    return code;
  const auto& f = member(*doc, "flow");
  auto st = make_style();
  if (sub == "show") {
    print_flow(st, f);
  } else if (o->flag("dot")) {
    print_dot(str(f, "name"), member(f, "graph"));
  } else {
    std::printf("%s\n", st.bold(str(f, "name")).c_str());
    print_tree(st, f);
  }
  return exit_ok;
}

} // namespace sreh::app::cli
