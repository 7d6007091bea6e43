#pragma once
// The Works control plane's thread-safe facade (works_api): requests go to the current
// incarnation of the orchestrator, which its supervisor sets on every restart.

#include <mutex>

#include "actors/works/messages.hpp"
#include "actors/works/works_api.hpp"

namespace caf {
class actor_system;
}

namespace sreh::actors {

/// The Works control plane's facade: requests to the current orchestrator incarnation.
class works_facade final : public works_api {
 public:
  explicit works_facade(caf::actor_system& sys) : sys_(sys) {}

  void create(new_work req, std::function<void(work_reply)> done) override;
  void command(std::string id, works::work_command c, std::string by, std::string text,
               std::function<void(work_reply)> done) override;
  /// The orchestrator's incarnation now (null: none, it is restarting).
  void set(orchestrator_actor a);
  [[nodiscard]] orchestrator_actor current() const;

 private:
  caf::actor_system& sys_;
  mutable std::mutex mtx_;
  orchestrator_actor orch_;
};

} // namespace sreh::actors
