// `sreh fork RUN --from N` and `sreh compare RUN`: a new run from a finished run's recorded
// steps, and a run's journal beside another's (docs/fork.md).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "app/cli/commands.hpp"
#include "config/yaml/reader.hpp"

namespace sreh::app::cli {

namespace {

/// Reads `--edit K=JSON`, `--edit K=@FILE` and `--fail K=TEXT` into `"edits": [...]`; false
/// (after a usage error) for a malformed one.
bool write_edits(json::writer& w, const options& o) {
  if (o.values.count("edit") == 0 && o.values.count("fail") == 0)
    return true;
  w.Key("edits");
  w.StartArray();
  for (const bool fail : {false, true}) {
    const char* flag = fail ? "--fail" : "--edit";
    auto given = o.values.find(fail ? "fail" : "edit");
    if (given == o.values.end())
      continue;
    for (const auto& kv : given->second) {
      auto eq = kv.find('=');
      char* end = nullptr;
      long long n = eq == std::string::npos ? 0 : std::strtoll(kv.c_str(), &end, 10);
      if (eq == std::string::npos || n < 1 || end != kv.c_str() + eq) {
        (void)usage_error(fmt::format("{} expects STEP={}, got '{}'", flag,
                                      fail ? "ERROR" : "JSON (or STEP=@FILE)", kv));
        return false;
      }
      std::string value = kv.substr(eq + 1);
      w.StartObject();
      w.Key("step");
      w.Int64(n);
      if (fail) {
        w.Key("error");
        w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
        w.EndObject();
        continue;
      }
      if (value.starts_with("@")) {
        auto text = config::yaml::read_text_file(value.substr(1));
        if (!text) {
          (void)usage_error(fmt::format("--edit {}: {}", n, text.error().message));
          return false;
        }
        value = std::move(*text);
      }
      auto doc = json::parse(value);
      if (!doc) {
        (void)usage_error(
          fmt::format("--edit {}: the result is not JSON: {}", n, doc.error().message));
        return false;
      }
      w.Key("result");
      doc->Accept(w);
      w.EndObject();
    }
  }
  w.EndArray();
  return true;
}

/// Writes `"config": {"policy"?: TEXT, "versions"?: {KIND: ID}}` from `--policy FILE` and each
/// `--version cnd_...` (its kind asked of the node); false after an error (its exit code in
/// `code`).
bool write_config(json::writer& w, const options& o, int& code) {
  const auto* policy = o.value("policy");
  auto given = o.values.find("version");
  if (policy == nullptr && given == o.values.end())
    return true;
  w.Key("config");
  w.StartObject();
  if (policy != nullptr) {
    auto text = config::yaml::read_text_file(*policy);
    if (!text) {
      code = usage_error("--policy: " + text.error().message);
      return false;
    }
    w.Key("policy");
    w.String(text->c_str(), static_cast<rapidjson::SizeType>(text->size()));
  }
  if (given != o.values.end()) {
    w.Key("versions");
    w.StartObject();
    for (const auto& id : given->second) {
      if (!id.starts_with("cnd_")) {
        code = usage_error(fmt::format("--version expects a candidate id (cnd_...), got '{}'", id));
        return false;
      }
      auto doc = call(o, "GET", "/v1/candidates/" + id, code);
      if (!doc)
        return false;
      auto kind = str(member(*doc, "candidate"), "kind");
      w.Key(kind.c_str());
      w.String(id.c_str());
    }
    w.EndObject();
  }
  w.EndObject();
  return true;
}

/// The comparison of a run with another, as a table.
void print_comparison(const rapidjson::Value& c) {
  auto st = make_style();
  auto from = num(c, "from_step");
  std::printf("%s beside %s%s\n\n", str(c, "run").c_str(), str(c, "original").c_str(),
              from > 0 ? fmt::format(" (forked at step {})", from).c_str() : "");
  std::printf("%s\n", st.bold(fmt::format("  {:>3}  {:<62}  {}", "#", "original", "fork")).c_str());
  const auto& steps = member(c, "steps");
  if (steps.IsArray())
    for (const auto& s : steps.GetArray()) {
      auto n = num(s, "n");
      bool same = member(s, "same").IsBool() && member(s, "same").GetBool();
      auto original = str(s, "original");
      std::string right =
        same ? st.dim("same")
             : st.yellow(fmt::format("{}  ({})", str(s, "fork").empty() ? "-" : str(s, "fork"),
                                     str(s, "difference")));
      std::printf("  %3lld  %s  %s\n", static_cast<long long>(n),
                  pad(truncate(original.empty() ? "-" : original, 62), 62).c_str(), right.c_str());
    }
  std::printf("\n  original end: %s\n  fork end:     %s\n",
              str(c, "original_end").empty() ? "-" : truncate(str(c, "original_end"), 100).c_str(),
              str(c, "fork_end").empty() ? "(still running)"
                                         : truncate(str(c, "fork_end"), 100).c_str());
  if (auto k = num(c, "first_divergence"); k > 0)
    std::printf("\n%s\n", st.bold(fmt::format("diverged at step {}", k)).c_str());
  else
    std::printf("\n%s\n", st.bold("the same steps").c_str());
}

int show_comparison(const options& o, const std::string& id, const std::string& with) {
  int code = exit_ok;
  auto doc = call_readable(
    o, "GET", "/v1/runs/" + id + "/compare" + (with.empty() ? "" : "?with=" + with), code);
  if (!doc)
    return code;
  print_comparison(*doc);
  return exit_ok;
}

} // namespace

int fork(int argc, char** argv) {
  auto o =
    parse_options(argc, argv, {"from", "policy", "version", "edit", "fail"}, {"wait", "json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("fork takes exactly one RUN id");
  const auto& id = o->positional[0];
  if (!valid_run_id(id))
    return usage_error("'" + id + "' is not a run id (run_...)");
  const auto* from = o->value("from");
  char* end = nullptr;
  long long n = from ? std::strtoll(from->c_str(), &end, 10) : 0;
  if (!from || from->empty() || *end != '\0')
    return usage_error("fork needs --from N (the first step the fork runs live)");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("from_step");
  w.Int64(n);
  int code = exit_ok;
  if (!write_config(w, *o, code))
    return code;
  if (!write_edits(w, *o))
    return exit_usage;
  w.EndObject();
  net::http_response raw;
  auto doc = call(*o, "POST", "/v1/runs/" + id + "/fork", code,
                  std::string(buf.GetString(), buf.GetSize()), {}, &raw);
  if (!doc)
    return code;
  auto fork_id = str(member(*doc, "run"), "id");
  if (o->flag("json") && !o->flag("wait")) {
    std::printf("%s\n", raw.body.c_str());
    return exit_ok;
  }
  std::printf("%s\n", fork_id.c_str());
  std::fflush(stdout);
  if (!o->flag("wait"))
    return exit_ok;
  int ended = watch_run(*o, fork_id);
  if (ended == exit_unreachable)
    return ended;
  std::printf("\n");
  auto shown = show_comparison(*o, fork_id, {});
  return shown != exit_ok ? shown : ended;
}

int compare(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"with"}, {"json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1)
    return usage_error("compare takes exactly one RUN id");
  const auto& id = o->positional[0];
  if (!valid_run_id(id))
    return usage_error("'" + id + "' is not a run id (run_...)");
  std::string with;
  if (const auto* w = o->value("with")) {
    if (!valid_run_id(*w))
      return usage_error("--with: '" + *w + "' is not a run id (run_...)");
    with = *w;
  }
  return show_comparison(*o, id, with);
}

} // namespace sreh::app::cli
