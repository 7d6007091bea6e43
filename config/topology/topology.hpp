#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::config {

/// One node of a cluster as the topology file names it (docs/cluster.md).
struct cluster_member {
  std::string id;                 // [a-z0-9][a-z0-9_-]{0,62}
  std::string http;               // host:port of its REST/SSE front (bound and dialled as given)
  std::string cluster;            // host:port of its CAF middleman (cluster) port
  std::vector<std::string> roles; // subset of: api, worker, relay (default: all three)

  [[nodiscard]] bool has_role(std::string_view r) const;
};

/// The nodes of a cluster. The same file is used on every node.
/// Mutual TLS on the cluster links (docs/security.md): every member presents the certificate
/// `cert_file` and accepts only peers whose certificate `ca_file` signed. `{node}` in a path is
/// the member's id (one shared topology, a certificate per node); relative paths are relative to
/// the topology file.
struct cluster_tls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  /// `path` with `{node}` replaced by `node_id`.
  [[nodiscard]] static std::string for_node(const std::string& path, const std::string& node_id);
};

struct topology {
  std::string name = "sreh";        // cluster name
  std::int64_t heartbeat_ms = 500;  // node heartbeat in PostgreSQL and middleman heartbeat
  std::int64_t lease_ttl_ms = 5000; // a node silent for longer is dead: its runs are claimed
  std::int64_t connection_timeout_ms = 2000; // middleman connection timeout (hung peers)
  std::vector<cluster_member> nodes;
  std::optional<cluster_tls> tls; // none: the links are plain TCP
  std::string source;             // file it was loaded from

  /// The member with id `id`, or nullptr.
  [[nodiscard]] const cluster_member* find(std::string_view id) const;
};

/// Loads and validates a topology file. `${NAME}` in string values is replaced by the environment
/// variable NAME. Errors are formatted as `FILE:LINE:COLUMN: field.path: what is wrong`.
[[nodiscard]] expected<topology> load_topology(const std::string& path);

/// Same, from text (`name` is used in messages in place of a file name).
[[nodiscard]] expected<topology> load_topology_string(const std::string& text,
                                                      const std::string& name);

} // namespace sreh::config
