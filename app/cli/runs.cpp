// `sreh submit|runs|show|watch|cancel`: goals and runs.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "app/cli/commands.hpp"
#include "core/base/clock.hpp"

namespace sreh::app::cli {

int submit(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"idempotency-key", "label", "max-steps"}, {"watch", "json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("submit takes exactly one GOAL");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("goal");
  w.String(o->positional[0].c_str(), static_cast<rapidjson::SizeType>(o->positional[0].size()));
  if (!write_labels(w, *o))
    return exit_usage;
  if (const auto* ms = o->value("max-steps")) {
    char* end = nullptr;
    long long n = std::strtoll(ms->c_str(), &end, 10);
    if (ms->empty() || *end != '\0' || n < 1)
      return usage_error("--max-steps expects a positive integer");
    w.Key("budget");
    w.StartObject();
    w.Key("max_steps");
    w.Int64(n);
    w.EndObject();
  }
  w.EndObject();
  return post_run(*o, "/v1/goals", std::string(buf.GetString(), buf.GetSize()));
}

bool write_labels(json::writer& w, const options& o) {
  auto it = o.values.find("label");
  if (it == o.values.end())
    return true;
  w.Key("labels");
  w.StartObject();
  for (const auto& kv : it->second) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      (void)usage_error("--label expects k=v, got '" + kv + "'");
      return false;
    }
    auto k = kv.substr(0, eq);
    auto v = kv.substr(eq + 1);
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
  return true;
}

int post_run(const options& o, const std::string& path, const std::string& body) {
  std::map<std::string, std::string> headers;
  if (const auto* k = o.value("idempotency-key"))
    headers["Idempotency-Key"] = *k;
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(o, "POST", path, code, body, headers, &raw);
  if (!doc)
    return code;
  auto id = str(member(*doc, "run"), "id");
  if (o.flag("json")) {
    std::printf("%s\n", raw.body.c_str());
  } else {
    std::printf("%s\n", id.c_str());
    if (raw.status == 200)
      std::fprintf(stderr, "(the idempotency key names an existing run)\n");
  }
  std::fflush(stdout);
  if (o.flag("watch"))
    return watch_run(o, id);
  return exit_ok;
}

int runs(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"state", "limit", "cursor"}, {"json"});
  if (!o)
    return exit_usage;
  if (!o->positional.empty())
    return usage_error("runs takes no arguments");
  const auto target = with_query("/v1/runs", *o, {"state", "limit", "cursor"});
  int code = exit_ok;
  auto doc = call_readable(*o, "GET", target, code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "runs");
  std::printf("%s\n", st.bold(pad("ID", 31) + "  " + pad("STATE", 10) + "  " + pad("OUTCOME", 13) +
                              "  " + pad("STEPS", 5) + "  " + pad("AGE", 4) + "  GOAL")
                        .c_str());
  if (list.IsArray()) {
    for (const auto& r : list.GetArray()) {
      auto state = str(r, "state");
      auto outcome = str(r, "outcome");
      std::printf(
        "%s  %s  %s  %5lld  %s  %s\n", pad(str(r, "id"), 31).c_str(),
        (state_colored(st, state) + std::string(state.size() < 10 ? 10 - state.size() : 0, ' '))
          .c_str(),
        pad(outcome.empty() ? "-" : outcome, 13).c_str(), static_cast<long long>(num(r, "steps")),
        pad(age(str(r, "created_at")), 4).c_str(), truncate(str(r, "goal"), 60).c_str());
    }
  }
  if (auto next = str(*doc, "next_cursor"); !next.empty())
    std::printf("%s\n", st.dim("more: sreh runs --cursor " + next).c_str());
  return exit_ok;
}

namespace {

void print_step(const style& st, const rapidjson::Value& s) {
  auto n = num(s, "n");
  auto kind = str(s, "kind");
  auto state = str(s, "state");
  std::string line = "  #" + std::to_string(n) + "  " + kind;
  if (!str(s, "tool").empty())
    line += "  " + st.bold(str(s, "tool"));
  if (auto args = str(s, "args"); kind == "tool" && !args.empty() && args != "{}")
    line += " " + truncate(args, 100);
  if (kind == "message") // docs/conversation.md
    line += "  " + str(member(s, "args"), "author") + ": \"" +
            truncate(str(member(s, "args"), "text"), 100) + "\"";
  line += "  " + state_colored(st, state);
  auto started = parse_rfc3339(str(s, "started_at"));
  auto finished = parse_rfc3339(str(s, "finished_at"));
  auto executed = parse_rfc3339(str(s, "executed_at"));
  if (started && finished) {
    auto began = executed && *executed > 0 ? *executed : *started;
    line += st.dim(" (" + durations(began - *started, *finished - began) + ")");
  }
  std::printf("%s\n", line.c_str());
  if (auto thought = str(member(s, "decision"), "thought"); !thought.empty())
    std::printf("      %s %s\n", st.dim("thought:").c_str(), truncate(thought, 160).c_str());
  if (kind == "conclude") {
    std::printf("      %s %s\n", st.dim("conclusion:").c_str(),
                str(member(s, "result"), "conclusion").c_str());
  } else if (auto result = str(s, "result"); !result.empty()) {
    std::printf("      %s %s\n", st.dim("result:").c_str(), truncate(result, 160).c_str());
  }
  if (auto error = str(s, "error"); !error.empty())
    std::printf("      %s %s\n", st.red("error:").c_str(), error.c_str());
}

/// A run's rows for `sreh show`: its state, goal, origin, budget, labels, end and quality.
void print_run(const style& st, const rapidjson::Value& r) {
  std::printf("%s  %s%s\n", st.bold(str(r, "id")).c_str(),
              state_colored(st, str(r, "state")).c_str(),
              str(r, "outcome").empty() ? "" : ("  " + str(r, "outcome")).c_str());
  auto row = [&st](const char* k, const std::string& v) {
    if (!v.empty())
      std::printf("  %s %s\n", st.dim(pad(k, 11)).c_str(), v.c_str());
  };
  row("goal:", str(r, "goal"));
  if (const auto& f = member(r, "flow"); f.IsObject()) {
    auto branch = str(f, "branch");
    row("flow:", str(f, "name") + " (version " + str(f, "version") + ")" +
                   (branch.empty() ? "" : ", branch " + branch + " of " + str(f, "parallel")));
    row("inputs:", str(f, "inputs") == "{}" ? "" : str(f, "inputs"));
  }
  row("parent:", str(r, "parent"));
  if (auto of = str(r, "follow_up_of"); !of.empty()) // docs/conversation.md, "Follow-ups"
    row("follows up:", of);
  row("waiting:", str(r, "waiting_for"));
  row("submitter:", str(r, "submitter"));
  row("node:", str(r, "node_id"));
  row("created:", str(r, "created_at"));
  row("updated:", str(r, "updated_at"));
  row("steps:", std::to_string(num(r, "steps")) + " (max " +
                  std::to_string(num(member(r, "budget"), "max_steps")) + ")");
  const auto& budget = member(r, "budget");
  if (auto tokens = num(r, "tokens"); tokens > 0)
    row("tokens:",
        std::to_string(tokens) + " (max " + std::to_string(num(budget, "max_tokens")) + ")");
  const auto& cost = member(r, "cost");
  const auto& max_cost = member(budget, "max_cost");
  if (cost.IsNumber() || max_cost.IsNumber())
    row("cost:",
        fmt::format("{:.6g}{}", cost.IsNumber() ? cost.GetDouble() : 0.0,
                    max_cost.IsNumber() ? fmt::format(" (max {:.6g})", max_cost.GetDouble())
                                        : std::string{}));
  if (auto from = str(r, "forked_from"); !from.empty()) { // docs/fork.md
    const auto& f = member(r, "fork");
    row("forked from:",
        fmt::format("{} at step {}{} (sreh compare {})", from, num(f, "from_step"),
                    str(f, "policy") == "own" ? ", its own policy" : "", str(r, "id")));
  }
  row("labels:", str(r, "labels") == "{}" ? "" : str(r, "labels"));
  row("key:", str(r, "idempotency_key"));
  row("conclusion:", str(r, "conclusion"));
  row("error:", str(r, "error"));
  if (const auto& q = member(r, "quality"); q.IsObject()) { // docs/quality.md
    row("quality:", std::to_string(num(q, "total")) + "/100");
    if (const auto& parts = member(q, "parts"); parts.IsArray())
      for (const auto& p : parts.GetArray()) {
        std::string why;
        if (const auto& reasons = member(p, "reasons"); reasons.IsArray())
          for (const auto& x : reasons.GetArray())
            why += (why.empty() ? "" : "; ") + json::string_of(&x);
        std::printf("  %s %s %3lld  %s\n", st.dim(pad("", 11)).c_str(),
                    pad(str(p, "name"), 10).c_str(), static_cast<long long>(num(p, "score")),
                    st.dim(truncate(why, 140)).c_str());
      }
  }
}

} // namespace

int postmortem(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("postmortem takes exactly one RUN or WORK id");
  const auto& id = o->positional[0];
  const bool work = id.starts_with("wrk_");
  if (!work && !valid_run_id(id))
    return usage_error("'" + id + "' is not a run id (run_...) or a Work id (wrk_...)");
  int code = exit_ok;
  const bool as_json = o->flag("json");
  auto r = send(*o, "GET", (work ? "/v1/works/" : "/v1/runs/") + id + "/postmortem", code, {},
                {{"Accept", as_json ? "application/json" : "text/markdown"}});
  if (!r)
    return code;
  std::fwrite(r->body.data(), 1, r->body.size(), stdout);
  if (r->body.empty() || r->body.back() != '\n')
    std::fputc('\n', stdout);
  return exit_ok;
}

int show(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("show takes exactly one RUN id");
  const auto& id = o->positional[0];
  if (!valid_run_id(id))
    return usage_error("'" + id + "' is not a run id (run_...)");
  int code = exit_ok;
  net::http_response raw_run, raw_steps;
  auto run = call(*o, "GET", "/v1/runs/" + id, code, {}, {}, &raw_run);
  if (!run)
    return code;
  auto steps = call(*o, "GET", "/v1/runs/" + id + "/steps", code, {}, {}, &raw_steps);
  if (!steps)
    return code;
  auto messages = call(*o, "GET", "/v1/runs/" + id + "/messages", code);
  if (!messages)
    return code;
  if (o->flag("json")) {
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("run");
    run->Accept(w);
    w.Key("steps");
    member(*steps, "steps").Accept(w);
    w.Key("messages");
    member(*messages, "messages").Accept(w);
    w.EndObject();
    std::printf("%.*s\n", static_cast<int>(buf.GetSize()), buf.GetString());
    return exit_ok;
  }
  auto st = make_style();
  print_run(st, *run);
  print_conversation(st, *run, &member(*messages, "messages"));
  const auto& list = member(*steps, "steps");
  if (list.IsArray() && !list.GetArray().Empty()) {
    std::printf("\n%s\n", st.bold("steps").c_str());
    for (const auto& s : list.GetArray())
      print_step(st, s);
  }
  return exit_ok;
}

int watch(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("watch takes exactly one RUN id");
  if (!valid_run_id(o->positional[0]))
    return usage_error("'" + o->positional[0] + "' is not a run id (run_...)");
  return watch_run(*o, o->positional[0]);
}

int cancel(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("cancel takes exactly one RUN id");
  const auto& id = o->positional[0];
  if (!valid_run_id(id))
    return usage_error("'" + id + "' is not a run id (run_...)");
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(*o, "POST", "/v1/runs/" + id + "/cancel", code, {}, {}, &raw);
  if (!doc)
    return code;
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
  } else {
    auto st = make_style();
    std::printf("%s  %s\n", id.c_str(),
                state_colored(st, str(member(*doc, "run"), "state")).c_str());
  }
  return exit_ok;
}

} // namespace sreh::app::cli
