// `sreh works`, `sreh work create|show|ack|resolve|reopen|cancel|comment|trigger`: the Works
// of a node, making them from a template, and acting on them.
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"
#include "core/base/http_url.hpp"

namespace sreh::app::cli {

namespace {

bool valid_work_id(const std::string& s) {
  return s.rfind("wrk_", 0) == 0 && s.find_first_of("/?#% ") == std::string::npos;
}

std::string count_runs(const rapidjson::Value& w) {
  const auto& runs = member(w, "runs");
  return std::to_string(runs.IsArray() ? runs.GetArray().Size() : 0);
}

void print_work(const style& st, const rapidjson::Value& w) {
  std::printf("%s  %s  %s\n", st.bold(str(w, "id")).c_str(),
              state_colored(st, str(w, "state")).c_str(), str(w, "title").c_str());
  std::printf("  %s %s (version %s), %s%s, by %s, %s ago\n", st.dim("template").c_str(),
              str(w, "template").c_str(), str(w, "template_version").substr(0, 12).c_str(),
              str(w, "kind").c_str(),
              str(w, "severity").empty() ? "" : (" " + str(w, "severity")).c_str(),
              str(w, "creator").c_str(), age(str(w, "created_at")).c_str());
  std::printf("  %s %s\n", st.dim("fields").c_str(), str(w, "fields").c_str());
  if (const auto& d = member(w, "done"); d.IsObject())
    std::printf("  %s %s for %llds%s\n", st.dim("done when").c_str(), str(d, "condition").c_str(),
                static_cast<long long>(num(d, "for_s")),
                str(w, "criteria_hold_since").empty()
                  ? ""
                  : (" (holding since " + clock_time(str(w, "criteria_hold_since")) + ")").c_str());
  if (const auto& sla = member(w, "sla"); sla.IsArray())
    for (const auto& c : sla.GetArray()) {
      auto stopped = str(c, "stopped_at");
      const bool breached =
        c.HasMember("breached") && c["breached"].IsBool() && c["breached"].GetBool();
      auto line = str(c, "clock") + " due " + clock_time(str(c, "due_at")) +
                  (stopped.empty() ? " (running)" : " (stopped " + clock_time(stopped) + ")");
      std::printf("  %s %s\n", st.dim("sla").c_str(),
                  breached ? st.red(line + " BREACHED").c_str() : line.c_str());
    }
  if (const auto& runs = member(w, "runs"); runs.IsArray() && !runs.GetArray().Empty()) {
    std::printf("%s\n", st.bold("runs").c_str());
    for (const auto& r : runs.GetArray()) {
      auto said = str(r, "conclusion").empty() ? str(r, "error") : str(r, "conclusion");
      auto outcome = str(r, "outcome");
      std::printf("  %s  %s%s  %s steps  %s\n", str(r, "id").c_str(),
                  state_colored(st, str(r, "state")).c_str(),
                  outcome.empty() ? "" : (" · " + outcome).c_str(),
                  std::to_string(num(r, "steps")).c_str(), truncate(said, 80).c_str());
    }
  }
  if (const auto& tl = member(w, "timeline"); tl.IsArray() && !tl.GetArray().Empty()) {
    std::printf("%s\n", st.bold("timeline").c_str());
    for (const auto& e : tl.GetArray()) {
      const auto& d = member(e, "data");
      std::string what;
      auto kind = str(e, "kind");
      if (kind == "work.transition")
        what = str(d, "from") + " → " + str(d, "to") + " (" + str(d, "input") + " by " +
               str(d, "by") + (str(d, "text").empty() ? "" : ": " + str(d, "text")) + ")";
      else if (kind == "work.comment")
        what = str(d, "by") + ": " + str(d, "text");
      else if (kind == "work.triggered")
        what = str(d, "action") + " by " + str(d, "by") + " (" + str(d, "policy") + ")";
      else if (kind == "work.run_started" || kind == "work.run_ended")
        what = str(d, "run_id") + (str(d, "state").empty() ? "" : " " + str(d, "state")) +
               (str(d, "outcome").empty() ? "" : " · " + str(d, "outcome"));
      else
        what = str(e, "data");
      std::printf("  %s  %s  %s\n", clock_time(str(e, "at")).c_str(), pad(kind, 17).c_str(),
                  truncate(what, 100).c_str());
    }
  }
}

/// `--field k=v` as JSON of the template field's type (looked up on the node).
std::optional<std::string> fields_body(const options& o, const std::string& tmpl, int& code) {
  auto t = call(o, "GET", "/v1/templates/" + percent_encode(tmpl), code);
  if (!t)
    return std::nullopt;
  const auto& fields = member(member(*t, "template"), "fields");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("template");
  w.String(tmpl.c_str(), static_cast<rapidjson::SizeType>(tmpl.size()));
  w.Key("fields");
  w.StartObject();
  auto it = o.values.find("field");
  if (it != o.values.end())
    for (const auto& kv : it->second) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        code = usage_error("--field expects key=value, got '" + kv + "'");
        return std::nullopt;
      }
      auto key = kv.substr(0, eq);
      auto value = kv.substr(eq + 1);
      std::string type = "string";
      if (fields.IsArray())
        for (const auto& f : fields.GetArray())
          if (str(f, "name") == key)
            type = str(f, "type");
      w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
      if (type == "integer" || type == "number" || type == "boolean")
        w.RawValue(value.c_str(), value.size(), rapidjson::kNumberType); // the node checks it
      else
        w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
    }
  w.EndObject();
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()};
}

/// A Work's answer: printed readably, unless --json printed it already (doc empty).
int show_reply(const std::optional<rapidjson::Document>& doc, int code) {
  if (doc)
    print_work(make_style(), member(*doc, "work"));
  return code;
}

} // namespace

int works(int argc, char** argv) {
  auto o = parse_options(
    argc, argv, {"state", "kind", "severity", "label", "text", "limit", "cursor"}, {"json"});
  if (!o)
    return exit_usage;
  if (!o->positional.empty())
    return usage_error("works takes no arguments");
  const auto target =
    with_query("/v1/works", *o, {"state", "kind", "severity", "label", "text", "limit", "cursor"});
  int code = exit_ok;
  auto doc = call_readable(*o, "GET", target, code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "works");
  if (!list.IsArray() || list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("no works").c_str());
    return exit_ok;
  }
  std::printf("%s\n",
              st.bold(pad("ID", 30) + "  " + pad("KIND", 11) + "  " + pad("SEV", 4) + "  " +
                      pad("STATE", 12) + "  " + pad("RUNS", 4) + "  " + pad("AGE", 4) + "  TITLE")
                .c_str());
  for (const auto& w : list.GetArray())
    std::printf("%s  %s  %s  %s  %s  %s  %s\n", pad(str(w, "id"), 30).c_str(),
                pad(str(w, "kind"), 11).c_str(), pad(str(w, "severity"), 4).c_str(),
                pad(state_colored(st, str(w, "state")), st.on ? 21 : 12).c_str(),
                pad(count_runs(w), 4).c_str(), pad(age(str(w, "created_at")), 4).c_str(),
                truncate(str(w, "title"), 60).c_str());
  if (auto next = str(*doc, "next_cursor"); !next.empty())
    std::printf("%s\n", st.dim("more: sreh works --cursor " + next).c_str());
  return exit_ok;
}

int work(int argc, char** argv) {
  if (argc < 1)
    return usage_error("work needs a command: create, show, ack, resolve, reopen, cancel, "
                       "comment, trigger");
  const std::string sub = argv[0];
  auto o = parse_options(argc - 1, argv + 1, {"field", "text", "idempotency-key"}, {"json"});
  if (!o)
    return exit_usage;
  int code = exit_ok;
  if (sub == "create") {
    if (o->positional.size() != 1)
      return usage_error("work create takes exactly one TEMPLATE");
    auto body = fields_body(*o, o->positional[0], code);
    if (!body)
      return code;
    std::map<std::string, std::string> headers;
    if (const auto* k = o->value("idempotency-key"))
      headers["Idempotency-Key"] = *k;
    auto doc = call_readable(*o, "POST", "/v1/works", code, *body, headers);
    return show_reply(doc, code);
  }
  if (o->positional.size() != 1)
    return usage_error("work " + sub + " takes exactly one WORK id");
  const auto& id = o->positional[0];
  if (!valid_work_id(id))
    return usage_error("'" + id + "' is not a work id (wrk_...)");
  if (sub == "show") {
    auto doc = call_readable(*o, "GET", "/v1/works/" + id, code);
    return show_reply(doc, code);
  }
  if (sub != "ack" && sub != "resolve" && sub != "reopen" && sub != "cancel" && sub != "comment" &&
      sub != "trigger")
    return usage_error("unknown work command '" + sub + "'");
  std::string body;
  if (const auto* t = o->value("text")) {
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("text");
    w.String(t->c_str(), static_cast<rapidjson::SizeType>(t->size()));
    w.EndObject();
    body.assign(buf.GetString(), buf.GetSize());
  }
  auto doc = call_readable(*o, "POST", "/v1/works/" + id + "/" + sub, code, body);
  return show_reply(doc, code);
}

} // namespace sreh::app::cli
