#include "actors/works/works_facade.hpp"

#include "actors/runtime/ask.hpp"

namespace sreh::actors {

namespace {

work_reply restarting() {
  work_reply r;
  r.err = {errc::unavailable, "the orchestrator is restarting; retry shortly"};
  return r;
}

} // namespace

void works_facade::create(new_work req, std::function<void(work_reply)> done) {
  auto orch = current();
  if (!orch)
    return done(restarting());
  ask_for<work_reply>(
    sys_, orch, [done = std::move(done)](const work_reply& r) { done(r); }, create_atom::value,
    std::move(req));
}

void works_facade::command(std::string id, works::work_command c, std::string by, std::string text,
                           std::function<void(work_reply)> done) {
  auto orch = current();
  if (!orch)
    return done(restarting());
  ask_for<work_reply>(
    sys_, orch, [done = std::move(done)](const work_reply& r) { done(r); }, command_atom::value,
    std::move(id), static_cast<std::int32_t>(c), std::move(by), std::move(text));
}

void works_facade::set(orchestrator_actor a) {
  std::lock_guard lk{mtx_};
  orch_ = std::move(a);
}

orchestrator_actor works_facade::current() const {
  std::lock_guard lk{mtx_};
  return orch_;
}

} // namespace sreh::actors
