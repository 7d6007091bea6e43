// The sandbox tools' capabilities, and the readers of their results (docs/sandbox-tools.md).
#include "plugins/tools/sandbox/contract.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

namespace sreh::plugins::sandbox {

namespace {

using value = rapidjson::Value;
using obs::capability_kind;
using obs::relation;

// -- reading JSON ------------------------------------------------------------------------------

std::string str(const value& o, const char* key) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd())
    return {};
  if (it->value.IsString())
    return it->value.GetString();
  if (it->value.IsBool())
    return it->value.GetBool() ? "true" : "false";
  if (it->value.IsNumber())
    return fmt::format("{}", it->value.GetDouble());
  return {};
}

const value* array(const value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsArray() ? &it->value : nullptr;
}

std::vector<std::string> strings(const value& o, const char* key) {
  std::vector<std::string> out;
  if (auto* a = array(o, key))
    for (auto& v : a->GetArray())
      if (v.IsString())
        out.emplace_back(v.GetString());
  return out;
}

std::optional<double> number(const value& v) {
  if (v.IsNumber())
    return v.GetDouble();
  if (v.IsBool())
    return v.GetBool() ? 1.0 : 0.0;
  return std::nullopt;
}

std::map<std::string, double> numbers(const value& o, const char* key) {
  std::map<std::string, double> out;
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsObject())
    return out;
  for (auto& m : it->value.GetObject())
    if (auto n = number(m.value))
      out[m.name.GetString()] = *n;
  return out;
}

/// An entity's metrics and numeric state as a description prints them: `current`, `baseline`,
/// and every numeric (or boolean) top-level member as a field.
obs::metric_sample sample_of(const value& o, obs::entity_ref e) {
  obs::metric_sample s;
  s.entity = std::move(e);
  s.current = numbers(o, "current");
  s.baseline = numbers(o, "baseline");
  for (auto& m : o.GetObject())
    if (auto v = number(m.value))
      s.fields[m.name.GetString()] = *v;
  s.version = str(o, "version");
  return s;
}

// -- the graph as a result reveals it -----------------------------------------------------------

/// Collects entities in the order the result first mentions them, and the edges between them.
class graph {
 public:
  explicit graph(bool complete) { t_.complete = complete; }

  void mention(const std::string& name, const std::string& kind = {},
               const std::string& subkind = {}) {
    auto [it, fresh] = index_.try_emplace(name, t_.entities.size());
    if (fresh)
      t_.entities.push_back({name, {}, {}});
    auto& e = t_.entities[it->second];
    if (!kind.empty() && (e.kind.empty() || e.kind == "service"))
      e.kind = kind;
    if (!subkind.empty())
      e.subkind = subkind;
  }

  void link(const std::string& from, relation rel, const std::string& to) {
    t_.edges.push_back({from, rel, to});
  }

  /// A service with its dependencies, callers and hosts.
  void service(const value& s) {
    auto name = str(s, "name");
    if (name.empty())
      return;
    auto kind = str(s, "kind");
    mention(name, kind.empty() ? "service" : kind);
    for (auto& c : strings(s, "calls")) {
      mention(c);
      link(name, relation::calls, c);
    }
    for (auto& c : strings(s, "called_by")) {
      mention(c);
      link(c, relation::calls, name);
    }
    for (auto& h : strings(s, "hosts")) {
      mention(h, "host");
      link(name, relation::runs_on, h);
    }
  }

  /// A host with the services and jobs on it.
  void host(const value& h) {
    auto name = str(h, "name");
    if (name.empty())
      return;
    mention(name, "host", str(h, "kind"));
    for (auto& s : strings(h, "services")) {
      mention(s);
      link(s, relation::runs_on, name);
    }
    for (auto& j : strings(h, "jobs")) {
      mention(j, "job");
      link(j, relation::job_on, name);
    }
  }

  /// A job with its hosts.
  void job(const value& j) {
    auto name = str(j, "name");
    if (name.empty())
      return;
    mention(name, "job", str(j, "kind"));
    for (auto& h : strings(j, "hosts")) {
      mention(h, "host");
      link(name, relation::job_on, h);
    }
  }

  obs::topology take() { return std::move(t_); }

 private:
  obs::topology t_;
  std::map<std::string, std::size_t> index_;
};

// -- the readers, one per read tool ---------------------------------------------------------------

obs::observations read_topology(const value&, const value& r) {
  graph g{true};
  for (const char* section : {"services", "hosts", "jobs"})
    if (auto* a = array(r, section))
      for (auto& x : a->GetArray()) {
        if (!x.IsObject())
          continue;
        if (section[0] == 's')
          g.service(x);
        else if (section[0] == 'h')
          g.host(x);
        else
          g.job(x);
      }
  return {g.take()};
}

obs::observations read_service(const value&, const value& r) {
  graph g{false};
  g.service(r);
  auto t = g.take();
  if (t.entities.empty())
    return {};
  auto self = t.entities.front();
  return {std::move(t), sample_of(r, std::move(self))};
}

obs::observations read_host(const value&, const value& r) {
  graph g{false};
  g.host(r);
  auto t = g.take();
  if (t.entities.empty())
    return {};
  auto self = t.entities.front();
  return {std::move(t), sample_of(r, std::move(self))};
}

obs::observations read_jobs(const value&, const value& r) {
  graph g{false};
  obs::observations samples;
  if (auto* a = array(r, "jobs"))
    for (auto& j : a->GetArray()) {
      auto name = j.IsObject() ? str(j, "name") : std::string{};
      if (name.empty())
        continue;
      g.job(j);
      auto s = sample_of(j, {name, "job", str(j, "kind")});
      if (auto it = j.FindMember("stalled"); it != j.MemberEnd())
        if (auto v = number(it->value))
          s.current["stalled"] = *v;
      samples.push_back(std::move(s));
    }
  obs::observations out{g.take()};
  out.insert(out.end(), samples.begin(), samples.end());
  return out;
}

obs::observations read_metric(const value&, const value& r) {
  auto target = str(r, "target");
  auto metric = str(r, "metric");
  if (target.empty() || metric.empty())
    return {};
  obs::metric_sample s;
  s.entity.name = target;
  if (auto it = r.FindMember("current"); it != r.MemberEnd())
    if (auto v = number(it->value))
      s.current[metric] = *v;
  if (auto it = r.FindMember("baseline"); it != r.MemberEnd())
    if (auto v = number(it->value))
      s.baseline[metric] = *v;
  if (auto* pts = array(r, "points"))
    for (auto& p : pts->GetArray())
      if (p.IsArray() && !p.Empty() && p[0].IsString())
        s.at = p[0].GetString(); // oldest first: the last point is the sample's time
  return {std::move(s)};
}

obs::observations read_logs(const value& args, const value& r) {
  obs::log_lines out;
  out.entity = str(r, "service");
  if (out.entity.empty())
    out.entity = str(args, "service");
  if (out.entity.empty())
    return {};
  if (auto* a = array(r, "lines"))
    for (auto& l : a->GetArray())
      if (l.IsObject())
        out.lines.push_back({str(l, "at"), str(l, "level"), str(l, "message")});
  return {std::move(out)};
}

obs::observations read_deploys(const value& args, const value& r) {
  obs::deploy_list out;
  out.service = str(args, "service");
  out.window = str(args, "window");
  if (out.window.empty())
    out.window = "24h";
  if (auto* a = array(r, "deploys"))
    for (auto& x : a->GetArray())
      if (x.IsObject())
        out.deploys.push_back(
          {str(x, "service"), str(x, "version"), str(x, "previous"), str(x, "at"), str(x, "by")});
  return {std::move(out)};
}

obs::observations read_flags(const value&, const value& r) {
  obs::flag_list out;
  if (auto* a = array(r, "flags"))
    for (auto& f : a->GetArray())
      if (f.IsObject())
        out.flags.push_back({str(f, "name"), str(f, "value"), str(f, "default"),
                             str(f, "changed_at"), str(f, "changed_by")});
  return {std::move(out)};
}

obs::observations read_alerts(const value&, const value& r) {
  obs::alert_list out;
  if (auto* a = array(r, "alerts"))
    for (auto& x : a->GetArray()) {
      if (!x.IsObject())
        continue;
      obs::alert al;
      al.name = str(x, "name");
      if (auto it = x.FindMember("labels"); it != x.MemberEnd() && it->value.IsObject())
        for (auto& m : it->value.GetObject())
          if (m.value.IsString())
            al.labels[m.name.GetString()] = m.value.GetString();
      al.since = str(x, "since");
      out.alerts.push_back(std::move(al));
    }
  return {std::move(out)};
}

// -- the table ------------------------------------------------------------------------------------

obs::capability cap(capability_kind k, std::vector<std::string> kinds = {},
                    std::map<std::string, std::string, std::less<>> args = {}) {
  return {k, std::move(kinds), std::move(args), {}};
}

const std::string by_entity{obs::role::entity};
const std::string by_window{obs::role::window};
const std::string by_limit{obs::role::limit};
const std::string by_metric{obs::role::metric};

/// The mutating tools: each performs the remedy action of its own name, with its arguments.
constexpr const char* remedies[] = {
  "deploy.rollback", "service.restart", "service.scale", "db.set_pool_limit", "host.cleanup_disk",
  "cert.rotate",     "flag.set",        "host.cordon",   "host.drain",        "job.restart"};

} // namespace

tool_contract contract_of(std::string_view name) {
  if (name == "topology.get")
    return {{cap(capability_kind::topology)}, read_topology};
  if (name == "service.describe")
    return {{cap(capability_kind::describe, {"service", "database", "cache", "queue"},
                 {{by_entity, "service"}})},
            read_service};
  if (name == "host.describe")
    return {{cap(capability_kind::describe, {"host"}, {{by_entity, "host"}})}, read_host};
  if (name == "jobs.list")
    return {{cap(capability_kind::describe, {"job"})}, read_jobs};
  if (name == "metrics.query")
    return {{cap(capability_kind::metric, {},
                 {{by_entity, "target"}, {by_metric, "metric"}, {by_window, "window"}})},
            read_metric};
  if (name == "logs.search")
    return {{cap(capability_kind::logs, {},
                 {{by_entity, "service"}, {by_limit, "limit"}, {by_window, "window"}})},
            read_logs};
  if (name == "deploys.list")
    return {{cap(capability_kind::deploys, {}, {{by_window, "window"}})}, read_deploys};
  if (name == "flags.list")
    return {{cap(capability_kind::flags)}, read_flags};
  if (name == "alerts.list")
    return {{cap(capability_kind::alerts)}, read_alerts};
  for (const char* r : remedies)
    if (name == r) {
      auto c = cap(capability_kind::remedy);
      c.action = r;
      return {{std::move(c)}, nullptr};
    }
  return {};
}

obs::observations observe(const tool_contract& contract, std::string_view args,
                          std::string_view result) {
  auto res = json::parse(result);
  if (!res || !res->IsObject())
    return {obs::call_failed{"the result is not a JSON object"}};
  if (auto it = res->FindMember("ok"); it != res->MemberEnd() && it->value.IsFalse())
    return {obs::call_failed{str(*res, "error")}};
  if (!contract.read)
    return {};
  auto a = json::parse(args);
  rapidjson::Value none(rapidjson::kObjectType);
  const value& av = a && a->IsObject() ? static_cast<const value&>(*a) : none;
  return contract.read(av, *res);
}

} // namespace sreh::plugins::sandbox
