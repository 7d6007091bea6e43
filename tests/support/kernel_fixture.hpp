#pragma once
// A node's kernel on CAF's deterministic scheduler, over a real SQLite store in a temp dir, with
// instrumented tools. Include after caf_test.hpp.
//
// The test thread plays CAF's scheduler worker while an actor runs on it (consume_message), so a
// store call made from an actor's handler fails the test as it would on a node; the store pool
// runs its jobs inline (they play pool threads) and commits run inline (they play the writer).

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/gateway/scripted_provider.hpp"
#include "actors/kernel/kernel.hpp"
#include "actors/runtime/runtime.hpp"
#include "core/base/blocking.hpp"
#include "core/base/logger.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "persistence/store/commit_queue.hpp"

namespace sreh::actors {

/// What the instrumented tools saw.
struct probe_log {
  persistence::store* store = nullptr;
  int reads = 0;
  int intent_seen_before_effect = 0;
  int violations = 0;       // a side effect ran without its intent durable
  bool cannot_tell = false; // reconcile answers "unknown"
  std::map<std::string, int> writes;
  bool effect_holds = true;        // what probe.verified's post-condition check finds
  std::int64_t check_after_ms = 0; // probe.verified's post-condition delay
  int checks = 0;
  std::map<std::string, int> undone; // compensations, by the original call's key
  int broken_writes = 0;             // calls of probe.broken_write

  /// Called by every tool before its effect: the intent must be in the store, outcome-less.
  void check_intent(const tool_call& call) {
    // Instrumentation: the probes run inline in their run actor, and look at the store from
    // there as no real tool would.
    scoped_thread_kind instrumentation{thread_kind::other};
    auto steps = store->get_steps(call.run_id);
    if (!steps)
      return void(++violations);
    for (auto& s : *steps)
      if (s.idempotency_key == call.idempotency_key) {
        if (s.state == step_state::intent)
          ++intent_seen_before_effect;
        else
          ++violations;
        return;
      }
    ++violations;
  }
};

class probe_tool final : public tool {
 public:
  enum kind_t { read, write, fail, big, verified, broken_write };
  probe_tool(std::string name, kind_t k, std::shared_ptr<probe_log> log)
    : name_(std::move(name)), kind_(k), log_(std::move(log)) {
    schema_ = k == write || k == verified
                ? R"({"type":"object","properties":{"action":{"type":"string"}},)"
                  R"("additionalProperties":false})"
                : R"({"type":"object"})";
  }
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return name_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override {
    return kind_ == write || kind_ == broken_write ? risk_class::medium : risk_class::read_only;
  }
  bool idempotent() const override {
    return kind_ != write && kind_ != verified && kind_ != broken_write;
  }
  std::optional<postcondition> postcondition_for(std::string_view) const override {
    if (kind_ != verified)
      return std::nullopt;
    return postcondition{log_->check_after_ms, "the probe's effect holds"};
  }
  check_result check(std::string_view) override {
    ++log_->checks;
    return {log_->effect_holds, log_->effect_holds ? R"({"ok":true})" : R"({"ok":false})"};
  }
  bool compensable() const override { return kind_ == verified; }
  tool_result compensate(const tool_call& original) override {
    ++log_->undone[original.idempotency_key];
    return tool_result::success(R"({"undone":true})");
  }
  tool_result execute(const tool_call& call) override {
    log_->check_intent(call);
    switch (kind_) {
    case read:
      ++log_->reads;
      return tool_result::success(R"({"ok":true})");
    case write:
    case verified:
      ++log_->writes[call.idempotency_key];
      return tool_result::success(R"({"written":true})");
    case fail:
      return tool_result::failure("probe.fail: broken on purpose");
    case broken_write: // a mutating call that fails
      ++log_->broken_writes;
      return tool_result::failure("probe.broken_write: broken on purpose");
    case big:
      return tool_result::success(R"({"blob":")" + std::string(100000, 'x') + R"("})");
    }
    return {};
  }
  reconcile_result reconcile(std::string_view key) override {
    if (log_->cannot_tell)
      return {};
    auto i = log_->writes.find(std::string{key});
    if (i != log_->writes.end() && i->second > 0)
      return {reconcile_result::happened, R"({"written":true})"};
    return {reconcile_result::not_happened, "{}"};
  }

 private:
  std::string name_, schema_;
  kind_t kind_;
  std::shared_ptr<probe_log> log_;
};

/// Commits inline; can be told to fail the next N commits (the store "goes away").
class flaky_queue final : public persistence::commit_queue {
 public:
  explicit flaky_queue(persistence::store& s) : inner_(s) {}
  void submit(persistence::write_batch b, callback cb) override {
    if (hold) {
      held.emplace_back(std::move(b), std::move(cb));
      return;
    }
    if (pass_first > 0) {
      --pass_first;
    } else if (fail_next > 0) {
      --fail_next;
      ++failed;
      persistence::commit_result r;
      r.err = {errc::unavailable, "store away (test)"};
      return cb(std::move(r));
    }
    inner_.submit(std::move(b), std::move(cb));
  }
  /// Commits the held batches (in order), as the writer would when the disk answers.
  void release() {
    auto batches = std::move(held);
    held.clear();
    for (auto& [b, cb] : batches)
      inner_.submit(std::move(b), std::move(cb));
  }
  bool hold = false; // keep batches until release()
  std::vector<std::pair<persistence::write_batch, callback>> held;
  int pass_first = 0; // commits that go through before the failures start
  int fail_next = 0;
  int failed = 0;

 private:
  persistence::inline_commit_queue inner_;
};

/// A provider whose plan the test sets before starting the node.
class switchable_provider final : public model_provider {
 public:
  std::shared_ptr<model_provider> inner;
  bool throws = false;
  std::string name() const override { return throws ? "thrower" : "scripted"; }
  decision decide(const run_context& ctx) override {
    if (throws)
      throw std::runtime_error("out of ideas");
    return inner->decide(ctx);
  }
};

/// sreh's clock driven by CAF's virtual test clock, so that durable timers (approval deadlines)
/// and the timestamps they are compared with move together.
class virtual_clock final : public sreh::clock {
 public:
  explicit virtual_clock(caf::scheduler::test_coordinator& sched) : sched_(sched) {}
  timestamp_us now_us() const override {
    auto since = sched_.clock().now().time_since_epoch();
    return 1'700'000'000'000'000 +
           std::chrono::duration_cast<std::chrono::microseconds>(since).count();
  }

 private:
  caf::scheduler::test_coordinator& sched_;
};

struct kernel_fixture : test_coordinator_fixture<> {
  std::filesystem::path dir;
  persistence::store_ptr db;
  std::unique_ptr<flaky_queue> queue_ptr;
  flaky_queue& queue;
  tool_registry tools;
  config::node_config cfg;
  virtual_clock clk{sched};
  id_generator ids{clk};
  blocking_pool pool{1};
  blocking_pool store_pool{0}; // inline: its messages are under the test scheduler's control
  std::shared_ptr<probe_log> probes = std::make_shared<probe_log>();
  std::shared_ptr<switchable_provider> provider = std::make_shared<switchable_provider>();
  policy::policy_set policy_ = autonomous();
  runtime_ptr rt;
  kernel_actor sup;

  static policy::policy_set autonomous() {
    policy::policy_set p;
    p.default_mode = policy::mode::autonomous;
    return p;
  }

  static std::filesystem::path make_dir() {
    char tmpl[] = "/tmp/sreh-kernel-XXXXXX";
    return ::mkdtemp(tmpl);
  }

  static persistence::store_ptr open(const std::filesystem::path& d) {
    auto s = persistence::open_sqlite_store({(d / "sreh.db").string()});
    if (!s)
      CAF_FAIL("cannot open store: " << s.error().message);
    return std::move(*s);
  }

  kernel_fixture()
    : dir(make_dir()), db(open(dir)), queue_ptr(std::make_unique<flaky_queue>(*db)),
      queue(*queue_ptr) {
    (void)setup_logging("off", "text");
    probes->store = db.get();
    tools.add(std::make_shared<probe_tool>("probe.read", probe_tool::read, probes));
    tools.add(std::make_shared<probe_tool>("probe.write", probe_tool::write, probes));
    tools.add(std::make_shared<probe_tool>("probe.fail", probe_tool::fail, probes));
    tools.add(std::make_shared<probe_tool>("probe.big", probe_tool::big, probes));
    tools.add(std::make_shared<probe_tool>("probe.verified", probe_tool::verified, probes));
    tools.add(std::make_shared<probe_tool>("probe.broken_write", probe_tool::broken_write, probes));
    provider->inner = std::make_shared<scripted_provider>(std::vector<config::scripted_step>{});
    rt = std::shared_ptr<runtime>(new runtime{cfg,
                                              *db,
                                              queue,
                                              tools,
                                              provider,
                                              clk,
                                              ids,
                                              pool,
                                              store_pool,
                                              policy_,
                                              logger("kernel"),
                                              {},
                                              {},
                                              {}});
  }

  ~kernel_fixture() override {
    if (sup)
      caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
    run();
    sup = nullptr;
    pool.stop();
    std::filesystem::remove_all(dir);
  }

  /// One actor handles one message, on the test thread playing a scheduler worker.
  bool consume_message() override {
    scoped_thread_kind worker{thread_kind::scheduler};
    return sched.try_run_once();
  }

  void script(std::vector<config::scripted_step> steps) {
    provider->inner = std::make_shared<scripted_provider>(std::move(steps));
  }

  void throwing_provider() { provider->throws = true; }

  void start_node() {
    if (!sup) {
      sup = spawn_supervisor(sys, rt);
      run();
    }
  }

  goal_request make_request(std::string goal, std::int64_t max_result, std::int64_t max_steps,
                            std::string key) {
    goal_request req;
    req.goal = std::move(goal);
    req.submitter = "tester";
    req.idempotency_key = std::move(key);
    if (max_result > 0)
      req.budget.max_result_bytes = max_result;
    if (max_steps > 0)
      req.budget.max_steps = max_steps;
    return req;
  }

  kernel_reply submit(std::string goal, std::int64_t max_result = 0, std::int64_t max_steps = 0,
                      std::string key = {}) {
    start_node();
    return request<kernel_reply>(
      sup, submit_atom::value,
      make_request(std::move(goal), max_result, max_steps, std::move(key)));
  }

  /// Lets every actor handle its messages without firing timers (deadlines stay in the future).
  void settle() {
    while (consume_message()) {
    }
  }

  /// A request answered without firing timers.
  kernel_reply ask_kernel(caf::message msg) {
    start_node();
    kernel_reply out;
    bool got = false;
    auto h = self->request(caf::actor_cast<caf::actor>(sup), caf::infinite, std::move(msg));
    settle();
    h.receive([&](kernel_reply& r) { out = std::move(r), got = true; },
              [&](caf::error& e) { CAF_FAIL("request failed: " << caf::to_string(e)); });
    CAF_REQUIRE(got);
    return out;
  }

  kernel_reply vote(const std::string& approval_id, const std::string& by, const std::string& role,
                    bool approve, const std::string& comment = {}) {
    approval_vote v{by, role, approve, comment, clk.now_us()};
    return ask_kernel(caf::make_message(decide_atom::value, approval_id, v));
  }

  /// The (newest) approval of a run.
  approval waiting_approval(const std::string& run_id) {
    persistence::approval_filter f;
    f.run_id = run_id;
    auto page = db->list_approvals(f);
    CAF_REQUIRE(page && !page->approvals.empty());
    return page->approvals.front();
  }

  /// Commits what the queue holds and lets every actor run.
  void release_and_run() {
    queue.release();
    run();
  }

  kernel_reply cancel(const std::string& id) {
    start_node();
    return request<kernel_reply>(sup, cancel_atom::value, id, std::string{"tester"});
  }

  sreh::run load(const std::string& id) {
    auto r = db->get_run(id);
    CAF_REQUIRE(r && r->has_value());
    return **r;
  }

  std::vector<step> load_steps(const std::string& id) {
    auto s = db->get_steps(id);
    CAF_REQUIRE(s.has_value());
    return *s;
  }

  std::vector<event> events_of(const std::string& id) {
    persistence::event_filter f;
    f.run_id = id;
    auto e = db->read_events(f);
    CAF_REQUIRE(e.has_value());
    return *e;
  }

  std::vector<std::string> event_kinds(const std::string& id) {
    std::vector<std::string> out;
    for (auto& e : events_of(id))
      out.push_back(e.kind);
    return out;
  }

  /// Writes a running run whose step 1 has an intent but no outcome, as a crash leaves it.
  std::string seed_interrupted_run(const std::string& tool_name, const std::string& args) {
    sreh::run r;
    r.id = ids.next("run");
    r.goal = "interrupted";
    r.state = run_state::running;
    r.node_id = cfg.node_id;
    r.created_at = r.updated_at = clk.now_us();
    r.steps = 1;
    r.checkpoint = R"({"run_seq":3})";
    step s;
    s.run_id = r.id;
    s.n = 1;
    s.tool = tool_name;
    s.args = args;
    s.idempotency_key = r.id + ":1";
    s.started_at = clk.now_us();
    std::vector<persistence::write_batch> b(1);
    b[0].create = r;
    b[0].steps.push_back(s);
    auto res = db->commit(b);
    CAF_REQUIRE(!res.front().err);
    script({{tool_name, args}});
    return r.id;
  }
};

} // namespace sreh::actors
