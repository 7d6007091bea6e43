#pragma once
// A person's command on a Work that another member owns (docs/cluster.md, "Any node answers"):
// forwarded to the owner over the cluster links and answered as the owner answered, or, when
// the owner is dead, the Work claimed first and the command run here.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/runtime/blocking_call.hpp"
#include "actors/works/orchestrator.hpp"

namespace sreh::actors {

struct forwarded_command {
  std::string id; // the Work
  std::int32_t c = 0;
  std::string by;
  std::string text;
};

/// Runs on the orchestrator `self` (`calls`: its pending store calls) for Work `cmd.id`, whose
/// row names `owner`, another member. An owner that is alive and linked gets the command; its
/// answer is `deliver`ed with the Work as the store has it after the command. A dead owner's open
/// Works are claimed (one batch, env.routing->claim) and each adopted (adopt_atom to `self`):
/// when this Work is among them, `run_here(claimed)` runs the command on this node (and
/// answers); otherwise `deliver` says to retry. Every failure names the Work and the owner.
void command_elsewhere(orchestrator_impl_actor::pointer self, pending_calls& calls,
                       const works_env& env, const std::string& owner, forwarded_command cmd,
                       std::function<void(work_reply)> deliver,
                       std::function<void(std::vector<std::string> claimed)> run_here);

/// Answers a command another member forwarded: runs it on the Work's actor that `lookup` hands
/// over (or answers its error: a Work this node does not own is not forwarded again), and `rp`
/// gets the actor's error only.
void answer_forwarded(orchestrator_impl_actor::pointer self,
                      std::function<void(std::function<void(expected<work_actor>)>)> lookup,
                      caf::typed_response_promise<forwarded_reply> rp, forwarded_command cmd);

} // namespace sreh::actors
