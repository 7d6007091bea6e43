// shell.<name>: the allow-listed commands of tools.shell, each a tool of its own with its own
// risk class (what the policy decides on). argv is executed directly (posix_spawn, no shell, so
// nothing in an argument is interpreted), with only the configured environment, stdin from
// /dev/null, a timeout (the process group is killed), and stdout and stderr capped.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>

#include "core/base/json.hpp"
#include "plugins/register.hpp"

namespace sreh::plugins {

namespace {

using actors::risk_class;
using actors::tool_call;
using actors::tool_result;

risk_class risk_of(const std::string& s) {
  return s == "low"      ? risk_class::low
         : s == "medium" ? risk_class::medium
         : s == "high"   ? risk_class::high
                         : risk_class::read_only;
}

struct outcome {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  bool cancelled = false;
  std::string out, err;
  bool truncated = false;
  double ms = 0;
};

/// Runs `argv` with `env`; never throws. An error only when the process cannot start.
expected<outcome> run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      std::chrono::milliseconds timeout, std::size_t cap,
                      const std::stop_token& cancel) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    return sreh::error{errc::internal, "pipe failed"};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return sreh::error{errc::internal, "pipe failed"};
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0); // its own group: a timeout kills what it started too
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none); // sreh blocks SIGTERM/SIGINT; the child must not
  posix_spawnattr_setsigdefault(&attr, &all);
  std::vector<char*> av, ev;
  for (const auto& a : argv)
    av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  for (const auto& e : env)
    ev.push_back(const_cast<char*>(e.c_str()));
  ev.push_back(nullptr);
  pid_t pid = 0;
  auto t0 = std::chrono::steady_clock::now();
  int rc = posix_spawn(&pid, av[0], &fa, &attr, av.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return sreh::error{errc::unavailable,
                       fmt::format("cannot run {}: {}", argv.front(), std::strerror(rc))};
  }
  outcome o;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open_fds = 2;
  char buf[8192];
  auto deadline = t0 + timeout;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now())
                  .count();
    if (left <= 0 || cancel.stop_requested()) {
      (left <= 0 ? o.timed_out : o.cancelled) = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, 100))) < 0 && errno != EINTR)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      auto n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      auto room = cap > sinks[i]->size() ? cap - sinks[i]->size() : 0;
      sinks[i]->append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
      o.truncated = o.truncated || static_cast<std::size_t>(n) > room;
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0)
      close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    o.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    o.signal = WTERMSIG(status);
  o.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

class shell_tool final : public actors::tool {
 public:
  shell_tool(config::shell_command c, const config::shell_config& s)
    : cmd_(std::move(c)), name_("shell." + cmd_.name), risk_(risk_of(cmd_.risk)),
      pattern_(cmd_.arg_pattern, std::regex::ECMAScript),
      cap_(static_cast<std::size_t>(s.max_output_bytes)) {
    description_ = cmd_.description.empty()
                     ? fmt::format("Runs {} (no shell).", fmt::join(cmd_.argv, " "))
                     : cmd_.description;
    schema_ = cmd_.max_args == 0
                ? R"({"type":"object","additionalProperties":false})"
                : fmt::format(R"({{"type":"object","properties":{{"args":{{"type":"array",)"
                              R"("maxItems":{},"items":{{"type":"string","maxLength":1024}}}}}},)"
                              R"("additionalProperties":false}})",
                              cmd_.max_args);
    for (const auto& [k, v] : s.env)
      env_.push_back(k + "=" + v);
  }
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override { return risk_; }
  bool idempotent() const override { return risk_ == risk_class::read_only; }
  bool blocking() const override { return true; }
  std::chrono::milliseconds timeout() const override {
    return std::chrono::milliseconds{cmd_.timeout_ms + 2000};
  }
  actors::action_scope scope(std::string_view) const override { return {name_, "prod", "", 0}; }

  tool_result execute(const tool_call& call) override {
    auto args = json::parse_object(call.args);
    if (!args)
      return tool_result::failure(name_ + ": " + args.error().message);
    auto argv = cmd_.argv;
    if (auto m = args->FindMember("args"); m != args->MemberEnd())
      for (const auto& a : m->value.GetArray()) {
        std::string s{a.GetString(), a.GetStringLength()};
        if (!std::regex_match(s, pattern_))
          return tool_result::failure(
            fmt::format("{}: argument '{}' does not match {}", name_, s, cmd_.arg_pattern));
        argv.push_back(std::move(s));
      }
    auto o = run(argv, env_, std::chrono::milliseconds{cmd_.timeout_ms}, cap_, call.cancel);
    if (!o)
      return tool_result::failure(name_ + ": " + o.error().message);
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("argv");
    w.StartArray();
    for (const auto& a : argv)
      w.String(a);
    w.EndArray();
    w.Key("exit_code");
    w.Int(o->exit_code);
    if (o->signal != 0) {
      w.Key("signal");
      w.Int(o->signal);
    }
    w.Key("timed_out");
    w.Bool(o->timed_out);
    w.Key("duration_ms");
    w.Double(std::round(o->ms * 10) / 10);
    for (auto [key, text] : {std::pair{"stdout", &o->out}, std::pair{"stderr", &o->err}}) {
      w.Key(key);
      w.String(text->data(), static_cast<rapidjson::SizeType>(text->size()));
    }
    w.Key("truncated");
    w.Bool(o->truncated);
    w.EndObject();
    std::string result{buf.GetString(), buf.GetSize()};
    if (o->timed_out)
      return tool_result::failure(
        fmt::format("{}: timed out after {} ms (killed)", name_, cmd_.timeout_ms));
    if (o->cancelled)
      return tool_result::failure(name_ + ": cancelled (killed)");
    // A command that changes something and exits non-zero did not do what it was asked.
    if (risk_ != risk_class::read_only && o->exit_code != 0)
      return tool_result::failure(
        fmt::format("{}: exit code {}: {}", name_, o->exit_code, o->err.substr(0, 300)));
    return tool_result::success(std::move(result));
  }

 private:
  config::shell_command cmd_;
  std::string name_, description_, schema_;
  risk_class risk_;
  std::regex pattern_;
  std::size_t cap_;
  std::vector<std::string> env_;
};

} // namespace

void register_shell(actors::toolset_registry& r) {
  r.add({"shell",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           const auto& s = cfg.tools.shell;
           if (s.commands.empty())
             return std::string{};
           std::vector<std::string> names;
           for (const auto& c : s.commands) {
             out.add(std::make_shared<shell_tool>(c, s));
             names.push_back("shell." + c.name + " (" + c.risk + ")");
           }
           return fmt::format("  tools: {}\n", fmt::join(names, ", "));
         }});
}

} // namespace sreh::plugins
