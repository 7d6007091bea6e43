#define CAF_SUITE approval_votes
#include <string>

#include "core/model/approval.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;

namespace {

approval pending(std::int64_t required = 1, std::vector<std::string> roles = {"approver"}) {
  approval a;
  a.id = "apr_x";
  a.run_id = "run_1";
  a.requester = "alice";
  a.required = required;
  a.roles = std::move(roles);
  return a;
}

approval_vote vote(std::string by, bool approve, std::string role = "approver",
                   timestamp_us at = 100) {
  approval_vote v;
  v.by = std::move(by);
  v.role = std::move(role);
  v.approve = approve;
  v.at = at;
  return v;
}

std::string state(const approval& a) {
  return to_string(a.state);
}

std::string code(const error& e) {
  return to_string(e.code);
}

} // namespace

CAF_TEST(kinds states and roles) {
  for (auto k : {approval_kind::action, approval_kind::in_doubt})
    CAF_CHECK(parse_approval_kind(to_string(k)) == k);
  for (auto s : {approval_state::pending, approval_state::approved, approval_state::denied,
                 approval_state::expired})
    CAF_CHECK(parse_approval_state(to_string(s)) == s);
  CAF_CHECK(!parse_approval_kind("maybe"));
  CAF_CHECK(!parse_approval_state("Pending"));
  CAF_CHECK_EQUAL(std::string{to_string(approval_kind::in_doubt)}, "in_doubt");
  CAF_CHECK_EQUAL(role_rank("viewer"), 1);
  CAF_CHECK_EQUAL(role_rank("operator"), 2);
  CAF_CHECK_EQUAL(role_rank("approver"), 3);
  CAF_CHECK_EQUAL(role_rank("admin"), 4);
  CAF_CHECK_EQUAL(role_rank("root"), 0);
  CAF_CHECK_EQUAL(role_rank(""), 0);
}

CAF_TEST(the requester can never approve its own action) {
  auto a = pending();
  auto err = apply_vote(a, vote("alice", true, "admin"));
  CAF_CHECK_EQUAL(code(err), "forbidden");
  CAF_CHECK_EQUAL(err.message, "you submitted this run; another person must decide");
  CAF_CHECK_EQUAL(state(a), "pending");
  CAF_CHECK(a.votes.empty());
  // Nor deny it: the decision belongs to someone else.
  CAF_CHECK_EQUAL(code(apply_vote(a, vote("alice", false, "admin"))), "forbidden");
  CAF_CHECK(a.votes.empty());
}

CAF_TEST(a role below every allowed role is refused) {
  auto a = pending(1, {"approver", "admin"});
  auto err = apply_vote(a, vote("bob", true, "operator"));
  CAF_CHECK_EQUAL(code(err), "forbidden");
  CAF_CHECK_EQUAL(err.message, "role operator cannot decide this approval (needs approver)");
  CAF_CHECK_EQUAL(code(apply_vote(a, vote("bob", true, "superuser"))), "forbidden");
  CAF_CHECK_EQUAL(state(a), "pending");
  CAF_CHECK(a.votes.empty());
  // A higher role than required may decide.
  CAF_CHECK(!apply_vote(a, vote("carol", true, "admin")));
  CAF_CHECK_EQUAL(state(a), "approved");
  // With no roles named, approvers are needed (never open to everyone).
  auto b = pending(1, {});
  CAF_CHECK_EQUAL(apply_vote(b, vote("bob", true, "operator")).message,
                  "role operator cannot decide this approval (needs approver)");
  // An escalated approval names admin only.
  auto c = pending(1, {"admin"});
  CAF_CHECK_EQUAL(apply_vote(c, vote("bob", true, "approver")).message,
                  "role approver cannot decide this approval (needs admin)");
}

CAF_TEST(two of n needs two distinct identities) {
  auto a = pending(2);
  CAF_CHECK(!apply_vote(a, vote("bob", true, "approver", 100)));
  CAF_CHECK_EQUAL(state(a), "pending");
  CAF_CHECK_EQUAL(a.decided_at, 0);
  CAF_CHECK(!apply_vote(a, vote("carol", true, "approver", 200)));
  CAF_CHECK_EQUAL(state(a), "approved");
  CAF_CHECK_EQUAL(a.decided_at, 200);
  CAF_CHECK_EQUAL(a.votes.size(), 2u);
}

CAF_TEST(the same identity twice changes nothing) {
  auto a = pending(2);
  CAF_CHECK(!apply_vote(a, vote("bob", true, "approver", 100)));
  CAF_CHECK(!apply_vote(a, vote("bob", true, "approver", 150)));
  CAF_CHECK_EQUAL(state(a), "pending");
  CAF_CHECK_EQUAL(a.votes.size(), 1u);
  // Not even a change of mind: the first vote stands.
  CAF_CHECK(!apply_vote(a, vote("bob", false, "admin", 160)));
  CAF_CHECK_EQUAL(state(a), "pending");
  CAF_CHECK_EQUAL(a.votes.size(), 1u);
  CAF_CHECK_EQUAL(a.votes[0].at, 100);
}

CAF_TEST(any deny denies) {
  auto a = pending(2);
  CAF_CHECK(!apply_vote(a, vote("bob", true)));
  CAF_CHECK(!apply_vote(a, vote("carol", false, "approver", 300)));
  CAF_CHECK_EQUAL(state(a), "denied");
  CAF_CHECK_EQUAL(a.decided_at, 300);
  CAF_CHECK_EQUAL(a.votes.size(), 2u);
  // One deny is enough even when only one approval is required.
  auto b = pending(1);
  CAF_CHECK(!apply_vote(b, vote("dave", false)));
  CAF_CHECK_EQUAL(state(b), "denied");
}

CAF_TEST(a decided approval refuses further votes) {
  auto a = pending(1);
  CAF_CHECK(!apply_vote(a, vote("bob", true, "approver", 100)));
  auto err = apply_vote(a, vote("carol", false, "approver", 200));
  CAF_CHECK_EQUAL(code(err), "conflict");
  CAF_CHECK_EQUAL(err.message, "approval apr_x is already approved");
  CAF_CHECK_EQUAL(state(a), "approved");
  CAF_CHECK_EQUAL(a.decided_at, 100);
  CAF_CHECK_EQUAL(a.votes.size(), 1u);
  // The voter deciding twice (a retry) gets the first decision back, not an error.
  CAF_CHECK(!apply_vote(a, vote("bob", true, "approver", 300)));
  CAF_CHECK(!apply_vote(a, vote("bob", false, "approver", 300)));
  CAF_CHECK_EQUAL(state(a), "approved");
  CAF_CHECK_EQUAL(a.decided_at, 100);
  CAF_CHECK_EQUAL(a.votes.size(), 1u);
  auto b = pending();
  b.state = approval_state::expired;
  CAF_CHECK_EQUAL(apply_vote(b, vote("bob", true)).message, "approval apr_x is already expired");
}

CAF_TEST(a vote needs an identity) {
  auto a = pending();
  CAF_CHECK_EQUAL(code(apply_vote(a, vote("", true))), "invalid_argument");
  CAF_CHECK(a.votes.empty());
}
