#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <regex>

#include "config/node/section_readers.hpp"
#include "core/base/duration.hpp"
#include "core/base/http_url.hpp"

namespace sreh::config::detail {

using yaml::entry;
using yaml::reader;

namespace {

/// A server's `url` (http://host:port[/prefix], "" = none) into the section's url, host, port
/// and path_prefix.
template <class Section>
void read_server_url(reader& r, const entry& e, Section& out) {
  out.url = r.string(e);
  if (out.url.empty())
    return;
  auto u = parse_http_url(out.url, true, true);
  if (!u)
    r.fail(e, u.error().message);
  out.host = u->host;
  out.port = u->port;
  out.path_prefix = u->path;
}

/// A PromQL template of `prometheus.entities`: it must name the entity (`$entity`).
std::string read_entity_query(reader& r, const entry& e) {
  auto q = r.non_empty_string(e);
  if (q.find("$entity") == std::string::npos)
    r.fail(e, fmt::format("'{}' does not name the entity: write $entity where its name goes "
                          "(service=\"$entity\")",
                          q));
  return q;
}

void read_prometheus_entities(reader& r, const entry& section, prometheus_config& out) {
  for (const auto& kind : r.pairs(section)) {
    static constexpr std::string_view kinds[] = {"service", "database", "cache",
                                                 "queue",   "host",     "job"};
    if (std::find(std::begin(kinds), std::end(kinds), kind.key) == std::end(kinds))
      r.fail(kind, fmt::format("'{}' is not an entity kind the reasoner observes (service, "
                               "database, cache, queue, host, job)",
                               kind.key));
    auto& m = out.entities[kind.key];
    for (const auto& part : r.entries(kind, {"metrics", "fields"})) {
      for (const auto& x : r.pairs(part)) {
        if (part.key == "fields") {
          m.fields[x.key] = read_entity_query(r, x);
          continue;
        }
        auto& metric = m.metrics[x.key];
        if (!x.value.is_mapping()) {
          metric.query = read_entity_query(r, x);
          continue;
        }
        for (const auto& y : r.entries(x, {"query", "baseline"}))
          (y.key == "query" ? metric.query : metric.baseline) = read_entity_query(r, y);
        if (metric.query.empty())
          r.fail(x, "needs a query (or write the PromQL itself as the value)");
      }
    }
    if (m.metrics.empty())
      r.fail(kind, "names no metrics");
  }
}

/// The longest range selector (`[5m]`, a subquery's `[1h:1m]`) of the entity metrics' queries,
/// in ms; 0 when none has one.
std::int64_t longest_range_ms(const prometheus_config& c) {
  static const std::regex range{R"(\[([0-9]+[smhdwy][0-9smhdwy]*)(:[^\]]*)?\])"};
  std::int64_t most = 0;
  for (const auto& [kind, m] : c.entities)
    for (const auto& [name, metric] : m.metrics)
      for (std::sregex_iterator i{metric.query.begin(), metric.query.end(), range}, end; i != end;
           ++i)
        if (auto s = parse_duration_s((*i)[1].str()))
          most = std::max(most, *s * 1000);
  return most;
}

} // namespace

void read_alertmanager(reader& r, const entry& section, alertmanager_config& out) {
  for (const auto& e : r.entries(section, {"url", "timeout_ms", "max_alerts_listed", "receiver"})) {
    if (e.key == "url") {
      read_server_url(r, e, out);
      continue;
    }
    if (e.key == "timeout_ms") {
      out.timeout_ms = r.integer(e, 1, 600'000);
      continue;
    }
    if (e.key == "max_alerts_listed") {
      out.max_alerts_listed = r.integer(e, 1, 10'000);
      continue;
    }
    for (const auto& x : r.entries(e, {"template", "fields", "severity", "max_alerts"})) {
      if (x.key == "template") {
        out.receiver_template = r.non_empty_string(x);
      } else if (x.key == "max_alerts") {
        out.max_alerts = r.integer(x, 1, 100'000);
      } else {
        auto& map = x.key == "fields" ? out.fields : out.severity;
        if (x.key == "severity")
          map.clear(); // the file's table replaces the default one
        for (const auto& p : r.pairs(x))
          map[p.key] = r.non_empty_string(p);
      }
    }
  }
}

void read_prometheus(reader& r, const entry& section, prometheus_config& out) {
  using f = int_field<prometheus_config>;
  static constexpr f ints[] = {
    {"timeout_ms", &prometheus_config::timeout_ms, 1, 600'000},
    {"max_series", &prometheus_config::max_series, 1, 100'000},
    {"max_points", &prometheus_config::max_points, 1, 10'000'000},
  };
  bool settle_given = false;
  for (const auto& e : r.entries(section, {"url", "timeout_ms", "max_series", "max_points", "allow",
                                           "deny", "entities", "baseline", "settle"})) {
    if (e.key == "settle") {
      out.settle_ms = 1000 * r.duration_s(e);
      settle_given = true;
    } else if (e.key == "entities") {
      read_prometheus_entities(r, e, out);
    } else if (e.key == "baseline") {
      out.baseline = r.string(e);
      if (!out.baseline.empty() && out.baseline.find("$query") == std::string::npos)
        r.fail(e, "must contain $query (the metric's expression), or be \"\" for no baselines");
    } else if (e.key == "url") {
      read_server_url(r, e, out);
    } else if (!read_int_field(r, e, ints, out)) { // allow, deny
      auto& list = e.key == "allow" ? out.allow : out.deny;
      for (const auto& x : r.items(e)) {
        auto re = r.non_empty_string(x);
        try {
          std::regex{re, std::regex::ECMAScript};
        } catch (const std::regex_error& err) {
          r.fail(x, fmt::format("'{}' is not a regular expression: {}", re, err.what()));
        }
        list.push_back(std::move(re));
      }
    }
  }
  if (!out.entities.empty() && out.url.empty())
    r.fail(section, "entities need the url of the Prometheus to query");
  if (!settle_given)
    if (auto longest = longest_range_ms(out); longest > 0)
      out.settle_ms = longest;
}

} // namespace sreh::config::detail
