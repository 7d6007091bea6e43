#include "config/topology/topology.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "config/topology/address.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/text.hpp"

namespace sreh::config {

namespace {

using yaml::entry;
using yaml::reader;

const std::vector<std::string> all_roles = {"api", "worker", "relay"};

/// [a-z0-9][a-z0-9_-]{0,62}: safe in file names (data_dir), URLs, SQL and NATS subjects.
bool is_name(std::string_view s) {
  auto plain = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !s.empty() && s.size() <= 63 && plain(s.front()) &&
         std::all_of(s.begin(), s.end(), [&](char c) { return plain(c) || c == '_' || c == '-'; });
}

std::string name(reader& r, const entry& e, std::string_view what) {
  auto s = r.string(e);
  if (!is_name(s))
    r.fail(e, fmt::format("expected a {} of 1 to 63 lower-case letters, digits, '_' and '-', "
                          "starting with a letter or digit, got '{}'",
                          what, s));
  return s;
}

std::vector<std::string> read_roles(reader& r, const entry& e) {
  if (e.value.is_null() || (e.value.is_sequence() && e.value.size() == 0))
    r.fail(e, "must not be empty: list some of api, worker, relay (or leave roles out for all "
              "three)");
  std::vector<std::string> out;
  for (const auto& item : r.non_empty_items(e)) {
    auto role = r.one_of(item, {"api", "worker", "relay"});
    if (std::find(out.begin(), out.end(), role) != out.end())
      r.fail(item, fmt::format("role '{}' is listed twice", role));
    out.push_back(std::move(role));
  }
  return out;
}

/// Keeps what the members read so far use, so that a second use names the first one's place.
class uniqueness {
 public:
  explicit uniqueness(reader& r) : r_(r) {}

  void id(const entry& e, const std::string& id) {
    if (auto [it, fresh] = ids_.emplace(id, e.mark); !fresh)
      r_.fail(e, fmt::format("duplicate node id '{}' (first at {})", id, r_.where(it->second)));
  }

  /// `s` must be a host:port with a port other than 0, not used before by any node.
  void address(const entry& e, const std::string& node, const std::string& s) {
    std::string host;
    std::uint16_t port = 0;
    if (auto err = parse_listen(s, e.path, host, port))
      throw yaml::load_error{fmt::format("{}: {}", r_.where(e.mark), err.message)};
    if (port == 0)
      r_.fail(
        e, fmt::format("expected a port between 1 and 65535 (other nodes dial it), got '{}'", s));
    auto key = fmt::format("{}:{}", ascii_lower(host), port);
    auto [it, fresh] = addresses_.emplace(key, first_use{e.path, node, e.mark});
    if (!fresh)
      r_.fail(e, fmt::format("address {} is already used by {} (node '{}', at {}); every node "
                             "needs its own http and cluster addresses",
                             s, it->second.path, it->second.node, r_.where(it->second.mark)));
  }

 private:
  struct first_use {
    std::string path;
    std::string node;
    yaml::mark mark;
  };
  reader& r_;
  std::map<std::string, yaml::mark> ids_;
  std::map<std::string, first_use> addresses_; // by lower-case host:port
};

cluster_member read_member(reader& r, const entry& item, uniqueness& seen) {
  if (!item.value.is_mapping())
    r.fail(item, "expected a mapping with 'id', 'http', 'cluster' and optionally 'roles'");
  cluster_member m;
  m.roles = all_roles;
  std::optional<entry> id, http, cluster;
  for (const auto& e : r.entries(item, {"id", "http", "cluster", "roles"})) {
    if (e.key == "id") {
      m.id = name(r, e, "node id");
      id.emplace(e);
    } else if (e.key == "http") {
      m.http = r.string(e);
      http.emplace(e);
    } else if (e.key == "cluster") {
      m.cluster = r.string(e);
      cluster.emplace(e);
    } else {
      m.roles = read_roles(r, e);
    }
  }
  auto require = [&](const std::optional<entry>& e, std::string_view key) {
    if (!e)
      r.fail(item, fmt::format("missing key '{}'", key));
  };
  require(id, "id");
  require(http, "http");
  require(cluster, "cluster");
  seen.id(*id, m.id);
  seen.address(*http, m.id, m.http);
  seen.address(*cluster, m.id, m.cluster);
  return m;
}

void read_nodes(reader& r, const entry& e, topology& t) {
  if (e.value.is_null() || (e.value.is_sequence() && e.value.size() == 0))
    r.fail(e, "must list at least one node");
  uniqueness seen{r};
  for (const auto& item : r.non_empty_items(e))
    t.nodes.push_back(read_member(r, item, seen));
  auto any = [&](std::string_view role) {
    return std::any_of(t.nodes.begin(), t.nodes.end(),
                       [&](const cluster_member& m) { return m.has_role(role); });
  };
  if (!any("worker"))
    r.fail(e, "no node has the worker role: no run would ever execute");
  if (!any("api"))
    r.fail(e, "no node has the api role: nothing would accept goals or serve the API");
}

/// A path of `tls`, relative to the topology file; `{node}` is kept for each member to fill in.
std::string tls_path(reader& r, const entry& e, const std::string& topology_file) {
  auto path = r.non_empty_string(e);
  std::filesystem::path p{path};
  if (p.is_relative())
    p = (std::filesystem::path{topology_file}.parent_path() / p).lexically_normal();
  return p.string();
}

void read_tls(reader& r, const entry& e, topology& t) {
  cluster_tls tls;
  for (const auto& x : r.entries(e, {"ca_file", "cert_file", "key_file"}))
    (x.key == "ca_file"     ? tls.ca_file
     : x.key == "cert_file" ? tls.cert_file
                            : tls.key_file) = tls_path(r, x, t.source);
  if (tls.ca_file.empty() || tls.cert_file.empty() || tls.key_file.empty())
    r.fail(e, "needs ca_file, cert_file and key_file (PEM; {node} in a path is the member's id)");
  // Every member's files must be there: a node that starts without its certificate would only
  // find out when its peers refuse it.
  for (const auto& m : t.nodes)
    for (const auto* f : {&tls.ca_file, &tls.cert_file, &tls.key_file}) {
      auto path = cluster_tls::for_node(*f, m.id);
      if (::access(path.c_str(), R_OK) != 0)
        r.fail(e, fmt::format("cannot read '{}' (node {}): {}", path, m.id, std::strerror(errno)));
    }
  t.tls = std::move(tls);
}

void read_top(reader& r, const entry& root, topology& t) {
  std::optional<entry> nodes, heartbeat, lease, tls;
  for (const auto& e : r.entries(root, {"cluster", "heartbeat_ms", "lease_ttl_ms",
                                        "connection_timeout_ms", "nodes", "tls"})) {
    if (e.key == "tls") {
      tls.emplace(e);
    } else if (e.key == "cluster") {
      t.name = name(r, e, "cluster name");
    } else if (e.key == "heartbeat_ms") {
      t.heartbeat_ms = r.integer(e, 50, 60'000);
      heartbeat.emplace(e);
    } else if (e.key == "lease_ttl_ms") {
      t.lease_ttl_ms = r.integer(e, 150, 3'600'000);
      lease.emplace(e);
    } else if (e.key == "connection_timeout_ms") {
      t.connection_timeout_ms = r.integer(e, 100, 60'000);
    } else {
      nodes.emplace(e);
    }
  }
  if (t.lease_ttl_ms < 3 * t.heartbeat_ms) {
    // Only a heartbeat_ms written in the file can make the default lease too short.
    auto mark = lease ? lease->mark : heartbeat->mark;
    r.fail(mark, "lease_ttl_ms",
           fmt::format("{}{} is less than 3 * heartbeat_ms (3 * {} = {}): a lease must survive at "
                       "least 3 missed heartbeats",
                       t.lease_ttl_ms, lease ? "" : " (the default)", t.heartbeat_ms,
                       3 * t.heartbeat_ms));
  }
  if (!nodes)
    r.fail(yaml::mark{}, "nodes", "missing: a topology lists at least one node");
  read_nodes(r, *nodes, t);
  if (tls)
    read_tls(r, *tls, t);
}

} // namespace

std::string cluster_tls::for_node(const std::string& path, const std::string& node_id) {
  std::string out = path;
  for (auto at = out.find("{node}"); at != std::string::npos; at = out.find("{node}", at))
    out.replace(at, 6, node_id);
  return out;
}

bool cluster_member::has_role(std::string_view r) const {
  return std::find(roles.begin(), roles.end(), r) != roles.end();
}

const cluster_member* topology::find(std::string_view id) const {
  auto it =
    std::find_if(nodes.begin(), nodes.end(), [&](const cluster_member& m) { return m.id == id; });
  return it == nodes.end() ? nullptr : &*it;
}

expected<topology> load_topology_string(const std::string& text, const std::string& name) {
  topology t;
  t.source = name;
  reader r{name, {.substitute_env = true}};
  try {
    auto root = r.parse(text);
    if (!root.value.is_null() && !root.value.is_mapping())
      r.fail(root, "expected a mapping with 'cluster' and 'nodes'");
    read_top(r, root, t);
  } catch (const yaml::load_error& e) {
    return error{errc::invalid_argument, e.message};
  }
  return t;
}

expected<topology> load_topology(const std::string& path) {
  auto text = yaml::read_text_file(path);
  if (!text)
    return text.error();
  return load_topology_string(*text, path);
}

} // namespace sreh::config
