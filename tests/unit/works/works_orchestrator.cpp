// The orchestrator and the Work actors on CAF's deterministic scheduler, over the kernel with a
// real SQLite store: a Work runs its template's goal, resolves when its done-criteria hold for
// their window of world time, announces an SLA breach once at its deadline (also after a
// restart of the orchestrator), applies the double-texting policies, and recovers a Work whose
// run was requested but not recorded.
#define CAF_SUITE works_orchestrator
#include "actors/works/orchestrator.hpp"
#include "config/templates/template_file.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/kernel_fixture.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

constexpr const char* incident = R"(template: inc
kind: incident
fields: {service: {type: string, required: true}}
sla: {acknowledge: 5m}
run: {goal: "fix {service}", labels: {service: "{service}"}}
done: "{service}.error_rate < 0.01 for 2m"
double_texting: DT
)";

struct works_fixture : kernel_fixture {
  event_hub hub;
  works_env_ptr env;
  orchestrator_actor orch;

  ~works_fixture() override {
    // Before the kernel fixture's run(): the Works' periodic timers would keep it going.
    if (orch)
      caf::anon_send_exit(orch, caf::exit_reason::user_shutdown);
    settle();
  }

  void start_works(const std::string& double_texting = "enqueue") {
    start_node();
    env = std::make_shared<works_env>();
    env->rt = rt;
    env->kernel = sup;
    env->log = logger("works");
    std::string text = incident;
    text.replace(text.find("DT"), 2, double_texting);
    auto t = config::load_template_string(text, "t.yaml");
    CAF_REQUIRE(t.has_value());
    env->templates.emplace(t->name, *t);
    orch = spawn_orchestrator(sys, env, hub);
    settle();
  }

  void restart_works() {
    caf::anon_send_exit(orch, caf::exit_reason::user_shutdown);
    settle();
    auto keep = env;
    orch = spawn_orchestrator(sys, keep, hub);
    settle();
  }

  work_reply ask(caf::message msg) {
    work_reply out;
    bool got = false;
    auto h = self->request(caf::actor_cast<caf::actor>(orch), caf::infinite, std::move(msg));
    settle();
    h.receive([&](work_reply& r) { out = std::move(r), got = true; },
              [&](caf::error& e) { CAF_FAIL("request failed: " << caf::to_string(e)); });
    CAF_REQUIRE(got);
    return out;
  }

  work_reply create(const std::string& fields, const std::string& key = {}) {
    return ask(caf::make_message(create_atom::value, new_work{"inc", fields, key, "tester", "{}"}));
  }

  work_reply command(const std::string& id, works::work_command c, const std::string& text = {}) {
    return ask(caf::make_message(command_atom::value, id, static_cast<std::int32_t>(c),
                                 std::string{"tester"}, text));
  }

  works::work load_work(const std::string& id) {
    auto w = db->get_work(id);
    CAF_REQUIRE(w && w->has_value());
    return **w;
  }

  std::vector<std::string> timeline(const std::string& id) { return event_kinds(id); }

  /// World state as a source would report it: `svc` with this error rate at world time `at_s`.
  void world(const std::string& svc, double error_rate, std::int64_t at_s) {
    auto snap = std::make_shared<world_snapshot>();
    world::entity e;
    e.id = svc;
    e.kind = "service";
    e.metrics["error_rate"] = error_rate;
    snap->entities.push_back(e);
    snap->world_at = at_s * 1'000'000;
    env->world->set(snap);
  }

  /// Lets the Works' timers (checks every 5 s) fire `n` times.
  void tick(int n = 1) {
    for (int i = 0; i < n; ++i) {
      advance_time(std::chrono::seconds(5));
      settle();
    }
  }

  std::size_t count(const std::vector<std::string>& xs, const std::string& x) {
    return static_cast<std::size_t>(std::count(xs.begin(), xs.end(), x));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(works_orchestrator_tests, works_fixture)

CAF_TEST(a work runs its goal and resolves when the criteria held for their window) {
  start_works();
  world("checkout", 0.3, 1000);
  auto rep = create(R"({"service":"checkout"})");
  CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
  CAF_CHECK(rep.created);
  const auto id = rep.w.id;
  settle();
  auto w = load_work(id);
  CAF_REQUIRE_EQUAL(w.runs.size(), 1u);
  auto run = load(w.runs[0]);
  CAF_CHECK_EQUAL(run.goal, std::string{"fix checkout"});
  CAF_CHECK_EQUAL(run.idempotency_key, id + "/run-1");
  CAF_CHECK(run.labels.find("\"work\":\"" + id + "\"") != std::string::npos);
  // The (empty) script ends the run at once; the store read of the check sees it.
  CAF_CHECK_EQUAL(to_string(run.state), std::string{"succeeded"});
  CAF_CHECK(w.active_run.empty());
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"mitigating"});
  tick();
  CAF_CHECK_EQUAL(to_string(load_work(id).state), std::string{"mitigating"}); // errors still high
  world("checkout", 0.001, 1060);
  tick();
  w = load_work(id);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"monitoring"});
  CAF_CHECK_EQUAL(w.holds_since, 1060 * 1'000'000);
  world("checkout", 0.002, 1150); // 90 s of world time: not yet 2 minutes
  tick();
  CAF_CHECK_EQUAL(to_string(load_work(id).state), std::string{"monitoring"});
  world("checkout", 0.002, 1181);
  tick();
  w = load_work(id);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"resolved"});
  CAF_CHECK_EQUAL(w.next_check, 0);
  auto kinds = timeline(id);
  CAF_CHECK_EQUAL(kinds.front(), std::string{"work.created"});
  CAF_CHECK_EQUAL(count(kinds, "work.run_started"), 1u);
  CAF_CHECK_EQUAL(count(kinds, "work.run_ended"), 1u);
  CAF_CHECK_EQUAL(count(kinds, "work.transition"), 3u);
  // A repeated idempotency key names the same Work and changes nothing.
  auto again = create(R"({"service":"checkout"})");
  CAF_CHECK(again.created); // no key: a second Work
  auto keyed = create(R"({"service":"cart"})", "k");
  auto keyed_again = create(R"({"service":"cart"})", "k");
  CAF_CHECK(!keyed_again.created);
  CAF_CHECK_EQUAL(keyed_again.w.id, keyed.w.id);
}

CAF_TEST(the SLA deadline fires once and again not after a restart) {
  start_works();
  auto rep = create(R"({"service":"checkout"})");
  const auto id = rep.w.id;
  settle();
  advance_time(std::chrono::minutes(4));
  settle();
  CAF_CHECK_EQUAL(count(timeline(id), "work.sla_breached"), 0u);
  advance_time(std::chrono::seconds(61)); // past the 5 min acknowledge deadline
  settle();
  CAF_CHECK_EQUAL(count(timeline(id), "work.sla_breached"), 1u);
  restart_works();
  tick(3);
  CAF_CHECK_EQUAL(count(timeline(id), "work.sla_breached"), 1u);
  auto acked = command(id, works::work_command::ack, "late");
  CAF_REQUIRE_EQUAL(acked.err.code, errc::ok);
  CAF_CHECK(acked.w.marks.acknowledged_at != 0);
}

CAF_TEST(an illegal transition is refused and changes nothing) {
  start_works();
  auto id = create(R"({"service":"checkout"})").w.id;
  settle();
  auto cancelled = command(id, works::work_command::cancel);
  CAF_REQUIRE_EQUAL(cancelled.err.code, errc::ok);
  const auto before = timeline(id);
  auto resolve = command(id, works::work_command::resolve);
  CAF_CHECK_EQUAL(resolve.err.code, errc::conflict);
  CAF_CHECK_EQUAL(resolve.err.message, std::string{"cannot resolve a work that is cancelled"});
  CAF_CHECK_EQUAL(timeline(id), before);
  auto missing = command("wrk_00000000000000000000000000", works::work_command::ack);
  CAF_CHECK_EQUAL(missing.err.code, errc::not_found);
  auto bad = create(R"({"service":3})");
  CAF_CHECK_EQUAL(bad.err.code, errc::invalid_argument);
  CAF_CHECK_EQUAL(bad.err.message, std::string{"fields.service: expected a string, got number"});
}

CAF_TEST(a second trigger while the run waits is queued under enqueue) {
  script({{"probe.write", R"({"action":"a"})"}});
  policy_.default_mode = policy::mode::review; // the run parks on an approval: it stays active
  start_works("enqueue");
  auto id = create(R"({"service":"checkout"})").w.id;
  settle();
  auto w = load_work(id);
  CAF_REQUIRE(!w.active_run.empty());
  auto t = command(id, works::work_command::trigger, "again");
  CAF_REQUIRE_EQUAL(t.err.code, errc::ok);
  CAF_CHECK_EQUAL(t.w.queued, 1);
  CAF_CHECK_EQUAL(t.w.runs.size(), 1u);
  // The first run ends (cancelled by hand): the queued one starts.
  auto c = ask_kernel(caf::make_message(cancel_atom::value, w.active_run, std::string{"tester"}));
  CAF_CHECK_EQUAL(c.err.code, errc::ok);
  tick();
  w = load_work(id);
  CAF_CHECK_EQUAL(w.runs.size(), 2u);
  CAF_CHECK_EQUAL(w.queued, 0);
}

CAF_TEST(a second trigger is refused under reject and interrupts under interrupt) {
  script({{"probe.write", R"({"action":"a"})"}});
  policy_.default_mode = policy::mode::review;
  start_works("reject");
  auto id = create(R"({"service":"checkout"})").w.id;
  settle();
  auto before = timeline(id);
  auto t = command(id, works::work_command::trigger);
  CAF_CHECK_EQUAL(t.err.code, errc::conflict);
  CAF_CHECK_EQUAL(timeline(id), before);
}

CAF_TEST(interrupt cancels the active run and starts a fresh one) {
  script({{"probe.write", R"({"action":"a"})"}});
  policy_.default_mode = policy::mode::review;
  start_works("interrupt");
  auto id = create(R"({"service":"checkout"})").w.id;
  settle();
  auto first = load_work(id).active_run;
  CAF_REQUIRE(!first.empty());
  auto t = command(id, works::work_command::trigger);
  CAF_REQUIRE_EQUAL(t.err.code, errc::ok);
  settle();
  tick();
  auto w = load_work(id);
  CAF_CHECK_EQUAL(to_string(load(first).state), std::string{"cancelled"});
  CAF_REQUIRE_EQUAL(w.runs.size(), 2u);
  CAF_CHECK_NOT_EQUAL(w.active_run, first);
}

CAF_TEST(a work whose run was requested but not recorded gets that same run after a restart) {
  start_works();
  auto id = create(R"({"service":"checkout"})").w.id;
  settle();
  auto w = load_work(id);
  CAF_REQUIRE_EQUAL(w.runs.size(), 1u);
  const auto run_id = w.runs[0];
  // Roll the Work back to before the run was recorded, as a crash between the two leaves it.
  w.runs.clear();
  w.active_run.clear();
  w.queued = 1;
  w.triggers = 0;
  std::vector<persistence::write_batch> b(1);
  b[0].update_work = w;
  CAF_REQUIRE(!db->commit(b).front().err);
  restart_works();
  w = load_work(id);
  CAF_REQUIRE_EQUAL(w.runs.size(), 1u);
  CAF_CHECK_EQUAL(w.runs[0], run_id); // the kernel found it by its idempotency key
  CAF_CHECK_EQUAL(w.queued, 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
