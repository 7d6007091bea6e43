#include "actors/runtime/thread_marks.hpp"

#include <caf/all.hpp>
#include <pthread.h>

#include <cstring>

#include "core/base/blocking.hpp"

namespace sreh::actors {

namespace {

class scheduler_thread_marks final : public caf::thread_hook {
 public:
  void init(caf::actor_system&) override {}

  void thread_started() override {
    char name[16] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0)
      return;
    if (std::strcmp(name, "caf.multiplexer") == 0 || std::strcmp(name, "caf.clock") == 0)
      set_this_thread_kind(thread_kind::scheduler);
  }

  void thread_terminates() override { set_this_thread_kind(thread_kind::other); }
};

} // namespace

void mark_scheduler_threads(caf::actor_system_config& cfg) {
  cfg.add_thread_hook<scheduler_thread_marks>();
}

} // namespace sreh::actors
