// The SRE work extension's kinds (plugins/register.hpp): what an incident and a change ask of
// every template of theirs on a node that has this build's plugins.

#include "plugins/register.hpp"

namespace sreh::plugins {

void register_sre_work_kinds(works::kind_registry& kinds) {
  using works::field_type;
  kinds.add(
    {"incident",
     "something is broken: it has a severity, taken from the alert's severity label "
     "when an alert opens it (docs/alertmanager.md)",
     {{"severity", field_type::choice, "its severity, which an alert's severity label maps to"}}});
  kinds.add({"change",
             "a planned change to production, with its rollback plan",
             {{"rollback", field_type::string, "a change states how to roll it back"}}});
}

} // namespace sreh::plugins
