// `sreh approvals|approve|deny`: the approvals waiting for people, and deciding them.
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"
#include "core/base/http_url.hpp"

namespace sreh::app::cli {

namespace {

bool valid_approval_id(const std::string& s) {
  return s.rfind("apr_", 0) == 0 && s.find_first_of("/?#% ") == std::string::npos;
}

/// What the action is aimed at: the args' target-like field when there is one, else the args.
std::string target_of(const rapidjson::Value& a) {
  const auto& args = member(a, "args");
  for (const char* key : {"target", "service", "deployment", "host", "node", "name"}) {
    auto v = str(args, key);
    if (!v.empty())
      return v;
  }
  auto text = str(a, "args");
  return text == "{}" ? "" : text;
}

/// "approving votes/required".
std::string votes_of(const rapidjson::Value& a) {
  std::int64_t yes = 0;
  const auto& votes = member(a, "votes");
  if (votes.IsArray())
    for (const auto& v : votes.GetArray())
      if (v.IsObject() && v.HasMember("approve") && v["approve"].IsBool() && v["approve"].GetBool())
        ++yes;
  return std::to_string(yes) + "/" + std::to_string(num(a, "required"));
}

void print_table(const style& st, const rapidjson::Value& list) {
  std::printf("%s\n", st.bold(pad("ID", 30) + "  " + pad("RUN", 30) + "  " + pad("STEP", 4) + "  " +
                              pad("TOOL", 18) + "  " + pad("TARGET/ARGS", 30) + "  " +
                              pad("RULE", 18) + "  " + pad("VOTES", 5) + "  AGE")
                        .c_str());
  if (!list.IsArray())
    return;
  for (const auto& a : list.GetArray()) {
    auto state = str(a, "state");
    auto id = pad(str(a, "id"), 30);
    if (state != "pending")
      id += " " + state_colored(st, state);
    auto rule = str(a, "rule");
    if (rule.empty() && str(a, "kind") == "in_doubt")
      rule = "(in doubt)";
    std::printf("%s  %s  %4lld  %s  %s  %s  %s  %s\n", id.c_str(),
                pad(str(a, "run_id"), 30).c_str(), static_cast<long long>(num(a, "step")),
                pad(truncate(str(a, "tool"), 18), 18).c_str(),
                pad(truncate(target_of(a), 30), 30).c_str(), pad(truncate(rule, 18), 18).c_str(),
                pad(votes_of(a), 5).c_str(), age(str(a, "created_at")).c_str());
  }
}

} // namespace

int approvals(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"state", "run", "role", "limit", "cursor"}, {"json"});
  if (!o)
    return exit_usage;
  if (!o->positional.empty())
    return usage_error("approvals takes no arguments");
  std::string state = o->value("state") ? *o->value("state") : "pending";
  std::vector<std::string> preset;
  if (state != "all")
    preset.push_back("state=" + percent_encode(state));
  const auto target = with_query("/v1/approvals", *o, {"run", "role", "limit", "cursor"}, preset);
  int code = exit_ok;
  auto doc = call_readable(*o, "GET", target, code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "approvals");
  if (list.IsArray() && list.GetArray().Empty()) {
    std::printf("%s\n",
                st.dim(state == "all" ? "no approvals" : "no " + state + " approvals").c_str());
    return exit_ok;
  }
  print_table(st, list);
  if (auto next = str(*doc, "next_cursor"); !next.empty())
    std::printf("%s\n", st.dim("more: sreh approvals --cursor " + next).c_str());
  return exit_ok;
}

int decide(bool approve, int argc, char** argv) {
  const char* cmd = approve ? "approve" : "deny";
  auto o = parse_options(argc, argv, {"comment"}, {"json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error(std::string(cmd) + " takes exactly one APPROVAL id");
  const auto& id = o->positional[0];
  if (!valid_approval_id(id))
    return usage_error("'" + id + "' is not an approval id (apr_...)");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("decision");
  w.String(approve ? "approve" : "deny");
  if (const auto* c = o->value("comment")) {
    w.Key("comment");
    w.String(c->c_str(), static_cast<rapidjson::SizeType>(c->size()));
  }
  w.EndObject();
  int code = exit_ok;
  auto doc = call_readable(*o, "POST", "/v1/approvals/" + id + "/decision", code,
                           std::string(buf.GetString(), buf.GetSize()));
  if (!doc)
    return code;
  auto st = make_style();
  const auto& a = member(*doc, "approval");
  auto state = str(a, "state");
  std::printf("%s  %s  %s\n", id.c_str(), state_colored(st, state).c_str(),
              st.dim("(votes " + votes_of(a) + ", run " + str(a, "run_id") + ")").c_str());
  return exit_ok;
}

} // namespace sreh::app::cli
