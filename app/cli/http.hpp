#pragma once
// Private to the client subcommands: options, the bearer token, requests and problem output,
// terminal styling and the JSON/time helpers the commands share.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "net/client/http_client.hpp"

namespace sreh::app::cli {

constexpr int exit_ok = 0;
constexpr int exit_refused = 1;
constexpr int exit_usage = 2;
constexpr int exit_unreachable = 3;

/// The usage text of every client command (printed on usage errors and --help).
extern const char* const usage_text;

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

/// Colours when stdout is a terminal and NO_COLOR is unset.
[[nodiscard]] style make_style();

// -- options ------------------------------------------------------------------------------------

struct options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7070;
  std::optional<net::client_tls> tls; // an https:// server
  std::string token;                  // bearer token ("" = none)
  std::string token_source;           // where it came from, for messages
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values; // --name VALUE (repeatable)
  std::map<std::string, bool> flags;                      // --name

  [[nodiscard]] const std::string* value(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() || it->second.empty() ? nullptr : &it->second.back();
  }
  [[nodiscard]] bool flag(const std::string& name) const { return flags.count(name) > 0; }
  [[nodiscard]] std::string where() const {
    return (tls ? "https://" : "") + host + ":" + std::to_string(port);
  }
  /// `Authorization: Bearer ...` when there is a token, plus `extra`.
  [[nodiscard]] std::map<std::string, std::string>
  headers(std::map<std::string, std::string> extra = {}) const;
};

/// Prints `what` and the usage; returns exit_usage.
int usage_error(const std::string& what);

/// Parses `argv` given which options take a value and which are flags. Common options:
/// `--server HOST:PORT` (default $SREH_SERVER, else 127.0.0.1:7070) and `--token-file F`.
/// The token is $SREH_TOKEN, else the --token-file, else ./data/admin.token when readable.
/// Nullopt (after printing the usage or the error) on an error.
[[nodiscard]] std::optional<options> parse_options(int argc, char** argv,
                                                   const std::vector<std::string>& with_value,
                                                   const std::vector<std::string>& flags);

// -- talking to the server ----------------------------------------------------------------------

/// Prints "cannot reach sreh at ..." and returns exit_unreachable.
int unreachable(const options& o, const sreh::error& e);

/// After a 401: says how to give the node a token (or that the one given was refused).
void token_hint(const options& o);

/// Prints a non-2xx answer (its problem detail; for 401 how to give a token) and returns
/// exit_refused.
int refused(const options& o, const net::http_response& r);

/// Sends a request with the caller's token. On a 2xx answer returns it as it came; otherwise
/// prints what went wrong and sets `exit_code`.
[[nodiscard]] std::optional<net::http_response>
send(const options& o, const std::string& method, const std::string& target, int& exit_code,
     const std::string& body = {}, const std::map<std::string, std::string>& headers = {});

/// Sends a request with the caller's token. On success returns the parsed JSON body; otherwise
/// prints what went wrong and sets `exit_code`.
[[nodiscard]] std::optional<rapidjson::Document>
call(const options& o, const std::string& method, const std::string& target, int& exit_code,
     const std::string& body = {}, const std::map<std::string, std::string>& headers = {},
     net::http_response* raw = nullptr);

/// `call`, for a command that prints its answer: with `--json` it prints the body as it came
/// and returns nullopt (`exit_code` exit_ok); otherwise the document to print readably.
[[nodiscard]] std::optional<rapidjson::Document>
call_readable(const options& o, const std::string& method, const std::string& target,
              int& exit_code, const std::string& body = {},
              const std::map<std::string, std::string>& headers = {});

/// The start every listing command shares (`sreh nodes`, `tools`, `templates`): no arguments but
/// `--json`, then GET `target`. Returns the document when the caller is to print its table;
/// otherwise (a usage error, a failed call, or --json, whose raw body it prints) nullopt with
/// `exit_code` set.
[[nodiscard]] std::optional<rapidjson::Document> get_listing(int argc, char** argv,
                                                             const std::string& command,
                                                             const std::string& target,
                                                             int& exit_code);

/// `path` with the query parameters of `names` that the options give, url-encoded, after those
/// of `preset` (name=value, already encoded): "/v1/works?state=open&limit=5".
[[nodiscard]] std::string with_query(std::string path, const options& o,
                                     std::initializer_list<const char*> names,
                                     const std::vector<std::string>& preset = {});

// -- JSON and time helpers ----------------------------------------------------------------------

/// A member as text: strings as they are, null/absent as "", other values as JSON.
[[nodiscard]] std::string str(const rapidjson::Value& v, const char* key);
/// An integer member, 0 when absent or not an integer.
[[nodiscard]] std::int64_t num(const rapidjson::Value& v, const char* key);
/// A member, or a null value when absent.
[[nodiscard]] const rapidjson::Value& member(const rapidjson::Value& v, const char* key);
/// "04:08:39.123" in local time.
[[nodiscard]] std::string clock_time(const std::string& rfc3339);
/// "12s", "5m", "3h", "2d" since the timestamp.
[[nodiscard]] std::string age(const std::string& rfc3339);
/// One line of at most `n` bytes, cut on a UTF-8 boundary with "…".
[[nodiscard]] std::string truncate(std::string s, std::size_t n);
[[nodiscard]] std::string state_colored(const style& st, const std::string& state);
[[nodiscard]] std::string pad(const std::string& s, std::size_t n);
/// A step's time: "20 ms", or "waited 2 min 8 s, ran 20 ms" when it waited (for an approval)
/// before it ran.
[[nodiscard]] std::string durations(std::int64_t waited_us, std::int64_t ran_us);
[[nodiscard]] bool valid_run_id(const std::string& s);

} // namespace sreh::app::cli
