// `sreh say RUN TEXT`: a message to a run, `sreh follow-up RUN GOAL`: a new run from where an
// ended one left off (docs/conversation.md), and the conversation part of `sreh show`.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "app/cli/commands.hpp"
#include "app/cli/http.hpp"
#include "core/base/json.hpp"

namespace sreh::app::cli {

namespace {

/// The usage error for `RUN TEXT` arguments that are not (`what` names the text), or none.
std::optional<int> bad_run_and_text(const options& o, const char* command, const char* what) {
  if (o.positional.size() != 2)
    return usage_error(fmt::format("{} takes a RUN id and {} (quote it)", command, what));
  if (const auto& id = o.positional[0]; !valid_run_id(id))
    return usage_error("'" + id + "' is not a run id (run_...)");
  return std::nullopt;
}

} // namespace

int say(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"idempotency-key"}, {"json"});
  if (!o)
    return exit_usage;
  if (auto bad = bad_run_and_text(*o, "say", "the TEXT of the message"))
    return *bad;
  const auto& id = o->positional[0];
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("text");
  w.String(o->positional[1].c_str(), static_cast<rapidjson::SizeType>(o->positional[1].size()));
  w.EndObject();
  std::map<std::string, std::string> headers;
  if (const auto* k = o->value("idempotency-key"))
    headers["Idempotency-Key"] = *k;
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(*o, "POST", "/v1/runs/" + id + "/messages", code,
                  std::string(buf.GetString(), buf.GetSize()), headers, &raw);
  if (!doc)
    return code;
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
    return exit_ok;
  }
  const auto& m = member(*doc, "message");
  const auto& answer = member(*doc, "reply");
  if (answer.IsObject()) { // a question: answered from the run's journal at once
    std::printf("%s  message %lld to %s\n\n%s\n", str(m, "id").c_str(),
                static_cast<long long>(num(m, "seq")), id.c_str(), str(answer, "text").c_str());
    return exit_ok;
  }
  std::printf("%s  message %lld to %s: taken at the run's next decision\n", str(m, "id").c_str(),
              static_cast<long long>(num(m, "seq")), id.c_str());
  return exit_ok;
}

int follow_up(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"idempotency-key", "label"}, {"watch", "json"});
  if (!o)
    return exit_usage;
  if (auto bad = bad_run_and_text(*o, "follow-up", "the new GOAL"))
    return *bad;
  const auto& id = o->positional[0];
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("goal");
  w.String(o->positional[1].c_str(), static_cast<rapidjson::SizeType>(o->positional[1].size()));
  if (!write_labels(w, *o))
    return exit_usage;
  w.EndObject();
  return post_run(*o, "/v1/runs/" + id + "/follow-up", std::string(buf.GetString(), buf.GetSize()));
}

void print_conversation(const style& st, const rapidjson::Value& run,
                        const rapidjson::Value* messages) {
  if (const auto& cs = member(run, "constraints"); cs.IsArray() && !cs.GetArray().Empty()) {
    std::printf("\n%s\n", st.bold("constraints").c_str());
    for (const auto& c : cs.GetArray())
      std::printf("  %s  no mutating action (%s at step %lld: \"%s\")\n",
                  st.bold(str(c, "entity")).c_str(), str(c, "author").c_str(),
                  static_cast<long long>(num(c, "step")), truncate(str(c, "said"), 120).c_str());
  }
  if (const auto& p = member(run, "paused"); p.IsObject())
    std::printf("\n%s by %s at step %lld (\"%s\"): it decides nothing until \"resume\"\n",
                st.bold("paused").c_str(), str(p, "author").c_str(),
                static_cast<long long>(num(p, "step")), truncate(str(p, "said"), 120).c_str());
  if (messages == nullptr || !messages->IsArray() || messages->GetArray().Empty())
    return;
  std::printf("\n%s\n", st.bold("conversation").c_str());
  for (const auto& m : messages->GetArray()) {
    const auto& taken = member(m, "taken_step");
    std::printf("  %s %s%s: %s\n", st.dim(str(m, "at")).c_str(), str(m, "author").c_str(),
                taken.IsInt64() ? st.dim(fmt::format(" (step {})", taken.GetInt64())).c_str()
                                : st.dim(" (not taken yet)").c_str(),
                truncate(str(m, "text"), 200).c_str());
  }
}

} // namespace sreh::app::cli
