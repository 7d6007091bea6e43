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

#include "actors/tools/tool_spec.hpp"
#include "core/base/json.hpp"
#include "plugins/register.hpp"
#include "plugins/sre/shell/settings.hpp"

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

/// The read ends of a child's stdout and stderr.
struct child {
  pid_t pid = 0;
  int out = -1, err = -1;
};

/// Starts `argv` with `env` in its own process group, stdin from /dev/null.
expected<child> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
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
  child c{0, out_pipe[0], err_pipe[0]};
  int rc = posix_spawn(&c.pid, av[0], &fa, &attr, av.data(), ev.data());
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
  return c;
}

/// Reads the child's output into `o` (at most `cap` bytes of each) until both pipes close, or
/// kills its process group at `deadline` or on `cancel`.
void collect(const child& c, std::chrono::steady_clock::time_point deadline, std::size_t cap,
             const std::stop_token& cancel, outcome& o) {
  pollfd fds[2] = {{c.out, POLLIN, 0}, {c.err, POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open_fds = 2;
  char buf[8192];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now())
                  .count();
    if (left <= 0 || cancel.stop_requested()) {
      (left <= 0 ? o.timed_out : o.cancelled) = true;
      kill(-c.pid, SIGKILL);
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
}

/// Runs `argv` with `env`; never throws. An error only when the process cannot start.
expected<outcome> run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      std::chrono::milliseconds timeout, std::size_t cap,
                      const std::stop_token& cancel) {
  auto t0 = std::chrono::steady_clock::now();
  auto c = spawn(argv, env);
  if (!c)
    return c.error();
  outcome o;
  collect(*c, t0 + timeout, cap, cancel, o);
  int status = 0;
  while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    o.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    o.signal = WTERMSIG(status);
  o.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

/// What a shell.<name> tool needs for a call: its command and the toolset's limits.
struct runnable {
  shell::command cmd;
  std::string name;
  risk_class risk;
  std::regex pattern;
  std::size_t cap;
  std::vector<std::string> env;
};

/// The outcome as the step's result JSON.
std::string render(const std::vector<std::string>& argv, const outcome& o) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("argv");
  w.StartArray();
  for (const auto& a : argv)
    w.String(a);
  w.EndArray();
  w.Key("exit_code");
  w.Int(o.exit_code);
  if (o.signal != 0) {
    w.Key("signal");
    w.Int(o.signal);
  }
  w.Key("timed_out");
  w.Bool(o.timed_out);
  w.Key("duration_ms");
  w.Double(std::round(o.ms * 10) / 10);
  for (auto [key, text] : {std::pair{"stdout", &o.out}, std::pair{"stderr", &o.err}}) {
    w.Key(key);
    w.String(text->data(), static_cast<rapidjson::SizeType>(text->size()));
  }
  w.Key("truncated");
  w.Bool(o.truncated);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

tool_result execute(const runnable& c, const rapidjson::Value& args, const tool_call& call) {
  auto argv = c.cmd.argv;
  if (auto m = args.FindMember("args"); m != args.MemberEnd())
    for (const auto& a : m->value.GetArray()) {
      std::string s{a.GetString(), a.GetStringLength()};
      if (!std::regex_match(s, c.pattern))
        return tool_result::failure(
          fmt::format("{}: argument '{}' does not match {}", c.name, s, c.cmd.arg_pattern));
      argv.push_back(std::move(s));
    }
  auto o = run(argv, c.env, std::chrono::milliseconds{c.cmd.timeout_ms}, c.cap, call.cancel);
  if (!o)
    return tool_result::failure(c.name + ": " + o.error().message);
  auto result = render(argv, *o);
  if (o->timed_out)
    return tool_result::failure(
      fmt::format("{}: timed out after {} ms (killed)", c.name, c.cmd.timeout_ms));
  if (o->cancelled)
    return tool_result::failure(c.name + ": cancelled (killed)");
  // A command that changes something and exits non-zero did not do what it was asked.
  if (c.risk != risk_class::read_only && o->exit_code != 0)
    return tool_result::failure(
      fmt::format("{}: exit code {}: {}", c.name, o->exit_code, o->err.substr(0, 300)));
  return tool_result::success(std::move(result));
}

actors::tool_spec shell_tool(const shell::command& cmd, const shell::settings& s) {
  auto c = std::make_shared<runnable>(runnable{cmd,
                                               "shell." + cmd.name,
                                               risk_of(cmd.risk),
                                               std::regex{cmd.arg_pattern, std::regex::ECMAScript},
                                               static_cast<std::size_t>(s.max_output_bytes),
                                               {}});
  for (const auto& [k, v] : s.env)
    c->env.push_back(k + "=" + v);
  return {
    .name = c->name,
    .description = cmd.description.empty()
                     ? fmt::format("Runs {} (no shell).", fmt::join(cmd.argv, " "))
                     : cmd.description,
    .schema = cmd.max_args == 0
                ? R"({"type":"object","additionalProperties":false})"
                : fmt::format(R"({{"type":"object","properties":{{"args":{{"type":"array",)"
                              R"("maxItems":{},"items":{{"type":"string","maxLength":1024}}}}}},)"
                              R"("additionalProperties":false}})",
                              cmd.max_args),
    .risk = c->risk,
    .blocking = true,
    .timeout = std::chrono::milliseconds{cmd.timeout_ms + 2000},
    .run = [c](const rapidjson::Value& args,
               const actors::tool_context& ctx) { return execute(*c, args, ctx.call); },
    .scope =
      [name = c->name](std::string_view) {
        return actors::action_scope{name, "prod", "", 0};
      },
  };
}

} // namespace

void register_shell(actors::toolset_registry& r) {
  r.add({"shell",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           const auto& s = cfg.section<shell::settings>();
           if (s.commands.empty())
             return std::string{};
           std::vector<std::string> names;
           for (const auto& c : s.commands) {
             out.add(actors::make_tool(shell_tool(c, s)));
             names.push_back("shell." + c.name + " (" + c.risk + ")");
           }
           return fmt::format("  tools: {}\n", fmt::join(names, ", "));
         }});
}

} // namespace sreh::plugins
