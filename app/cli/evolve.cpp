// `sreh evolve propose FILE | status [ID] | promote ID | rollback`: the evolution gate
// (docs/evolve.md) — a candidate knowledge base evaluated against the current one, promoted only
// when nothing regresses and someone other than its proposer approves.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "app/cli/commands.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/json_object.hpp"

namespace sreh::app::cli {

namespace {

bool valid_candidate_id(const std::string& s) {
  return s.rfind("cnd_", 0) == 0 && s.size() == 30;
}

void print_side(const char* name, const rapidjson::Value& s) {
  const auto& q = member(s, "quality");
  std::printf("%s %s, %lld steps, %lld unsafe, quality %s", name,
              member(s, "passed").IsTrue() ? "PASS" : "FAIL",
              static_cast<long long>(num(s, "steps")), static_cast<long long>(num(s, "unsafe")),
              q.IsInt64() ? std::to_string(q.GetInt64()).c_str() : "-");
}

void print_report(const style& st, const rapidjson::Value& r) {
  const auto& scenarios = member(r, "scenarios");
  if (scenarios.IsArray() && !scenarios.Empty()) {
    std::printf("\n%s\n", st.bold("scenarios (current → candidate)").c_str());
    for (const auto& s : scenarios.GetArray()) {
      auto verdict = str(s, "verdict");
      std::printf("  %-34s %-12s ", str(s, "scenario").c_str(),
                  (verdict == "regressed" ? st.red(verdict) : verdict).c_str());
      print_side("", member(s, "current"));
      print_side("  →", member(s, "candidate"));
      if (auto k = num(s, "first_divergence"); k > 0)
        std::printf("  (parts at step %lld)", static_cast<long long>(k));
      std::printf("\n");
    }
  }
  const auto& runs = member(r, "runs");
  if (runs.IsArray() && !runs.Empty()) {
    std::printf("\n%s\n", st.bold("recent runs replayed under the candidate").c_str());
    for (const auto& x : runs.GetArray()) {
      std::printf("  %s  %-12s", str(x, "run_id").c_str(), str(x, "verdict").c_str());
      if (!str(x, "why").empty())
        std::printf(" %s", str(x, "why").c_str());
      else
        std::printf(" %lld → %lld steps%s", static_cast<long long>(num(x, "recorded_steps")),
                    static_cast<long long>(num(x, "replayed_steps")),
                    num(x, "first_divergence") > 0
                      ? fmt::format(", parts at step {}", num(x, "first_divergence")).c_str()
                      : "");
      std::printf("\n");
    }
  }
  const auto& t = member(r, "totals");
  if (t.IsObject())
    std::printf("\npassed %lld → %lld of %lld; steps %lld → %lld; %lld run(s) replayed\n",
                static_cast<long long>(num(t, "passed_current")),
                static_cast<long long>(num(t, "passed_candidate")),
                static_cast<long long>(num(t, "scenarios")),
                static_cast<long long>(num(t, "steps_current")),
                static_cast<long long>(num(t, "steps_candidate")),
                static_cast<long long>(num(t, "runs_replayed")));
}

void print_candidate(const rapidjson::Value& c) {
  auto st = make_style();
  std::printf("%s  %s  %s\n", st.bold(str(c, "id")).c_str(), str(c, "kind").c_str(),
              st.cyan(str(c, "state")).c_str());
  std::printf("proposed by %s at %s against %s\n", str(c, "proposer").c_str(),
              str(c, "created_at").c_str(), str(c, "base").c_str());
  if (!str(c, "reason").empty())
    std::printf("reason: %s\n", str(c, "reason").c_str());
  if (!str(c, "error").empty())
    std::printf("%s %s\n", st.red("evaluation failed:").c_str(), str(c, "error").c_str());
  print_report(st, member(c, "report"));
  const auto& regressions = member(c, "regressions");
  if (regressions.IsArray() && !regressions.Empty()) {
    std::printf("\n%s\n", st.red("regressions").c_str());
    for (const auto& x : regressions.GetArray())
      std::printf("  - %s\n", x.GetString());
  }
  const auto& p = member(c, "promotion");
  if (p.IsObject()) {
    std::printf(
      "\npromotion: %s, %lld of %lld approval(s)", str(p, "state").c_str(),
      static_cast<long long>(member(p, "votes").IsArray() ? member(p, "votes").Size() : 0),
      static_cast<long long>(num(p, "required")));
    std::printf(" (not %s)\n", str(p, "requester").c_str());
  }
  if (!str(c, "replaced").empty())
    std::printf("replaced %s at %s\n", str(c, "replaced").c_str(), str(c, "promoted_at").c_str());
}

int list_candidates(const options& o) {
  int code = exit_ok;
  auto doc = call_readable(o, "GET", "/v1/candidates", code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& current = member(*doc, "current");
  std::printf("current knowledge base: %s, policy: %s, prompt: %s, model route: %s\n\n",
              st.bold(str(current, "knowledge_base")).c_str(),
              st.bold(str(current, "policy")).c_str(), st.bold(str(current, "prompt")).c_str(),
              st.bold(str(current, "model_route")).c_str());
  std::printf("%s\n", st.bold(fmt::format("{:<30}  {:<14}  {:<17}  {:<12}  {:<20}  {}", "CANDIDATE",
                                          "KIND", "STATE", "PROPOSER", "PROPOSED", "REGRESSIONS"))
                        .c_str());
  const auto& all = member(*doc, "candidates");
  if (all.IsArray())
    for (const auto& c : all.GetArray())
      std::printf("%-30s  %-14s  %-17s  %-12s  %-20s  %u\n", str(c, "id").c_str(),
                  str(c, "kind").c_str(), str(c, "state").c_str(), str(c, "proposer").c_str(),
                  str(c, "created_at").substr(0, 19).c_str(),
                  member(c, "regressions").IsArray() ? member(c, "regressions").Size() : 0U);
  return exit_ok;
}

/// GET the candidate until its evaluation ends (or `timeout_s`), then shows it.
int wait_for(const options& o, const std::string& id, int timeout_s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    int code = exit_ok;
    auto doc = call(o, "GET", "/v1/candidates/" + id, code);
    if (!doc)
      return code;
    const auto& c = member(*doc, "candidate");
    if (str(c, "state") != "evaluating" || std::chrono::steady_clock::now() > until) {
      print_candidate(c);
      return str(c, "state") == "awaiting_approval" || str(c, "state") == "promoted" ? exit_ok
                                                                                     : exit_refused;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // a poll, not a handshake
  }
}

int propose(const options& o) {
  if (o.positional.size() != 1)
    return usage_error("evolve propose takes exactly one FILE (a new knowledge base; with --kind "
                       "policy, prompt or model_route a policy, a system prompt or a model: "
                       "section)");
  auto text = config::yaml::read_text_file(o.positional[0]);
  if (!text)
    return usage_error(text.error().message);
  std::string body = json::build([&](json::writer& w) {
    w.StartObject();
    w.Key("kind");
    w.String(o.value("kind") ? o.value("kind")->c_str() : "knowledge_base");
    w.Key("body");
    w.String(text->c_str(), static_cast<rapidjson::SizeType>(text->size()));
    if (const auto* r = o.value("reason")) {
      w.Key("reason");
      w.String(r->c_str());
    }
    w.EndObject();
  });
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(o, "POST", "/v1/candidates", code, body, {}, &raw);
  if (!doc)
    return code;
  auto id = str(member(*doc, "candidate"), "id");
  if (o.flag("json") && !o.flag("wait")) {
    std::printf("%s\n", raw.body.c_str());
    return exit_ok;
  }
  std::printf("%s\n", id.c_str());
  std::fflush(stdout);
  return o.flag("wait") ? wait_for(o, id, 1800) : exit_ok;
}

} // namespace

int evolve(int argc, char** argv) {
  if (argc < 1)
    return usage_error("evolve needs a command: propose, status, promote, rollback");
  const std::string sub = argv[0];
  auto o = parse_options(argc - 1, argv + 1, {"kind", "reason", "comment"}, {"json", "wait"});
  if (!o)
    return exit_usage;
  if (sub == "propose")
    return propose(*o);
  if (sub == "rollback") {
    if (!o->positional.empty())
      return usage_error("evolve rollback takes no arguments ([--kind K])");
    std::string body =
      json::object("kind", o->value("kind") ? *o->value("kind") : "knowledge_base");
    int code = exit_ok;
    auto doc = call_readable(*o, "POST", "/v1/candidates/rollback", code, body);
    if (!doc)
      return code;
    std::printf("rolled back %s; current: %s\n", str(member(*doc, "candidate"), "id").c_str(),
                str(*doc, "current").c_str());
    return exit_ok;
  }
  if (sub == "status" && o->positional.empty())
    return list_candidates(*o);
  if (sub != "status" && sub != "promote")
    return usage_error("unknown evolve command '" + sub + "'");
  if (o->positional.size() != 1)
    return usage_error("evolve " + sub + " takes exactly one candidate id");
  const auto& id = o->positional[0];
  if (!valid_candidate_id(id))
    return usage_error("'" + id + "' is not a candidate id (cnd_...)");
  std::string body;
  if (sub == "promote" && o->value("comment"))
    body = json::object("comment", *o->value("comment"));
  int code = exit_ok;
  auto doc = sub == "promote"
               ? call_readable(*o, "POST", "/v1/candidates/" + id + "/promote", code, body)
               : call_readable(*o, "GET", "/v1/candidates/" + id, code);
  if (!doc)
    return code;
  print_candidate(member(*doc, "candidate"));
  return exit_ok;
}

} // namespace sreh::app::cli
