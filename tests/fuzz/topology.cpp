// Cluster topologies: loaded, or refused naming the file; a loaded one has unique node ids.
#include "config/topology/topology.hpp"

#include <set>
#include <string>

#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  auto t = sreh::config::load_topology_string(std::string{input}, "fuzz.yaml");
  if (!t) {
    SREH_FUZZ_CHECK(t.error().message.rfind("fuzz.yaml", 0) == 0);
    return;
  }
  std::set<std::string> ids;
  for (const auto& n : t->nodes)
    SREH_FUZZ_CHECK(ids.insert(n.id).second);
}
