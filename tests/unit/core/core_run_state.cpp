#define CAF_SUITE core_run_state
#include <caf/test/unit_test.hpp>

#include <optional>
#include <string>

#include "core/model/run.hpp"

using namespace sreh;

namespace {

constexpr run_state all_states[] = {run_state::pending,   run_state::running, run_state::waiting,
                                    run_state::succeeded, run_state::failed,  run_state::cancelled};
constexpr run_input all_inputs[] = {run_input::start,   run_input::wait, run_input::resume,
                                    run_input::succeed, run_input::fail, run_input::cancel,
                                    run_input::recover};

/// Expected next state per [state][input]; "" = conflict. Written out by hand from DESIGN.md.
const char* const expected_table[6][7] = {
  //            start      wait       resume     succeed      fail      cancel       recover
  /*pending*/ {"running", "", "", "", "failed", "cancelled", "pending"},
  /*running*/ {"", "waiting", "", "succeeded", "failed", "cancelled", "running"},
  /*waiting*/ {"", "", "running", "", "failed", "cancelled", "waiting"},
  /*succeeded*/ {"", "", "", "", "", "", ""},
  /*failed*/ {"", "", "", "", "", "", ""},
  /*cancelled*/ {"", "", "", "", "", "", ""},
};

} // namespace

CAF_TEST(every state and input matches the table) {
  int checked = 0;
  for (std::size_t s = 0; s < 6; ++s) {
    for (std::size_t i = 0; i < 7; ++i) {
      auto from = all_states[s];
      auto in = all_inputs[i];
      std::string want = expected_table[s][i];
      auto got = transition(from, in);
      CAF_MESSAGE(to_string(from) << " + " << to_string(in));
      if (want.empty()) {
        CAF_CHECK(!got.has_value());
        if (!got) {
          CAF_CHECK(got.error().code == errc::conflict);
          CAF_CHECK_EQUAL(got.error().message,
                          std::string("run is ") + to_string(from) + "; cannot " + to_string(in));
        }
      } else {
        CAF_CHECK(got.has_value());
        if (got)
          CAF_CHECK_EQUAL(std::string(to_string(*got)), want);
      }
      ++checked;
    }
  }
  CAF_CHECK_EQUAL(checked, 42);
}

CAF_TEST(terminal states) {
  CAF_CHECK(!is_terminal(run_state::pending));
  CAF_CHECK(!is_terminal(run_state::running));
  CAF_CHECK(!is_terminal(run_state::waiting));
  CAF_CHECK(is_terminal(run_state::succeeded));
  CAF_CHECK(is_terminal(run_state::failed));
  CAF_CHECK(is_terminal(run_state::cancelled));
}

CAF_TEST(conflict message names state and input) {
  auto r = transition(run_state::succeeded, run_input::cancel);
  CAF_CHECK(!r.has_value());
  if (r)
    return;
  CAF_CHECK_EQUAL(r.error().message, std::string("run is succeeded; cannot cancel"));
  CAF_CHECK_EQUAL(std::string(to_string(r.error().code)), std::string("conflict"));
}

CAF_TEST(enum names round trip) {
  for (auto s : all_states)
    CAF_CHECK(parse_run_state(to_string(s)) == std::optional{s});
  for (auto w : {wait_reason::none, wait_reason::approval, wait_reason::timer, wait_reason::model,
                 wait_reason::tool})
    CAF_CHECK(parse_wait_reason(to_string(w)) == std::optional{w});
  CAF_CHECK_EQUAL(std::string(to_string(run_state::cancelled)), std::string("cancelled"));
  CAF_CHECK_EQUAL(std::string(to_string(wait_reason::approval)), std::string("approval"));
  CAF_CHECK(!parse_run_state("Running").has_value());
  CAF_CHECK(!parse_run_state("").has_value());
  CAF_CHECK(!parse_wait_reason("approvals").has_value());
}
