// Forks (docs/fork.md): a new run made from the recorded steps 1..N−1 of a finished goal run and
// driven live from step N. The kernel reads the run on the store pool, checks the request
// (core/journal/fork.hpp), and spawns the fork with the copied steps; its actor writes the run
// and those steps in the one transaction that creates it, then goes on as a recovered run
// would: the reasoner decides step N from the journal it finds.

#include <fmt/format.h>

#include "actors/kernel/kernel_state.hpp"
#include "config/policy/policy_config.hpp"
#include "core/evolve/candidate.hpp"

namespace sreh::actors {

namespace {

/// The run forked and its steps, as the store has them.
struct fork_source {
  sreh::error err;
  std::optional<run> r;
  std::vector<step> steps;
};

fork_source load_source(persistence::run_store& s, const std::string& id) {
  fork_source src;
  auto r = s.get_run(id);
  if (!r) {
    src.err = r.error();
    return src;
  }
  if (!*r)
    return src;
  auto steps = s.get_steps(id);
  if (!steps) {
    src.err = steps.error();
    return src;
  }
  src.r = std::move(**r);
  src.steps = std::move(*steps);
  return src;
}

} // namespace

caf::result<kernel_reply> fork_run(kernel_self self, journal::fork_request& req) {
  if (auto full = admission(*self->state.rt))
    return reply_error(full.code, std::move(full.message));
  if (!req.policy.empty())
    if (auto p = config::load_request_policy(req.policy, "config.policy"); !p)
      return reply_error(errc::invalid_argument,
                         fmt::format("the fork's policy does not load: {}", p.error().message));
  auto rp = self->make_response_promise<kernel_reply>();
  auto id = req.run_id; // before `req` moves into the continuation
  read_store(
    self, [id](persistence::run_store& s) { return load_source(s, id); },
    [self, rp, req = std::move(req)](fork_source src) mutable {
      auto& rt = *self->state.rt;
      auto err = src.err;
      if (!err && !src.r)
        err = {errc::not_found, fmt::format("run {} not found", req.run_id)};
      if (!err)
        err = journal::check_fork(*src.r, src.steps, req);
      if (err) {
        rp.deliver(reply_error(err.code, std::move(err.message)));
        return;
      }
      const auto& from = *src.r;
      auto now = rt.clock.now_us();
      run r;
      r.id = rt.ids.next("run");
      r.goal = from.goal;
      r.submitter = req.submitter;
      r.labels = from.labels;
      r.node_id = rt.cfg.node_id;
      r.created_at = r.updated_at = now;
      r.budget = from.budget;
      if (r.budget.deadline_us > 0) // as long as the original had, from now
        r.budget.deadline_us = now + (from.budget.deadline_us - from.created_at);
      // The fork decides with the versions its original pinned, but those it names: the two
      // differ by its edits and those versions.
      r.spec = journal::fork_spec(req, from.spec);
      for (auto kind : evolve::all_artefacts)
        r.spec = evolve::pin_version(r.spec, kind, evolve::pinned_version(from.spec, kind));
      for (const auto& [kind, version] : req.versions)
        r.spec = evolve::pin_version(r.spec, kind, version);
      auto steps = journal::forked_steps(src.steps, req, r.id);
      r.steps = static_cast<std::int64_t>(steps.size());
      std::string own = req.policy.empty() ? "" : ", its own policy";
      for (const auto& [kind, version] : req.versions)
        own += fmt::format(", {} {}", to_string(kind), version);
      rt.log->info("run {}: forked from run {} at step {} ({} recorded steps, {} amended{})", r.id,
                   req.run_id, req.from_step, steps.size(), req.edits.size(), own);
      auto a = activate(self, std::move(r), std::move(steps));
      rp.delegate(a, create_atom::value);
    });
  return rp;
}

} // namespace sreh::actors
