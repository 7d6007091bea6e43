// Shared by the client subcommands: options, the bearer token, requests, problem output,
// styling and JSON/time helpers.
#include "app/cli/http.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/base/http_url.hpp"

namespace sreh::app::cli {

namespace {

constexpr const char* default_token_file = "./data/admin.token";

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

/// The first line of a token file, trimmed; nullopt when it cannot be read.
std::optional<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  std::string line;
  std::getline(in, line);
  return trim(line);
}

/// $SREH_TOKEN, else --token-file, else ./data/admin.token when readable. False (after printing
/// why) when --token-file names a file that cannot be read.
bool resolve_token(options& o, const std::string* token_file) {
  if (const char* env = std::getenv("SREH_TOKEN"); env && *env) {
    o.token = trim(env);
    o.token_source = "$SREH_TOKEN";
    return true;
  }
  if (token_file) {
    auto t = read_token_file(*token_file);
    if (!t) {
      std::fprintf(stderr, "sreh: --token-file: cannot read %s\n", token_file->c_str());
      return false;
    }
    o.token = *t;
    o.token_source = *token_file;
    return true;
  }
  if (auto t = read_token_file(default_token_file); t && !t->empty()) {
    o.token = *t;
    o.token_source = default_token_file;
  }
  return true;
}

std::string problem_detail(const net::http_response& r) {
  if (auto doc = json::parse(r.body); doc && doc->IsObject()) {
    auto it = doc->FindMember("detail");
    if (it != doc->MemberEnd() && it->value.IsString())
      return it->value.GetString();
  }
  return "HTTP " + std::to_string(r.status) + (r.body.empty() ? "" : ": " + r.body.substr(0, 300));
}

} // namespace

const char* const usage_text = R"(usage:
  sreh submit "GOAL" [--idempotency-key K] [--label k=v]... [--max-steps N] [--watch] [--json]
  sreh runs [--state S] [--limit N] [--json]
  sreh show RUN [--json]
  sreh postmortem RUN|WORK [--json]   (a finished run's or closed Work's postmortem, Markdown unless --json)
  sreh watch RUN
  sreh cancel RUN
  sreh say RUN TEXT [--idempotency-key K] [--json]   (a message the run takes at its next decision)
  sreh fork RUN --from N [--policy FILE] [--edit K=JSON|K=@FILE]... [--fail K=ERROR]... [--wait] [--json]
                 (a new run from RUN's steps 1..N-1, live from step N; --wait: to its end, then compared)
  sreh compare RUN [--with RUN] [--json]   (a fork's steps beside the original's)
  sreh approvals [--state pending] [--run RUN] [--limit N] [--json]
  sreh approve APPROVAL [--comment TEXT] [--json]
  sreh deny APPROVAL [--comment TEXT] [--json]
  sreh nodes [--json]
  sreh tools [--json]
  sreh models [--json]
  sreh models check [--timeout MS] [--json]
  sreh templates [--json]
  sreh flows [--json]
  sreh flow run NAME [--input k=v]... [--label k=v]... [--idempotency-key K] [--watch] [--json]
  sreh flow show NAME [--json]
  sreh flow graph NAME [--dot] [--json]
  sreh works [--state S] [--kind K] [--severity S] [--label k=v] [--text T] [--limit N] [--json]
  sreh work create TEMPLATE [--field k=v]... [--idempotency-key K] [--json]
  sreh work show|ack|resolve|reopen|cancel|comment|trigger WORK [--text TEXT] [--json]
  sreh sandbox reset [--json]   (a sandbox node: its scenario again, every action forgotten)
  sreh memory search [WORDS...] [--label k=v[,k=v]] [--near k=v] [--entity E] [--kind K] [--limit N]
  sreh memory add --kind postmortem|incident|note|runbook --text TEXT|- [--label k=v]... [--entity E]...
  sreh memory show MEMORY [--versions] | edit MEMORY [--text T] [--label k=v]... | rm MEMORY
  sreh memory rollback MEMORY --version N
common options: --server [https://]HOST:PORT (default: $SREH_SERVER, else 127.0.0.1:7070)
                --token-file F (the bearer token: $SREH_TOKEN, else F, else ./data/admin.token)
                --ca-file F (https: the CA of the node's certificate; $SREH_CA_FILE)
                --cert F --key F (https: a client certificate; $SREH_CERT_FILE, $SREH_KEY_FILE)
)";

style make_style() {
  return style{::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr};
}

std::map<std::string, std::string>
options::headers(std::map<std::string, std::string> extra) const {
  if (!token.empty())
    extra["Authorization"] = "Bearer " + token;
  return extra;
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "sreh: %s\n\n%s", what.c_str(), usage_text);
  return exit_usage;
}

std::optional<options> parse_options(int argc, char** argv,
                                     const std::vector<std::string>& with_value,
                                     const std::vector<std::string>& flags) {
  options o;
  std::string server = "127.0.0.1:7070";
  std::optional<std::string> token_file;
  std::map<std::string, std::string> tls_files; // --ca-file, --cert, --key
  if (const char* env = std::getenv("SREH_SERVER"); env && *env)
    server = env;
  auto takes = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
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
      if (name == "server" || name == "token-file" || name == "ca-file" || name == "cert" ||
          name == "key" || takes(with_value, name)) {
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
        else if (name == "token-file")
          token_file = v;
        else if (name == "ca-file" || name == "cert" || name == "key")
          tls_files[name] = v;
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
  for (auto [name, env] : {std::pair{"ca-file", "SREH_CA_FILE"},
                           std::pair{"cert", "SREH_CERT_FILE"}, std::pair{"key", "SREH_KEY_FILE"}})
    if (const char* v = std::getenv(env); v && *v && !tls_files.count(name))
      tls_files[name] = v;
  if (server.rfind("https://", 0) == 0) {
    server = server.substr(8);
    o.tls = net::client_tls{tls_files["ca-file"], tls_files["cert"], tls_files["key"]};
    if (o.tls->cert_file.empty() != o.tls->key_file.empty()) {
      usage_error("--cert and --key go together");
      return std::nullopt;
    }
  } else if (server.rfind("http://", 0) == 0) {
    server = server.substr(7);
  }
  if (!server.empty() && server.back() == '/')
    server.pop_back();
  if (auto err = config::parse_listen(server, "--server", o.host, o.port)) {
    usage_error(err.message);
    return std::nullopt;
  }
  if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']')
    o.host = o.host.substr(1, o.host.size() - 2);
  if (!resolve_token(o, token_file ? &*token_file : nullptr))
    return std::nullopt;
  return o;
}

int unreachable(const options& o, const sreh::error& e) {
  if (!o.tls && e.message.find(net::closed_without_answer) != std::string::npos) {
    // Connected, and closed before any answer: what a node serving HTTPS does to plain HTTP.
    std::fprintf(stderr,
                 "sreh at %s %s: a node that serves HTTPS does that to plain HTTP; use --server "
                 "https://%s (with --ca-file CA.pem for a private CA)\n",
                 o.where().c_str(), std::string{net::closed_without_answer}.c_str(),
                 o.where().c_str());
    return exit_unreachable;
  }
  // The message is "host:port: what: reason"; keep the reason.
  auto msg = e.message;
  if (auto p = msg.rfind(": "); p != std::string::npos)
    msg = msg.substr(p + 2);
  std::fprintf(stderr, "cannot reach sreh at %s: %s — is `sreh serve` running?\n",
               o.where().c_str(), msg.c_str());
  return exit_unreachable;
}

void token_hint(const options& o) {
  if (o.token.empty())
    std::fprintf(stderr,
                 "the node needs a token: set SREH_TOKEN or pass --token-file (the node wrote one "
                 "to <data_dir>/admin.token)\n");
  else
    std::fprintf(stderr, "(the token from %s was not accepted)\n", o.token_source.c_str());
}

int refused(const options& o, const net::http_response& r) {
  std::fprintf(stderr, "sreh: %s\n", problem_detail(r).c_str());
  if (r.status == 401)
    token_hint(o);
  return exit_refused;
}

std::optional<net::http_response> send(const options& o, const std::string& method,
                                       const std::string& target, int& exit_code,
                                       const std::string& body,
                                       const std::map<std::string, std::string>& headers) {
  auto r = net::http_request(o.host, o.port, method, target, body, o.headers(headers),
                             std::chrono::seconds(30), o.tls ? &*o.tls : nullptr);
  if (!r) {
    exit_code = (r.error().code == errc::unavailable || r.error().code == errc::deadline)
                  ? unreachable(o, r.error())
                  : (std::fprintf(stderr, "sreh: %s\n", r.error().message.c_str()), exit_refused);
    return std::nullopt;
  }
  if (r->status < 200 || r->status > 299) {
    exit_code = refused(o, *r);
    return std::nullopt;
  }
  return std::move(*r);
}

std::optional<rapidjson::Document> call(const options& o, const std::string& method,
                                        const std::string& target, int& exit_code,
                                        const std::string& body,
                                        const std::map<std::string, std::string>& headers,
                                        net::http_response* raw) {
  auto r = send(o, method, target, exit_code, body, headers);
  if (!r)
    return std::nullopt;
  auto doc = json::parse(r->body, 256);
  if (!doc) {
    std::fprintf(stderr, "sreh: the server sent a malformed response: %s\n",
                 doc.error().message.c_str());
    exit_code = exit_refused;
    return std::nullopt;
  }
  if (raw)
    *raw = std::move(*r);
  return std::move(*doc);
}

std::optional<rapidjson::Document> get_listing(int argc, char** argv, const std::string& command,
                                               const std::string& target, int& exit_code) {
  exit_code = exit_ok;
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o) {
    exit_code = exit_usage;
    return std::nullopt;
  }
  if (!o->positional.empty()) {
    exit_code = usage_error(command + " takes no arguments");
    return std::nullopt;
  }
  return call_readable(*o, "GET", target, exit_code);
}

std::optional<rapidjson::Document>
call_readable(const options& o, const std::string& method, const std::string& target,
              int& exit_code, const std::string& body,
              const std::map<std::string, std::string>& headers) {
  net::http_response raw;
  auto doc = call(o, method, target, exit_code, body, headers, &raw);
  if (doc && o.flag("json")) {
    std::printf("%s\n", raw.body.c_str());
    return std::nullopt;
  }
  return doc;
}

std::string with_query(std::string path, const options& o, std::initializer_list<const char*> names,
                       const std::vector<std::string>& preset) {
  char sep = '?';
  for (const auto& p : preset) {
    path += sep + p;
    sep = '&';
  }
  for (const char* name : names)
    if (const auto* v = o.value(name)) {
      path += sep + std::string(name) + "=" + percent_encode(*v);
      sep = '&';
    }
  return path;
}

std::string str(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject())
    return {};
  auto it = v.FindMember(key);
  if (it == v.MemberEnd())
    return {};
  if (it->value.IsString())
    return {it->value.GetString(), it->value.GetStringLength()};
  if (it->value.IsNull())
    return {};
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  it->value.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

std::int64_t num(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject())
    return 0;
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

const rapidjson::Value& member(const rapidjson::Value& v, const char* key) {
  static const rapidjson::Value null_value;
  if (!v.IsObject())
    return null_value;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? null_value : it->value;
}

std::string clock_time(const std::string& rfc3339) {
  auto us = parse_rfc3339(rfc3339);
  if (!us)
    return std::string(12, ' ');
  std::time_t t = static_cast<std::time_t>(*us / 1'000'000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>((*us / 1000) % 1000));
  return buf;
}

std::string age(const std::string& rfc3339) {
  auto us = parse_rfc3339(rfc3339);
  if (!us)
    return "-";
  auto now = std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  auto s = std::max<std::int64_t>(0, (now - *us) / 1'000'000);
  if (s < 60)
    return std::to_string(s) + "s";
  if (s < 3600)
    return std::to_string(s / 60) + "m";
  if (s < 86400)
    return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string truncate(std::string s, std::size_t n) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  if (s.size() <= n)
    return s;
  // Cut on a UTF-8 boundary.
  auto cut = n > 1 ? n - 1 : n;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  return s.substr(0, cut) + "…";
}

std::string state_colored(const style& st, const std::string& state) {
  if (state == "succeeded" || state == "approved")
    return st.green(state);
  if (state == "failed" || state == "denied")
    return st.red(state);
  if (state == "cancelled" || state == "expired")
    return st.yellow(state);
  return st.cyan(state);
}

std::string pad(const std::string& s, std::size_t n) {
  return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
}

std::string durations(std::int64_t waited_us, std::int64_t ran_us) {
  auto ran = std::to_string(ran_us / 1000) + " ms";
  if (waited_us < 1'000'000)
    return ran;
  auto s = waited_us / 1'000'000;
  auto waited = s < 60 ? fmt::format("{} s", s) : fmt::format("{} min {} s", s / 60, s % 60);
  return "waited " + waited + ", ran " + ran;
}

bool valid_run_id(const std::string& s) {
  return s.rfind("run_", 0) == 0 && s.find_first_of("/?#% ") == std::string::npos;
}

} // namespace sreh::app::cli
