// The Work lifecycle (core/works/lifecycle.hpp): commands, runs, done-criteria with their
// window of world time, SLA breaches announced once, and what each double-texting policy does
// with a second trigger.
#define CAF_SUITE work_lifecycle
#include <caf/test/unit_test.hpp>

#include <string>

#include "config/templates/template_file.hpp"
#include "core/works/lifecycle.hpp"

using namespace sreh;
using namespace sreh::works;

namespace {

constexpr timestamp_us sec = 1'000'000;

work_template make_template(const std::string& double_texting = "enqueue",
                            const std::string& done = "{svc}.error_rate < 0.01 for 1m") {
  auto t = config::load_template_string("template: t\nkind: incident\n"
                                        "fields: {svc: {type: string, required: true}}\n"
                                        "sla: {acknowledge: 5m, resolve: 1h}\n"
                                        "run: {goal: \"fix {svc}\"}\n"
                                        "done: \"" +
                                          done + "\"\ndouble_texting: " + double_texting + "\n",
                                        "t.yaml");
  CAF_REQUIRE(t.has_value());
  return *t;
}

work make_work(const work_template& t) {
  work w;
  w.id = "wrk_00000000000000000000000000";
  w.template_name = t.name;
  w.created_at = w.marks.created_at = 100 * sec;
  return w;
}

std::vector<std::string> kinds(const effects& fx) {
  std::vector<std::string> out;
  for (const auto& e : fx.entries)
    out.push_back(e.kind);
  return out;
}

/// A made Work whose first run `run_a` is active.
work running(const work_template& t) {
  auto w = make_work(t);
  auto fx = on_created(w, t);
  CAF_REQUIRE(fx.start_run);
  (void)on_run_started(w, "run_a", 1, true, 101 * sec);
  return w;
}

} // namespace

CAF_TEST(a new work queues its first run and starting it moves it to mitigating) {
  auto t = make_template();
  auto w = make_work(t);
  auto fx = on_created(w, t);
  CAF_CHECK_EQUAL(kinds(fx), std::vector<std::string>{"work.created"});
  CAF_CHECK(fx.start_run);
  CAF_CHECK_EQUAL(w.queued, 1);
  CAF_CHECK_EQUAL(run_key(w, 1), w.id + "/run-1");
  auto started = on_run_started(w, "run_a", 1, true, 101 * sec);
  CAF_CHECK_EQUAL(kinds(started),
                  (std::vector<std::string>{"work.run_started", "work.transition"}));
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"mitigating"});
  CAF_CHECK_EQUAL(w.active_run, "run_a");
  CAF_CHECK_EQUAL(w.queued, 0);
  CAF_CHECK_EQUAL(w.triggers, 1);
  // Started again after a crash (the kernel found the run by its key): recorded once.
  (void)on_run_started(w, "run_a", 1, false, 102 * sec);
  CAF_CHECK_EQUAL(w.runs.size(), 1u);
}

CAF_TEST(the criteria must hold for their window of world time with no run active) {
  auto t = make_template();
  auto w = running(t);
  // Holding while the run is still active: monitoring, not yet resolved.
  auto fx = on_criteria(w, true, 1000 * sec, 60, "", 200 * sec);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"monitoring"});
  CAF_CHECK_EQUAL(w.holds_since, 1000 * sec);
  CAF_CHECK_EQUAL(w.marks.mitigated_at, 200 * sec);
  (void)on_run_ended(w, "run_a", "succeeded", 201 * sec);
  fx = on_criteria(w, true, 1059 * sec, 60, "", 202 * sec);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"monitoring"}); // 59 s of 60
  CAF_CHECK(fx.entries.empty());
  fx = on_criteria(w, true, 1060 * sec, 60, "", 203 * sec);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"resolved"});
  CAF_CHECK_EQUAL(w.marks.resolved_at, 203 * sec);
  CAF_CHECK_EQUAL(next_check(w, t, 5 * sec, 204 * sec), 0);
}

CAF_TEST(criteria that stop holding move the work back and restart the window) {
  auto t = make_template();
  auto w = running(t);
  (void)on_run_ended(w, "run_a", "succeeded", 150 * sec);
  (void)on_criteria(w, true, 1000 * sec, 60, "", 151 * sec);
  auto fx = on_criteria(w, false, 1030 * sec, 60, "", 152 * sec);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"mitigating"});
  CAF_CHECK_EQUAL(w.holds_since, 0);
  (void)on_criteria(w, true, 1040 * sec, 60, "", 153 * sec);
  (void)on_criteria(w, true, 1070 * sec, 60, "", 154 * sec);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"monitoring"}); // 30 s since 1040
  // An error (an unknown entity) is recorded once, not on every check.
  auto e1 = on_criteria(w, sreh::error{errc::not_found, "entity 'x'"}, 1080 * sec, 60, "", 155);
  CAF_CHECK_EQUAL(kinds(e1), std::vector<std::string>{"work.criteria"});
  auto e2 =
    on_criteria(w, sreh::error{errc::not_found, "entity 'x'"}, 1090 * sec, 60, "entity 'x'", 156);
  CAF_CHECK(e2.entries.empty());
}

CAF_TEST(no window resolves as soon as the criteria hold) {
  auto t = make_template("enqueue", "{svc}.error_rate < 0.01");
  auto w = running(t);
  (void)on_run_ended(w, "run_a", "succeeded", 150 * sec);
  auto fx = on_criteria(w, true, 1000 * sec, 0, "", 151 * sec);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"resolved"});
  CAF_CHECK_EQUAL(kinds(fx), (std::vector<std::string>{"work.transition", "work.transition"}));
}

CAF_TEST(commands follow the state machine and an illegal one changes nothing) {
  auto t = make_template();
  auto w = make_work(t);
  auto ack = apply_command(w, t, work_command::ack, "ana", "on it", 110 * sec);
  CAF_REQUIRE(ack.has_value());
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"acknowledged"});
  CAF_CHECK_EQUAL(w.marks.acknowledged_at, 110 * sec);
  auto cancel = apply_command(w, t, work_command::cancel, "ana", "", 120 * sec);
  CAF_REQUIRE(cancel.has_value());
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"cancelled"});
  const auto before = w.updated_at;
  auto resolve = apply_command(w, t, work_command::resolve, "ana", "", 130 * sec);
  CAF_REQUIRE(!resolve.has_value());
  CAF_CHECK_EQUAL(resolve.error().code, errc::conflict);
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"cancelled"});
  CAF_CHECK_EQUAL(w.updated_at, before);
  auto trigger = apply_command(w, t, work_command::trigger, "ana", "", 130 * sec);
  CAF_CHECK_EQUAL(trigger.error().code, errc::conflict);
  auto reopen = apply_command(w, t, work_command::reopen, "ana", "not fixed", 140 * sec);
  CAF_REQUIRE(reopen.has_value());
  CAF_CHECK_EQUAL(to_string(w.state), std::string{"open"});
  CAF_CHECK_EQUAL(w.marks.resolved_at, 0);
  auto empty = apply_command(w, t, work_command::comment, "ana", "", 150 * sec);
  CAF_CHECK_EQUAL(empty.error().code, errc::invalid_argument);
  auto comment = apply_command(w, t, work_command::comment, "ana", "paged db team", 150 * sec);
  CAF_CHECK_EQUAL(kinds(*comment), std::vector<std::string>{"work.comment"});
}

CAF_TEST(cancelling a work cancels its active run) {
  auto t = make_template();
  auto w = running(t);
  auto fx = apply_command(w, t, work_command::cancel, "ana", "", 150 * sec);
  CAF_REQUIRE(fx.has_value());
  CAF_CHECK(fx->cancel_run);
  CAF_CHECK_EQUAL(w.queued, 0);
}

CAF_TEST(a second trigger does what the double texting policy says) {
  auto second = [](const std::string& policy) {
    auto t = make_template(policy);
    auto w = running(t);
    auto fx = apply_command(w, t, work_command::trigger, "bob", "again", 150 * sec);
    std::string out = fx
                        ? std::string{fx->start_run ? "start " : ""} +
                            (fx->cancel_run ? "cancel " : "") + "queued=" + std::to_string(w.queued)
                        : "refused: " + fx.error().message;
    return out;
  };
  CAF_CHECK_EQUAL(second("enqueue"), "queued=1");
  CAF_CHECK_EQUAL(second("join"), "queued=0");
  CAF_CHECK_EQUAL(second("interrupt"), "cancel queued=1");
  CAF_CHECK_EQUAL(second("reject"),
                  "refused: work wrk_00000000000000000000000000 has an active run (run_a) and its "
                  "template's double_texting is reject");
  // The queued run starts when the active one ends.
  auto t = make_template("enqueue");
  auto w = running(t);
  (void)apply_command(w, t, work_command::trigger, "bob", "", 150 * sec);
  auto ended = on_run_ended(w, "run_a", "failed", 160 * sec);
  CAF_CHECK(ended.start_run);
  CAF_CHECK(w.active_run.empty());
  // A notice about another run changes nothing.
  auto other = on_run_ended(w, "run_zzz", "failed", 161 * sec);
  CAF_CHECK(other.entries.empty());
  // With no run active a trigger starts one at once, whatever the policy.
  auto j = make_template("reject");
  auto idle = running(j);
  (void)on_run_ended(idle, "run_a", "succeeded", 160 * sec);
  auto fx = apply_command(idle, j, work_command::trigger, "bob", "", 170 * sec);
  CAF_REQUIRE(fx.has_value());
  CAF_CHECK(fx->start_run);
}

CAF_TEST(each SLA breach is announced once and the next check follows the clocks) {
  auto t = make_template();
  auto w = make_work(t); // created at 100 s: acknowledge due at 400 s, resolve at 3700 s
  CAF_CHECK_EQUAL(next_check(w, t, 5 * sec, 200 * sec), 400 * sec);
  CAF_CHECK(on_sla(w, t.sla, 399 * sec).entries.empty());
  auto fx = on_sla(w, t.sla, 401 * sec);
  CAF_CHECK_EQUAL(kinds(fx), std::vector<std::string>{"work.sla_breached"});
  CAF_CHECK(on_sla(w, t.sla, 500 * sec).entries.empty());
  CAF_CHECK_EQUAL(next_check(w, t, 5 * sec, 500 * sec), 3700 * sec);
  // Mitigating: the criteria are checked every 5 s as well.
  (void)on_created(w, t);
  (void)on_run_started(w, "run_a", 1, true, 600 * sec);
  CAF_CHECK_EQUAL(next_check(w, t, 5 * sec, 600 * sec), 605 * sec);
}
