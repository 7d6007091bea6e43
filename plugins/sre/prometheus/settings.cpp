#include "plugins/sre/prometheus/settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <regex>

#include "config/node/sections.hpp"
#include "config/yaml/reader.hpp"
#include "core/base/duration.hpp"
#include "plugins/sections.hpp"

namespace sreh::plugins {

namespace {

using config::yaml::entry;
using config::yaml::reader;
using prometheus::settings;

/// A PromQL template of `prometheus.entities`: it must name the entity (`$entity`).
std::string read_entity_query(reader& r, const entry& e) {
  auto q = r.non_empty_string(e);
  if (q.find("$entity") == std::string::npos)
    r.fail(e, fmt::format("'{}' does not name the entity: write $entity where its name goes "
                          "(service=\"$entity\")",
                          q));
  return q;
}

void read_entities(reader& r, const entry& section, settings& out) {
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
std::int64_t longest_range_ms(const settings& c) {
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

/// `allow` or `deny`: regular expressions over PromQL.
void read_patterns(reader& r, const entry& e, std::vector<std::string>& out) {
  for (const auto& x : r.items(e)) {
    auto re = r.non_empty_string(x);
    try {
      std::regex{re, std::regex::ECMAScript};
    } catch (const std::regex_error& err) {
      r.fail(x, fmt::format("'{}' is not a regular expression: {}", re, err.what()));
    }
    out.push_back(std::move(re));
  }
}

settings read_settings(reader& r, const entry& section, const config::section_context&) {
  using f = config::int_field<settings>;
  static constexpr f ints[] = {
    {"timeout_ms", &settings::timeout_ms, 1, 600'000},
    {"max_series", &settings::max_series, 1, 100'000},
    {"max_points", &settings::max_points, 1, 10'000'000},
  };
  settings out;
  bool settle_given = false;
  for (const auto& e : r.entries(section, {"url", "timeout_ms", "max_series", "max_points", "allow",
                                           "deny", "entities", "baseline", "settle"})) {
    if (e.key == "settle") {
      out.settle_ms = 1000 * r.duration_s(e);
      settle_given = true;
    } else if (e.key == "entities") {
      read_entities(r, e, out);
    } else if (e.key == "baseline") {
      out.baseline = r.string(e);
      if (!out.baseline.empty() && out.baseline.find("$query") == std::string::npos)
        r.fail(e, "must contain $query (the metric's expression), or be \"\" for no baselines");
    } else if (e.key == "url") {
      config::read_server_url(r, e, out);
    } else if (!config::read_int_field(r, e, ints, out)) {
      read_patterns(r, e, e.key == "allow" ? out.allow : out.deny);
    }
  }
  if (!out.entities.empty() && out.url.empty())
    r.fail(section, "entities need the url of the Prometheus to query");
  if (!settle_given)
    if (auto longest = longest_range_ms(out); longest > 0)
      out.settle_ms = longest;
  return out;
}

} // namespace

void register_prometheus_section(config::section_registry& r) {
  r.add<prometheus::settings>(read_settings);
}

} // namespace sreh::plugins
