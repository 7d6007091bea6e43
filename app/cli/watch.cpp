// `sreh watch`: a run's events rendered as a timeline, following the SSE stream.
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

namespace {

/// Renders a run's events as a timeline and remembers how the run ended.
class timeline {
 public:
  explicit timeline(style st) : st_(st) {}

  /// Prints one event (skipping any seq already printed). Returns false on a terminal event.
  bool print(const net::sse_event& ev) {
    auto doc = json::parse(ev.data, 256);
    if (!doc || !doc->IsObject())
      return true;
    auto seq = num(*doc, "seq");
    if (seq != 0 && seq <= last_seq_)
      return true;
    if (seq != 0)
      last_seq_ = seq;
    auto kind = str(*doc, "kind");
    const auto& data = member(*doc, "data");
    auto t = st_.dim(clock_time(str(*doc, "at")));
    std::string line;
    if (kind == "model.delta") { // a streamed answer as it arrives: one growing line per step
      auto n = num(data, "step");
      if (delta_step_ != n) {
        std::printf("%s%s  #%s  %s  ", delta_step_ ? "\n" : "", t.c_str(),
                    std::to_string(n).c_str(), st_.dim("model").c_str());
        delta_step_ = n;
      }
      auto text = str(data, "text");
      for (auto& c : text)
        c = c == '\n' || c == '\r' ? ' ' : c;
      std::printf("%s", text.c_str());
      std::fflush(stdout);
      return true;
    }
    if (delta_step_) {
      std::printf("\n");
      delta_step_ = 0;
    }
    if (kind == "step.intent") {
      auto n = num(data, "n");
      args_[n] = str(data, "args");
      auto thought = str(data, "thought");
      if (!thought.empty())
        line = "#" + std::to_string(n) + "  " + st_.dim("think") + "  " + truncate(thought, 160);
    } else if (kind == "step.outcome") {
      line = outcome(data);
    } else if (kind == "run.succeeded") {
      line = st_.green("✔ succeeded") + outcome_of(data) + "  " + str(data, "message");
      end_ = 0;
    } else if (kind == "run.failed") {
      line = st_.red("✘ failed") + outcome_of(data) + "  " + str(data, "message");
      end_ = 1;
    } else if (kind == "run.cancelled") {
      line = st_.yellow("■ cancelled") + outcome_of(data) + "  " + str(data, "message");
      end_ = 2;
    } else if (kind == "run.waiting") {
      line = st_.yellow("… waiting for " + str(data, "for")) +
             (str(data, "reason").empty() ? "" : " (" + str(data, "reason") + ")");
      if (const auto& ids = member(data, "runs"); ids.IsArray())
        for (const auto& id : ids.GetArray())
          if (id.IsString())
            line += std::string{"\n            "} + st_.dim("├ ") + id.GetString();
    } else if (kind == "run.created") {
      line = st_.cyan("● created") + "  " + truncate(str(data, "goal"), 120);
    } else if (kind == "run.started") {
      line = st_.cyan("▶ started") + (str(data, "node").empty() ? "" : " on " + str(data, "node"));
    } else {
      line =
        st_.cyan(kind) +
        (data.IsObject() && data.MemberCount() > 0 ? "  " + truncate(str(*doc, "data"), 120) : "");
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
  /// " · mitigated": what the run achieved (core/model/outcome.hpp), coloured by how good it is.
  std::string outcome_of(const rapidjson::Value& data) const {
    auto o = str(data, "outcome");
    if (o.empty())
      return {};
    return " · " + (o == "mitigated" || o == "no_fault" || o == "completed"   ? st_.green(o)
                    : o == "partial" || o == "unverified" || o == "diagnosed" ? st_.yellow(o)
                                                                              : st_.red(o));
  }

  std::string outcome(const rapidjson::Value& data) {
    auto n = num(data, "n");
    auto kind = str(data, "kind");
    auto state = str(data, "state");
    if (kind == "conclude") {
      auto concl = str(member(data, "result"), "conclusion");
      return "#" + std::to_string(n) + "  " + st_.bold("conclusion") + "  " + concl;
    }
    if (kind == "subruns") { // a flow step's runs: one line per branch, goal or flow
      std::string out = "#" + std::to_string(n) + "  runs  " +
                        (state == "succeeded" ? st_.green("→ ok") : st_.red("→ " + state));
      if (state != "succeeded" && !str(data, "error").empty())
        out += ": " + truncate(str(data, "error"), 120);
      if (const auto& runs = member(member(data, "result"), "runs"); runs.IsArray())
        for (const auto& r : runs.GetArray()) {
          auto rs = str(r, "state");
          out += "\n            " + st_.dim("├ ") + str(r, "key") + "  " + str(r, "run") + "  " +
                 (rs == "succeeded" ? st_.green(rs) : st_.red(rs));
          if (auto c = str(r, "conclusion"); !c.empty())
            out += "  " + truncate(c, 100);
        }
      return out;
    }
    std::string head = "#" + std::to_string(n) + "  " + kind + "  " + st_.bold(str(data, "tool"));
    if (auto a = args_.find(n); a != args_.end() && a->second != "{}")
      head += " " + truncate(a->second, 100);
    std::string result = state == "succeeded" ? st_.green("→ ok") : st_.red("→ " + state);
    if (state != "succeeded" && !str(data, "error").empty())
      result += ": " + truncate(str(data, "error"), 120);
    return head + "  " + result +
           st_.dim(" (" + durations(num(data, "waited_us"), num(data, "duration_us")) + ")");
  }

  style st_;
  std::int64_t delta_step_ = 0; // the step whose model.delta line is open (0: none)
  std::int64_t last_seq_ = 0;
  std::map<std::int64_t, std::string> args_;
  std::optional<int> end_;
};

} // namespace

int watch_run(const options& o, const std::string& run_id) {
  timeline tl(make_style());
  std::string last_id;
  int failures = 0;
  bool connected_once = false;
  constexpr int max_failures = 8;
  while (true) {
    bool got_any = false;
    auto err = net::sse_stream(
      o.host, o.port, "/v1/runs/" + run_id + "/events", last_id,
      [&](const net::sse_event& ev) {
        got_any = true;
        if (!ev.id.empty())
          last_id = ev.id;
        return tl.print(ev);
      },
      o.headers(), o.tls ? &*o.tls : nullptr);
    if (tl.end())
      return *tl.end();
    bool transport = err.code == errc::unavailable || err.code == errc::deadline;
    if (err && !transport) {
      std::fprintf(stderr, "sreh: %s\n", err.message.c_str());
      if (err.code == errc::unauthorized)
        token_hint(o);
      return exit_refused;
    }
    if (!err) {
      // The stream ended without a terminal event we saw (resumed past it): ask for the state.
      int code = exit_ok;
      auto doc = call(o, "GET", "/v1/runs/" + run_id, code);
      if (!doc)
        return code;
      auto state = str(*doc, "state");
      if (state == "succeeded")
        return 0;
      if (state == "failed")
        return 1;
      if (state == "cancelled")
        return 2;
    }
    if (got_any) {
      connected_once = true;
      failures = 0;
    }
    if (!connected_once && err && failures == 0 && err.message.find("connect") != std::string::npos)
      return unreachable(o, err);
    if (++failures > max_failures)
      return unreachable(o, err);
    auto backoff = std::chrono::milliseconds(std::min(5000, 200 << std::min(failures, 5)));
    std::fprintf(stderr, "%s\n",
                 make_style()
                   .dim("(connection lost: " + err.message + "; reconnecting in " +
                        std::to_string(backoff.count()) + " ms)")
                   .c_str());
    std::this_thread::sleep_for(backoff);
  }
}

} // namespace sreh::app::cli
