#include "actors/cluster/peer.hpp"

namespace sreh::actors {

void add_peer_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<run_budget>("sreh::run_budget"); // inside goal_request
  cfg.add_message_type<goal_request>("sreh::goal_request");
  cfg.add_message_type<approval_vote>("sreh::approval_vote");
  cfg.add_message_type<kernel_reply>("sreh::kernel_reply");
  cfg.add_message_type<peer_load>("sreh::peer_load");
}

} // namespace sreh::actors
