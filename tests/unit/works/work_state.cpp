#define CAF_SUITE work_state
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/works/work.hpp"

using namespace sreh;
using namespace sreh::works;

namespace {

/// The state after `inputs` from `from`, or the first error's message.
std::string walk(work_state from, std::initializer_list<work_input> inputs) {
  auto s = from;
  for (auto in : inputs) {
    auto r = transition(s, in);
    if (!r)
      return r.error().message;
    s = *r;
  }
  return to_string(s);
}

constexpr timestamp_us sec = 1'000'000;

} // namespace

CAF_TEST(an incident goes open to resolved through monitoring) {
  using I = work_input;
  CAF_CHECK_EQUAL(
    walk(work_state::open, {I::acknowledge, I::start_run, I::criteria_hold, I::criteria_met}),
    "resolved");
  // a run may start before anybody acknowledges; the acknowledgement then moves nothing
  CAF_CHECK_EQUAL(walk(work_state::open, {I::start_run, I::acknowledge}), "mitigating");
  // criteria that stop holding send it back to mitigating
  CAF_CHECK_EQUAL(walk(work_state::mitigating, {I::criteria_hold, I::criteria_lapse}),
                  "mitigating");
  CAF_CHECK_EQUAL(walk(work_state::resolved, {I::reopen}), "open");
  CAF_CHECK_EQUAL(walk(work_state::cancelled, {I::reopen}), "open");
}

CAF_TEST(illegal transitions are conflicts naming the state and the input) {
  using I = work_input;
  auto r = transition(work_state::cancelled, I::resolve);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(r.error().code, errc::conflict);
  CAF_CHECK_EQUAL(r.error().message, std::string{"cannot resolve a work that is cancelled"});
  CAF_CHECK_EQUAL(walk(work_state::open, {I::criteria_met}),
                  "cannot criteria_met a work that is open");
  CAF_CHECK_EQUAL(walk(work_state::monitoring, {I::start_run}),
                  "cannot start_run a work that is monitoring");
  CAF_CHECK_EQUAL(walk(work_state::open, {I::reopen}), "cannot reopen a work that is open");
  CAF_CHECK_EQUAL(walk(work_state::resolved, {I::cancel}), "cannot cancel a work that is resolved");
}

CAF_TEST(every state and input has a name that parses back) {
  for (auto s : {work_state::open, work_state::acknowledged, work_state::mitigating,
                 work_state::monitoring, work_state::resolved, work_state::cancelled})
    CAF_CHECK(parse_work_state(to_string(s)) == s);
  CAF_CHECK(!parse_work_state("closed"));
  CAF_CHECK(parse_double_texting("interrupt") == double_texting::interrupt);
  CAF_CHECK(!parse_double_texting("ignore"));
}

CAF_TEST(a trigger while a run is active does what the policy says) {
  auto active = work_state::mitigating;
  CAF_CHECK_EQUAL(to_string(on_trigger(double_texting::enqueue, true, active)),
                  std::string{"queue"});
  CAF_CHECK_EQUAL(to_string(on_trigger(double_texting::join, true, active)), std::string{"attach"});
  CAF_CHECK_EQUAL(to_string(on_trigger(double_texting::interrupt, true, active)),
                  std::string{"replace"});
  CAF_CHECK_EQUAL(to_string(on_trigger(double_texting::reject, true, active)),
                  std::string{"refuse"});
  // no active run: every policy starts one; a closed work refuses whatever the policy
  for (auto p : {double_texting::enqueue, double_texting::join, double_texting::interrupt,
                 double_texting::reject}) {
    CAF_CHECK(on_trigger(p, false, work_state::open) == trigger_action::start);
    CAF_CHECK(on_trigger(p, false, work_state::resolved) == trigger_action::refuse);
  }
}

CAF_TEST(sla clocks stop when met and breach when they run past due) {
  sla_policy p{5 * 60 * 1000, 30 * 60 * 1000, 0};
  sla_marks m;
  m.created_at = 1000 * sec;
  auto at = [&](timestamp_us t) { return sla_clocks(p, m, t); };
  auto before = at(m.created_at + 60 * sec);
  CAF_REQUIRE_EQUAL(before.size(), 2u); // resolve has no deadline
  CAF_CHECK(!before[0].breached && !before[1].breached);
  CAF_CHECK(next_sla_deadline(p, m, m.created_at + 60 * sec) == m.created_at + 300 * sec);
  // at the acknowledge deadline itself the clock is breached, and the next timer is mitigate's
  auto due = m.created_at + 300 * sec;
  CAF_CHECK(at(due)[0].breached);
  CAF_CHECK(next_sla_deadline(p, m, due) == m.created_at + 1800 * sec);
  // acknowledged in time: that clock stops and never breaches
  m.acknowledged_at = m.created_at + 120 * sec;
  CAF_CHECK(!at(m.created_at + 3600 * sec)[0].breached);
  CAF_CHECK(at(m.created_at + 3600 * sec)[1].breached); // mitigation ran past due
  // resolving stops every running clock
  m.resolved_at = m.created_at + 600 * sec;
  CAF_CHECK(!at(m.created_at + 3600 * sec)[1].breached);
  CAF_CHECK(!next_sla_deadline(p, m, m.created_at + 700 * sec));
}
