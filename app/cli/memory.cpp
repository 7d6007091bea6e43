// `sreh memory search|add|show|edit|rollback|rm`: the node's long-term memory (docs/memory.md).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "app/cli/commands.hpp"
#include "core/base/http_url.hpp"
#include "core/base/json_object.hpp"

namespace sreh::app::cli {

namespace {

bool valid_memory_id(const std::string& s) {
  return s.rfind("mem_", 0) == 0 && s.find_first_of("/?#% ") == std::string::npos;
}

void print_entry(const style& st, const rapidjson::Value& m, bool with_text) {
  std::string labels;
  if (const auto& l = member(m, "labels"); l.IsObject())
    for (const auto& kv : l.GetObject())
      labels +=
        (labels.empty() ? "" : ",") + std::string{kv.name.GetString()} + "=" + kv.value.GetString();
  std::string score;
  if (m.HasMember("score"))
    score = "  score " + str(m, "score");
  std::printf("%s  %s  v%lld%s  %s%s\n", st.bold(str(m, "id")).c_str(), str(m, "kind").c_str(),
              static_cast<long long>(num(m, "version")),
              member(m, "deleted").IsTrue() ? st.red(" deleted").c_str() : "",
              labels.empty() ? "" : ("{" + labels + "}").c_str(), score.c_str());
  std::printf("  %s %s by %s, %s ago%s\n", st.dim(str(m, "change")).c_str(),
              clock_time(str(m, "updated_at")).c_str(), str(m, "author").c_str(),
              age(str(m, "updated_at")).c_str(),
              str(m, "run_id").empty() ? "" : ("  (from " + str(m, "run_id") + ")").c_str());
  const auto text = str(m, "text");
  std::printf("  %s\n", with_text ? text.c_str() : truncate(text, 100).c_str());
}

/// The body of add and edit from --kind, --text (or --text -: standard input), --label and
/// --entity; nullopt after a usage error.
std::optional<std::string> entry_body(const options& o, bool need_kind) {
  std::string text;
  const auto* t = o.value("text");
  if (t != nullptr && *t == "-")
    text.assign(std::istreambuf_iterator<char>{std::cin}, {});
  else if (t != nullptr)
    text = *t;
  const auto* kind = o.value("kind");
  if (need_kind && (kind == nullptr || t == nullptr)) {
    (void)usage_error("memory add needs --kind (postmortem, incident, note, runbook) and --text");
    return std::nullopt;
  }
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  if (need_kind)
    json::field(w, "kind", *kind);
  if (t != nullptr)
    json::field(w, "text", text);
  if (!write_labels(w, o))
    return std::nullopt;
  if (auto it = o.values.find("entity"); it != o.values.end())
    json::field(w, "entities", it->second);
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()};
}

int search_memory(const options& o) {
  std::string q;
  for (const auto& word : o.positional)
    q += (q.empty() ? "" : " ") + word;
  std::vector<std::string> preset;
  if (!q.empty())
    preset.push_back("q=" + percent_encode(q));
  auto target = with_query("/v1/memory", o, {"label", "near", "entity", "kind", "limit"}, preset);
  int code = exit_ok;
  auto doc = call_readable(o, "GET", target, code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "memories");
  if (!list.IsArray() || list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("no memories match").c_str());
    return exit_ok;
  }
  for (const auto& m : list.GetArray())
    print_entry(st, m, false);
  return exit_ok;
}

/// Sends the request and prints the entry it answers with (unless --json printed it).
int send_and_show(const options& o, const std::string& method, const std::string& target,
                  const std::string& body = {}) {
  int code = exit_ok;
  auto doc = call_readable(o, method, target, code, body);
  if (doc)
    print_entry(make_style(), member(*doc, "memory"), true);
  return code;
}

} // namespace

int memory(int argc, char** argv) {
  if (argc < 1)
    return usage_error("memory needs a command: search, add, show, edit, rollback, rm");
  const std::string sub = argv[0];
  auto o = parse_options(argc - 1, argv + 1,
                         {"kind", "text", "label", "near", "entity", "limit", "version"},
                         {"json", "versions"});
  if (!o)
    return exit_usage;
  if (sub == "search")
    return search_memory(*o);
  if (sub == "add") {
    if (!o->positional.empty())
      return usage_error("memory add takes no arguments (the text is --text TEXT, or --text -)");
    auto body = entry_body(*o, true);
    if (!body)
      return exit_usage;
    return send_and_show(*o, "POST", "/v1/memory", *body);
  }
  if (sub != "show" && sub != "edit" && sub != "rollback" && sub != "rm")
    return usage_error("unknown memory command '" + sub + "'");
  if (o->positional.size() != 1)
    return usage_error("memory " + sub + " takes exactly one memory id");
  const auto& id = o->positional[0];
  if (!valid_memory_id(id))
    return usage_error("'" + id + "' is not a memory id (mem_...)");
  const auto path = "/v1/memory/" + id;
  if (sub == "show" && o->flag("versions")) {
    int code = exit_ok;
    auto doc = call_readable(*o, "GET", path + "/versions", code);
    if (doc)
      for (const auto& m : member(*doc, "versions").GetArray())
        print_entry(make_style(), m, true);
    return code;
  }
  if (sub == "show")
    return send_and_show(*o, "GET", path);
  if (sub == "rm")
    return send_and_show(*o, "DELETE", path);
  if (sub == "rollback") {
    const auto* v = o->value("version");
    if (v == nullptr || v->empty() || v->find_first_not_of("0123456789") != std::string::npos)
      return usage_error("memory rollback needs --version N (sreh memory show ID --versions)");
    return send_and_show(*o, "POST", path + "/rollback", json::object("version", std::stoll(*v)));
  }
  auto body = entry_body(*o, false);
  if (!body)
    return exit_usage;
  return send_and_show(*o, "PUT", path, *body);
}

} // namespace sreh::app::cli
