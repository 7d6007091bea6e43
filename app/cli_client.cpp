// The client subcommands: thin HTTP/SSE clients of a node's REST API with readable output.
#include "cli_client.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sreh/config/node_config.hpp"
#include "sreh/core/json.hpp"
#include "sreh/net/http_client.hpp"

namespace sreh::app {

namespace {

constexpr int exit_ok = 0;
constexpr int exit_refused = 1;
constexpr int exit_usage = 2;
constexpr int exit_unreachable = 3;

constexpr const char* usage_text = R"(usage:
  sreh submit "GOAL" [--idempotency-key K] [--label k=v]... [--max-steps N] [--watch] [--json]
  sreh runs [--state S] [--limit N] [--json]
  sreh show RUN [--json]
  sreh watch RUN
  sreh cancel RUN
common option: --server HOST:PORT (default: $SREH_SERVER, else 127.0.0.1:7070)
)";

// -- terminal styling ---------------------------------------------------------------------------

struct style {
  bool on = false;
  [[nodiscard]] std::string wrap(const char* code, const std::string& s) const {
    return on ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
  }
  [[nodiscard]] std::string dim(const std::string& s) const { return wrap("2", s); }
  [[nodiscard]] std::string bold(const std::string& s) const { return wrap("1", s); }
  [[nodiscard]] std::string green(const std::string& s) const { return wrap("32", s); }
  [[nodiscard]] std::string red(const std::string& s) const { return wrap("31", s); }
  [[nodiscard]] std::string yellow(const std::string& s) const { return wrap("33", s); }
  [[nodiscard]] std::string cyan(const std::string& s) const { return wrap("36", s); }
};

style make_style() {
  return style{::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr};
}

// -- options ------------------------------------------------------------------------------------

struct options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7070;
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // --name VALUE (repeatable)
  std::map<std::string, bool> flags;                       // --name

  [[nodiscard]] const std::string* value(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() || it->second.empty() ? nullptr : &it->second.back();
  }
  [[nodiscard]] bool flag(const std::string& name) const { return flags.count(name) > 0; }
  [[nodiscard]] std::string where() const { return host + ":" + std::to_string(port); }
};

int usage_error(const std::string& what) {
  std::fprintf(stderr, "sreh: %s\n\n%s", what.c_str(), usage_text);
  return exit_usage;
}

/// Parses `argv` given which options take a value and which are flags. Nullopt (after printing
/// the usage) on an error.
std::optional<options> parse_options(int argc, char** argv, const std::vector<std::string>& with_value,
                                     const std::vector<std::string>& flags) {
  options o;
  std::string server = "127.0.0.1:7070";
  if (const char* env = std::getenv("SREH_SERVER"); env && *env) server = env;
  auto takes = [](const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
      if (x == s) return true;
    return false;
  };
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      if (name == "server" || takes(with_value, name)) {
        std::string v;
        if (inline_value) {
          v = *inline_value;
        } else if (i + 1 < argc) {
          v = argv[++i];
        } else {
          usage_error("--" + name + " needs a value");
          return std::nullopt;
        }
        if (name == "server")
          server = v;
        else
          o.values[name].push_back(v);
      } else if (takes(flags, name) && !inline_value) {
        o.flags[name] = true;
      } else {
        usage_error("unknown option --" + name);
        return std::nullopt;
      }
    } else {
      o.positional.push_back(a);
    }
  }
  if (auto err = config::parse_listen(server, "--server", o.host, o.port)) {
    usage_error(err.message);
    return std::nullopt;
  }
  if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']')
    o.host = o.host.substr(1, o.host.size() - 2);
  return o;
}

// -- talking to the server ----------------------------------------------------------------------

int unreachable(const options& o, const sreh::error& e) {
  // The message is "host:port: what: reason"; keep the reason.
  auto msg = e.message;
  if (auto p = msg.rfind(": "); p != std::string::npos) msg = msg.substr(p + 2);
  std::fprintf(stderr, "cannot reach sreh at %s: %s — is `sreh serve` running?\n", o.where().c_str(),
               msg.c_str());
  return exit_unreachable;
}

std::string problem_detail(const net::http_response& r) {
  if (auto doc = json::parse(r.body); doc && doc->IsObject()) {
    auto it = doc->FindMember("detail");
    if (it != doc->MemberEnd() && it->value.IsString()) return it->value.GetString();
  }
  return "HTTP " + std::to_string(r.status) + (r.body.empty() ? "" : ": " + r.body.substr(0, 300));
}

/// Sends a request. On success returns the parsed JSON body; otherwise prints what went wrong
/// and sets `exit_code`.
std::optional<rapidjson::Document> call(const options& o, const std::string& method,
                                        const std::string& target, int& exit_code,
                                        const std::string& body = {},
                                        const std::map<std::string, std::string>& headers = {},
                                        net::http_response* raw = nullptr) {
  auto r = net::http_request(o.host, o.port, method, target, body, headers);
  if (!r) {
    exit_code = (r.error().code == errc::unavailable || r.error().code == errc::deadline)
                  ? unreachable(o, r.error())
                  : (std::fprintf(stderr, "sreh: %s\n", r.error().message.c_str()), exit_refused);
    return std::nullopt;
  }
  if (r->status < 200 || r->status > 299) {
    std::fprintf(stderr, "sreh: %s\n", problem_detail(*r).c_str());
    exit_code = exit_refused;
    return std::nullopt;
  }
  auto doc = json::parse(r->body, 256);
  if (!doc) {
    std::fprintf(stderr, "sreh: the server sent a malformed response: %s\n", doc.error().message.c_str());
    exit_code = exit_refused;
    return std::nullopt;
  }
  if (raw) *raw = std::move(*r);
  return std::move(*doc);
}

// -- JSON and time helpers ----------------------------------------------------------------------

std::string str(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(key);
  if (it == v.MemberEnd()) return {};
  if (it->value.IsString()) return {it->value.GetString(), it->value.GetStringLength()};
  if (it->value.IsNull()) return {};
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  it->value.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

std::int64_t num(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return 0;
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

const rapidjson::Value& member(const rapidjson::Value& v, const char* key) {
  static const rapidjson::Value null_value;
  if (!v.IsObject()) return null_value;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? null_value : it->value;
}

/// Microseconds since the epoch of an RFC 3339 UTC timestamp ("2026-11-30T04:08:39.123456Z").
std::optional<std::int64_t> parse_time(const std::string& s) {
  std::tm tm{};
  int frac_pos = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &frac_pos) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::int64_t us = static_cast<std::int64_t>(timegm(&tm)) * 1'000'000;
  if (static_cast<std::size_t>(frac_pos) < s.size() && s[static_cast<std::size_t>(frac_pos)] == '.') {
    std::int64_t scale = 100'000;
    for (auto i = static_cast<std::size_t>(frac_pos) + 1; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      us += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  return us;
}

/// "04:08:39.123" in local time.
std::string clock_time(const std::string& rfc3339) {
  auto us = parse_time(rfc3339);
  if (!us) return std::string(12, ' ');
  std::time_t t = static_cast<std::time_t>(*us / 1'000'000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>((*us / 1000) % 1000));
  return buf;
}

std::string age(const std::string& rfc3339) {
  auto us = parse_time(rfc3339);
  if (!us) return "-";
  auto now = std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch()).count();
  auto s = std::max<std::int64_t>(0, (now - *us) / 1'000'000);
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string truncate(std::string s, std::size_t n) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() <= n) return s;
  // Cut on a UTF-8 boundary.
  auto cut = n > 1 ? n - 1 : n;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "…";
}

std::string state_colored(const style& st, const std::string& state) {
  if (state == "succeeded") return st.green(state);
  if (state == "failed") return st.red(state);
  if (state == "cancelled") return st.yellow(state);
  return st.cyan(state);
}

std::string pad(const std::string& s, std::size_t n) {
  return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
}

bool valid_run_id(const std::string& s) {
  return s.rfind("run_", 0) == 0 && s.find_first_of("/?#% ") == std::string::npos;
}

// -- watch ----------------------------------------------------------------------------------------

/// Renders a run's events as a timeline and remembers how the run ended.
class timeline {
 public:
  explicit timeline(style st) : st_(st) {}

  /// Prints one event (skipping any seq already printed). Returns false on a terminal event.
  bool print(const net::sse_event& ev) {
    auto doc = json::parse(ev.data, 256);
    if (!doc || !doc->IsObject()) return true;
    auto seq = num(*doc, "seq");
    if (seq != 0 && seq <= last_seq_) return true;
    if (seq != 0) last_seq_ = seq;
    auto kind = str(*doc, "kind");
    const auto& data = member(*doc, "data");
    auto t = st_.dim(clock_time(str(*doc, "at")));
    std::string line;
    if (kind == "step.intent") {
      auto n = num(data, "n");
      args_[n] = str(data, "args");
      auto thought = str(data, "thought");
      if (!thought.empty()) line = "#" + std::to_string(n) + "  " + st_.dim("think") + "  " + truncate(thought, 160);
    } else if (kind == "step.outcome") {
      line = outcome(data);
    } else if (kind == "run.succeeded") {
      line = st_.green("✔ succeeded") + "  " + str(data, "message");
      end_ = 0;
    } else if (kind == "run.failed") {
      line = st_.red("✘ failed") + "  " + str(data, "message");
      end_ = 1;
    } else if (kind == "run.cancelled") {
      line = st_.yellow("■ cancelled") + "  " + str(data, "message");
      end_ = 2;
    } else if (kind == "run.waiting") {
      line = st_.yellow("… waiting for " + str(data, "for")) + (str(data, "reason").empty() ? "" : " (" + str(data, "reason") + ")");
    } else if (kind == "run.created") {
      line = st_.cyan("● created") + "  " + truncate(str(data, "goal"), 120);
    } else if (kind == "run.started") {
      line = st_.cyan("▶ started") + (str(data, "node").empty() ? "" : " on " + str(data, "node"));
    } else {
      line = st_.cyan(kind) + (data.IsObject() && data.MemberCount() > 0 ? "  " + truncate(str(*doc, "data"), 120) : "");
    }
    if (!line.empty()) {
      std::printf("%s  %s\n", t.c_str(), line.c_str());
      std::fflush(stdout);
    }
    return !end_;
  }

  [[nodiscard]] std::optional<int> end() const { return end_; }
  [[nodiscard]] std::int64_t last_seq() const { return last_seq_; }

 private:
  std::string outcome(const rapidjson::Value& data) {
    auto n = num(data, "n");
    auto kind = str(data, "kind");
    auto state = str(data, "state");
    if (kind == "conclude") {
      auto concl = str(member(data, "result"), "conclusion");
      return "#" + std::to_string(n) + "  " + st_.bold("conclusion") + "  " + concl;
    }
    std::string head = "#" + std::to_string(n) + "  " + kind + "  " + st_.bold(str(data, "tool"));
    if (auto a = args_.find(n); a != args_.end() && a->second != "{}") head += " " + truncate(a->second, 100);
    auto ms = num(data, "duration_us") / 1000;
    std::string result = state == "succeeded" ? st_.green("→ ok") : st_.red("→ " + state);
    if (state != "succeeded" && !str(data, "error").empty()) result += ": " + truncate(str(data, "error"), 120);
    return head + "  " + result + st_.dim(" (" + std::to_string(ms) + " ms)");
  }

  style st_;
  std::int64_t last_seq_ = 0;
  std::map<std::int64_t, std::string> args_;
  std::optional<int> end_;
};

/// Follows a run's event stream; reconnects with Last-Event-ID when the connection drops.
int watch_run(const options& o, const std::string& run_id) {
  timeline tl(make_style());
  std::string last_id;
  int failures = 0;
  bool connected_once = false;
  constexpr int max_failures = 8;
  while (true) {
    bool got_any = false;
    auto err = net::sse_stream(o.host, o.port, "/v1/runs/" + run_id + "/events", last_id,
                               [&](const net::sse_event& ev) {
                                 got_any = true;
                                 if (!ev.id.empty()) last_id = ev.id;
                                 return tl.print(ev);
                               });
    if (tl.end()) return *tl.end();
    bool transport = err.code == errc::unavailable || err.code == errc::deadline;
    if (err && !transport) {
      std::fprintf(stderr, "sreh: %s\n", err.message.c_str());
      return exit_refused;
    }
    if (!err) {
      // The stream ended without a terminal event we saw (resumed past it): ask for the state.
      int code = exit_ok;
      auto doc = call(o, "GET", "/v1/runs/" + run_id, code);
      if (!doc) return code;
      auto state = str(*doc, "state");
      if (state == "succeeded") return 0;
      if (state == "failed") return 1;
      if (state == "cancelled") return 2;
    }
    if (got_any) {
      connected_once = true;
      failures = 0;
    }
    if (!connected_once && err && failures == 0 && err.message.find("connect") != std::string::npos)
      return unreachable(o, err);
    if (++failures > max_failures) return unreachable(o, err);
    auto backoff = std::chrono::milliseconds(std::min(5000, 200 << std::min(failures, 5)));
    std::fprintf(stderr, "%s\n",
                 make_style().dim("(connection lost: " + err.message + "; reconnecting in " +
                                  std::to_string(backoff.count()) + " ms)").c_str());
    std::this_thread::sleep_for(backoff);
  }
}

// -- commands -------------------------------------------------------------------------------------

int submit(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"idempotency-key", "label", "max-steps"}, {"watch", "json"});
  if (!o) return exit_usage;
  if (o->positional.size() != 1) return usage_error("submit takes exactly one GOAL");
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("goal");
  w.String(o->positional[0].c_str(), static_cast<rapidjson::SizeType>(o->positional[0].size()));
  if (auto it = o->values.find("label"); it != o->values.end()) {
    w.Key("labels");
    w.StartObject();
    for (const auto& kv : it->second) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return usage_error("--label expects k=v, got '" + kv + "'");
      auto k = kv.substr(0, eq);
      auto v = kv.substr(eq + 1);
      w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
      w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
    }
    w.EndObject();
  }
  if (const auto* ms = o->value("max-steps")) {
    char* end = nullptr;
    long long n = std::strtoll(ms->c_str(), &end, 10);
    if (ms->empty() || *end != '\0' || n < 1) return usage_error("--max-steps expects a positive integer");
    w.Key("budget");
    w.StartObject();
    w.Key("max_steps");
    w.Int64(n);
    w.EndObject();
  }
  w.EndObject();
  std::map<std::string, std::string> headers;
  if (const auto* k = o->value("idempotency-key")) headers["Idempotency-Key"] = *k;
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(*o, "POST", "/v1/goals", code, std::string(buf.GetString(), buf.GetSize()), headers, &raw);
  if (!doc) return code;
  auto id = str(member(*doc, "run"), "id");
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
  } else {
    std::printf("%s\n", id.c_str());
    if (raw.status == 200) std::fprintf(stderr, "(the idempotency key names an existing run)\n");
  }
  std::fflush(stdout);
  if (o->flag("watch")) return watch_run(*o, id);
  return exit_ok;
}

int runs(int argc, char** argv) {
  auto o = parse_options(argc, argv, {"state", "limit", "cursor"}, {"json"});
  if (!o) return exit_usage;
  if (!o->positional.empty()) return usage_error("runs takes no arguments");
  std::string target = "/v1/runs";
  char sep = '?';
  for (const char* p : {"state", "limit", "cursor"}) {
    if (const auto* v = o->value(p)) {
      target += sep + std::string(p) + "=" + *v;
      sep = '&';
    }
  }
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(*o, "GET", target, code, {}, {}, &raw);
  if (!doc) return code;
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
    return exit_ok;
  }
  auto st = make_style();
  const auto& list = member(*doc, "runs");
  std::printf("%s\n", st.bold(pad("ID", 31) + "  " + pad("STATE", 10) + "  " + pad("STEPS", 5) + "  " +
                              pad("AGE", 4) + "  GOAL").c_str());
  if (list.IsArray()) {
    for (const auto& r : list.GetArray()) {
      auto state = str(r, "state");
      std::printf("%s  %s  %5lld  %s  %s\n", pad(str(r, "id"), 31).c_str(),
                  (state_colored(st, state) + std::string(state.size() < 10 ? 10 - state.size() : 0, ' ')).c_str(),
                  static_cast<long long>(num(r, "steps")), pad(age(str(r, "created_at")), 4).c_str(),
                  truncate(str(r, "goal"), 60).c_str());
    }
  }
  if (auto next = str(*doc, "next_cursor"); !next.empty())
    std::printf("%s\n", st.dim("more: sreh runs --cursor " + next).c_str());
  return exit_ok;
}

void print_step(const style& st, const rapidjson::Value& s) {
  auto n = num(s, "n");
  auto kind = str(s, "kind");
  auto state = str(s, "state");
  std::string line = "  #" + std::to_string(n) + "  " + kind;
  if (!str(s, "tool").empty()) line += "  " + st.bold(str(s, "tool"));
  if (auto args = str(s, "args"); kind == "tool" && !args.empty() && args != "{}") line += " " + truncate(args, 100);
  line += "  " + state_colored(st, state);
  auto started = parse_time(str(s, "started_at"));
  auto finished = parse_time(str(s, "finished_at"));
  if (started && finished) line += st.dim(" (" + std::to_string((*finished - *started) / 1000) + " ms)");
  std::printf("%s\n", line.c_str());
  if (auto thought = str(member(s, "decision"), "thought"); !thought.empty())
    std::printf("      %s %s\n", st.dim("thought:").c_str(), truncate(thought, 160).c_str());
  if (kind == "conclude") {
    std::printf("      %s %s\n", st.dim("conclusion:").c_str(), str(member(s, "result"), "conclusion").c_str());
  } else if (auto result = str(s, "result"); !result.empty()) {
    std::printf("      %s %s\n", st.dim("result:").c_str(), truncate(result, 160).c_str());
  }
  if (auto error = str(s, "error"); !error.empty())
    std::printf("      %s %s\n", st.red("error:").c_str(), error.c_str());
}

int show(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o) return exit_usage;
  if (o->positional.size() != 1) return usage_error("show takes exactly one RUN id");
  const auto& id = o->positional[0];
  if (!valid_run_id(id)) return usage_error("'" + id + "' is not a run id (run_...)");
  int code = exit_ok;
  net::http_response raw_run, raw_steps;
  auto run = call(*o, "GET", "/v1/runs/" + id, code, {}, {}, &raw_run);
  if (!run) return code;
  auto steps = call(*o, "GET", "/v1/runs/" + id + "/steps", code, {}, {}, &raw_steps);
  if (!steps) return code;
  if (o->flag("json")) {
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("run");
    run->Accept(w);
    w.Key("steps");
    member(*steps, "steps").Accept(w);
    w.EndObject();
    std::printf("%.*s\n", static_cast<int>(buf.GetSize()), buf.GetString());
    return exit_ok;
  }
  auto st = make_style();
  const auto& r = *run;
  std::printf("%s  %s\n", st.bold(str(r, "id")).c_str(), state_colored(st, str(r, "state")).c_str());
  auto row = [&st](const char* k, const std::string& v) {
    if (!v.empty()) std::printf("  %s %s\n", st.dim(pad(k, 11)).c_str(), v.c_str());
  };
  row("goal:", str(r, "goal"));
  row("waiting:", str(r, "waiting_for"));
  row("submitter:", str(r, "submitter"));
  row("node:", str(r, "node_id"));
  row("created:", str(r, "created_at"));
  row("updated:", str(r, "updated_at"));
  row("steps:", std::to_string(num(r, "steps")) + " (max " + std::to_string(num(member(r, "budget"), "max_steps")) + ")");
  row("labels:", str(r, "labels") == "{}" ? "" : str(r, "labels"));
  row("key:", str(r, "idempotency_key"));
  row("conclusion:", str(r, "conclusion"));
  row("error:", str(r, "error"));
  const auto& list = member(*steps, "steps");
  if (list.IsArray() && !list.GetArray().Empty()) {
    std::printf("\n%s\n", st.bold("steps").c_str());
    for (const auto& s : list.GetArray()) print_step(st, s);
  }
  return exit_ok;
}

int watch(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {});
  if (!o) return exit_usage;
  if (o->positional.size() != 1) return usage_error("watch takes exactly one RUN id");
  if (!valid_run_id(o->positional[0])) return usage_error("'" + o->positional[0] + "' is not a run id (run_...)");
  return watch_run(*o, o->positional[0]);
}

int cancel(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o) return exit_usage;
  if (o->positional.size() != 1) return usage_error("cancel takes exactly one RUN id");
  const auto& id = o->positional[0];
  if (!valid_run_id(id)) return usage_error("'" + id + "' is not a run id (run_...)");
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(*o, "POST", "/v1/runs/" + id + "/cancel", code, {}, {}, &raw);
  if (!doc) return code;
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
  } else {
    auto st = make_style();
    std::printf("%s  %s\n", id.c_str(), state_colored(st, str(member(*doc, "run"), "state")).c_str());
  }
  return exit_ok;
}

} // namespace

int run_client_command(const std::string& cmd, int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage_text, stdout);
      return exit_ok;
    }
  }
  if (cmd == "submit") return submit(argc, argv);
  if (cmd == "runs") return runs(argc, argv);
  if (cmd == "show") return show(argc, argv);
  if (cmd == "watch") return watch(argc, argv);
  if (cmd == "cancel") return cancel(argc, argv);
  return usage_error("unknown command '" + cmd + "'");
}

} // namespace sreh::app
