#include "plugins/tools/testkit/testkit.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "actors/tools/tool_spec.hpp"
#include "core/base/json.hpp"

namespace sreh::plugins {

namespace {

using actors::reconcile_result;
using actors::risk_class;
using actors::tool_call;
using actors::tool_result;

/// The file test.record appends to, guarded: several runs call it at once.
struct record_file {
  std::string path;
  std::mutex mtx;
};

tool_result record(record_file& f, const std::string& key) {
  if (f.path.empty())
    return tool_result::failure("test.record: tools.record_file is not configured");
  std::lock_guard<std::mutex> lock{f.mtx};
  int fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return tool_result::failure(
      fmt::format("test.record: cannot open {}: {}", f.path, std::strerror(errno)));
  auto line = key + "\n";
  bool ok =
    ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok)
    return tool_result::failure(fmt::format("test.record: write to {} failed", f.path));
  return tool_result::success(fmt::format(R"({{"recorded":{}}})", json::quote(key)));
}

reconcile_result reconcile_record(record_file& f, std::string_view key) {
  std::lock_guard<std::mutex> lock{f.mtx};
  std::ifstream in{f.path};
  if (!in && !f.path.empty())
    return {reconcile_result::not_happened, "{}"}; // never written: nothing happened
  std::string line;
  while (std::getline(in, line))
    if (line == key)
      return {reconcile_result::happened, fmt::format(R"({{"recorded":{}}})", json::quote(key))};
  return {f.path.empty() ? reconcile_result::unknown : reconcile_result::not_happened, "{}"};
}

/// `can_tell`: whether reconcile reads the file back (test.record) or cannot tell, like a
/// remote system without an idempotency API (test.record_blind: in doubt after a crash).
actors::tool_spec record_tool(std::string name, std::shared_ptr<record_file> f, bool can_tell) {
  actors::tool_spec t{
    .name = std::move(name),
    .description = "Records its idempotency key in a file (a mutating action).",
    .schema = R"({"type":"object","properties":{"action":{"type":"string","maxLength":200}},)"
              R"("additionalProperties":false})",
    .risk = risk_class::medium,
    .blocking = true,
    .run = [f](const rapidjson::Value&,
               const actors::tool_context& c) { return record(*f, c.call.idempotency_key); },
  };
  t.reconcile = [f, can_tell](std::string_view key) {
    return can_tell ? reconcile_record(*f, key) : reconcile_result{reconcile_result::unknown, "{}"};
  };
  return t;
}

/// A mutating action that touches nothing outside the process: it records its key in memory
/// (and reconciles from there). For benchmarks of approvals and parked runs.
actors::tool_spec mutate_tool() {
  struct keys {
    std::mutex mtx;
    std::unordered_set<std::string> done;
  };
  auto k = std::make_shared<keys>();
  actors::tool_spec t{
    .name = "test.mutate",
    .description = "A mutating action recorded in memory (benchmarks).",
    .schema = R"({"type":"object","properties":{"target":{"type":"string","maxLength":200}},)"
              R"("additionalProperties":false})",
    .risk = risk_class::medium,
    .run =
      [k](const rapidjson::Value&, const actors::tool_context& c) {
        std::lock_guard<std::mutex> lock{k->mtx};
        k->done.insert(c.call.idempotency_key);
        return tool_result::success(R"({"mutated":true})");
      },
  };
  t.reconcile = [k](std::string_view key) {
    std::lock_guard<std::mutex> lock{k->mtx};
    return reconcile_result{k->done.count(std::string{key}) ? reconcile_result::happened
                                                            : reconcile_result::not_happened,
                            R"({"mutated":true})"};
  };
  return t;
}

tool_result echo(const rapidjson::Value&, const actors::tool_context& c) {
  return tool_result::success(fmt::format(
    R"({{"ok":true,"echo":{},"status":"healthy","checked":["cpu","memory","latency"],)"
    R"("note":"trivial tool result used by tests and benchmarks, about two hundred bytes"}})",
    c.call.args));
}

tool_result sleep_ms(const rapidjson::Value& args, const actors::tool_context& c) {
  auto ms = args["ms"].GetInt64();
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (c.call.cancel.stop_requested())
      return tool_result::failure("test.sleep: cancelled");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return tool_result::success(fmt::format(R"({{"slept_ms":{}}})", ms));
}

tool_result fail(const rapidjson::Value& args, const actors::tool_context&) {
  std::string msg = "test.fail: failed as asked";
  if (args.HasMember("message") && args["message"].IsString())
    msg = args["message"].GetString();
  return tool_result::failure(msg);
}

} // namespace

void add_testkit_tools(actors::tool_registry& reg, const config::tool_config& cfg) {
  auto file = std::make_shared<record_file>();
  file->path = cfg.record_file;
  actors::add_tools(
    reg, {{.name = "test.echo",
           .description = "Returns its arguments in a ~200-byte JSON object.",
           .schema = R"({"type":"object"})",
           .run = echo},
          record_tool("test.record", file, true),
          record_tool("test.record_blind", file, false),
          {.name = "test.sleep",
           .description = "Sleeps, stopping early when the run is cancelled.",
           .schema = R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,)"
                     R"("maximum":600000}},"required":["ms"],"additionalProperties":false})",
           .blocking = true,
           .run = sleep_ms},
          mutate_tool(),
          {.name = "test.fail",
           .description = "Always fails.",
           .schema = R"({"type":"object","properties":{"message":{"type":"string"}}})",
           .run = fail}});
}

} // namespace sreh::plugins
