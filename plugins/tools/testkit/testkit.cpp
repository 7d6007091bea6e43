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

#include "core/base/json.hpp"

namespace sreh::plugins {

namespace {

using actors::reconcile_result;
using actors::risk_class;
using actors::tool_call;
using actors::tool_result;

/// The boilerplate every testkit tool shares.
class simple_tool : public actors::tool {
 public:
  simple_tool(std::string name, std::string description, std::string schema, risk_class risk,
              bool idempotent, bool blocking)
    : name_(std::move(name)), description_(std::move(description)), schema_(std::move(schema)),
      risk_(risk), idempotent_(idempotent), blocking_(blocking) {}
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override { return risk_; }
  bool idempotent() const override { return idempotent_; }
  bool blocking() const override { return blocking_; }

 private:
  std::string name_, description_, schema_;
  risk_class risk_;
  bool idempotent_, blocking_;
};

class echo_tool final : public simple_tool {
 public:
  echo_tool()
    : simple_tool("test.echo", "Returns its arguments in a ~200-byte JSON object.",
                  R"({"type":"object"})", risk_class::read_only, true, false) {}
  tool_result execute(const tool_call& call) override {
    return tool_result::success(fmt::format(
      R"({{"ok":true,"echo":{},"status":"healthy","checked":["cpu","memory","latency"],)"
      R"("note":"trivial tool result used by tests and benchmarks, about two hundred bytes"}})",
      call.args));
  }
};

class record_tool final : public simple_tool {
 public:
  /// `can_tell`: whether reconcile reads the file back (test.record) or cannot tell, like a
  /// remote system without an idempotency API (test.record_blind: in doubt after a crash).
  record_tool(std::string name, std::string file, bool can_tell)
    : simple_tool(std::move(name), "Records its idempotency key in a file (a mutating action).",
                  R"({"type":"object","properties":{"action":{"type":"string","maxLength":200}},)"
                  R"("additionalProperties":false})",
                  risk_class::medium, false, true),
      file_(std::move(file)), can_tell_(can_tell) {}

  tool_result execute(const tool_call& call) override {
    if (file_.empty())
      return tool_result::failure("test.record: tools.record_file is not configured");
    std::lock_guard<std::mutex> lock{mtx_};
    int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
      return tool_result::failure(
        fmt::format("test.record: cannot open {}: {}", file_, std::strerror(errno)));
    auto line = call.idempotency_key + "\n";
    bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
              ::fsync(fd) == 0;
    ::close(fd);
    if (!ok)
      return tool_result::failure(fmt::format("test.record: write to {} failed", file_));
    return tool_result::success(
      fmt::format(R"({{"recorded":{}}})", json::quote(call.idempotency_key)));
  }

  reconcile_result reconcile(std::string_view key) override {
    if (!can_tell_)
      return {reconcile_result::unknown, "{}"};
    std::lock_guard<std::mutex> lock{mtx_};
    std::ifstream in{file_};
    if (!in && !file_.empty())
      return {reconcile_result::not_happened, "{}"}; // never written: nothing happened
    std::string line;
    while (std::getline(in, line))
      if (line == key)
        return {reconcile_result::happened, fmt::format(R"({{"recorded":{}}})", json::quote(key))};
    return {file_.empty() ? reconcile_result::unknown : reconcile_result::not_happened, "{}"};
  }

 private:
  std::string file_;
  bool can_tell_;
  std::mutex mtx_;
};

/// A mutating action that touches nothing outside the process: it records its key in memory
/// (and reconciles from there). For benchmarks of approvals and parked runs.
class mutate_tool final : public simple_tool {
 public:
  mutate_tool()
    : simple_tool("test.mutate", "A mutating action recorded in memory (benchmarks).",
                  R"({"type":"object","properties":{"target":{"type":"string","maxLength":200}},)"
                  R"("additionalProperties":false})",
                  risk_class::medium, false, false) {}

  tool_result execute(const tool_call& call) override {
    std::lock_guard<std::mutex> lock{mtx_};
    done_.insert(call.idempotency_key);
    return tool_result::success(R"({"mutated":true})");
  }

  reconcile_result reconcile(std::string_view key) override {
    std::lock_guard<std::mutex> lock{mtx_};
    return {done_.count(std::string{key}) ? reconcile_result::happened
                                          : reconcile_result::not_happened,
            R"({"mutated":true})"};
  }

 private:
  std::mutex mtx_;
  std::unordered_set<std::string> done_;
};

class sleep_tool final : public simple_tool {
 public:
  sleep_tool()
    : simple_tool("test.sleep", "Sleeps, stopping early when the run is cancelled.",
                  R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,)"
                  R"("maximum":600000}},"required":["ms"],"additionalProperties":false})",
                  risk_class::read_only, true, true) {}
  tool_result execute(const tool_call& call) override {
    auto doc = json::parse(call.args);
    auto ms = (*doc)["ms"].GetInt64();
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (call.cancel.stop_requested())
        return tool_result::failure("test.sleep: cancelled");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return tool_result::success(fmt::format(R"({{"slept_ms":{}}})", ms));
  }
};

class fail_tool final : public simple_tool {
 public:
  fail_tool()
    : simple_tool("test.fail", "Always fails.",
                  R"({"type":"object","properties":{"message":{"type":"string"}}})",
                  risk_class::read_only, true, false) {}
  tool_result execute(const tool_call& call) override {
    auto doc = json::parse(call.args);
    std::string msg = "test.fail: failed as asked";
    if (doc && doc->IsObject() && doc->HasMember("message") && (*doc)["message"].IsString())
      msg = (*doc)["message"].GetString();
    return tool_result::failure(msg);
  }
};

} // namespace

void add_testkit_tools(actors::tool_registry& reg, const config::tool_config& cfg) {
  reg.add(std::make_shared<echo_tool>());
  reg.add(std::make_shared<record_tool>("test.record", cfg.record_file, true));
  reg.add(std::make_shared<record_tool>("test.record_blind", cfg.record_file, false));
  reg.add(std::make_shared<sleep_tool>());
  reg.add(std::make_shared<mutate_tool>());
  reg.add(std::make_shared<fail_tool>());
}

} // namespace sreh::plugins
