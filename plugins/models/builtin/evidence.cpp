#include "plugins/models/builtin/evidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "core/base/json.hpp"

namespace sreh::plugins::reasoner {

namespace {

using value = rapidjson::Value;

std::string str(const value& o, const char* key) {
  if (!o.IsObject())
    return {};
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

std::vector<std::string> strings(const value& o, const char* key) {
  std::vector<std::string> out;
  if (!o.IsObject())
    return out;
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsArray())
    return out;
  for (auto& v : it->value.GetArray())
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

void numbers(const value& o, const char* key, std::map<std::string, double>& out) {
  if (!o.IsObject())
    return;
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsObject())
    return;
  for (auto& m : it->value.GetObject())
    if (auto n = number(m.value))
      out[m.name.GetString()] = *n;
}

const value* array(const value& o, const char* key) {
  if (!o.IsObject())
    return nullptr;
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsArray() ? &it->value : nullptr;
}

void merge_names(std::vector<std::string>& dst, const std::vector<std::string>& src) {
  for (auto& s : src)
    if (std::find(dst.begin(), dst.end(), s) == dst.end())
      dst.push_back(s);
}

void write_sorted(const value& v, json::writer& w) {
  if (v.IsObject()) {
    std::vector<const value::Member*> ms;
    for (auto& m : v.GetObject())
      ms.push_back(&m);
    std::sort(ms.begin(), ms.end(), [](auto* a, auto* b) {
      return std::string_view{a->name.GetString(), a->name.GetStringLength()}
             < std::string_view{b->name.GetString(), b->name.GetStringLength()};
    });
    w.StartObject();
    for (auto* m : ms) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_sorted(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (auto& e : v.GetArray())
      write_sorted(e, w);
    w.EndArray();
  } else if (v.IsNumber() && v.IsDouble() && v.GetDouble() == static_cast<double>(
                                                   static_cast<std::int64_t>(v.GetDouble()))) {
    w.Int64(static_cast<std::int64_t>(v.GetDouble()));  // 2.0 and 2 are the same argument
  } else {
    v.Accept(w);
  }
}

/// Collects entities from a step's result; `add` registers names in first-seen order.
class builder {
 public:
  builder(evidence& ev, const knowledge_base& kb) : ev_(ev), kb_(kb) {}

  entity& at(const std::string& name, const std::string& kind = {}) {
    auto [it, fresh] = ev_.entities.try_emplace(name);
    if (fresh) {
      it->second.name = name;
      ev_.order.push_back(name);
    }
    if (!kind.empty() && (it->second.kind.empty() || it->second.kind == "service"))
      it->second.kind = kind;
    return it->second;
  }

  void topology(const value& r) {
    ev_.topology_known = true;
    if (auto* a = array(r, "services"))
      for (auto& s : a->GetArray())
        describe_service(s, 0, false);
    if (auto* a = array(r, "hosts"))
      for (auto& h : a->GetArray()) {
        auto& e = at(str(h, "name"), "host");
        merge_names(e.services, strings(h, "services"));
        merge_names(e.jobs, strings(h, "jobs"));
        for (auto& s : e.services)
          merge_names(at(s).hosts, {e.name});
        for (auto& j : e.jobs)
          merge_names(at(j, "job").hosts, {e.name});
      }
    if (auto* a = array(r, "jobs"))
      for (auto& j : a->GetArray())
        describe_job(j, 0, false);
  }

  void describe_service(const value& s, std::int64_t n, bool with_metrics) {
    auto name = str(s, "name");
    if (name.empty())
      return;
    auto kind = str(s, "kind");
    auto& e = at(name, kind.empty() ? "service" : kind);
    merge_names(e.calls, strings(s, "calls"));
    merge_names(e.called_by, strings(s, "called_by"));
    merge_names(e.hosts, strings(s, "hosts"));
    for (auto& c : e.calls)
      merge_names(at(c).called_by, {name});
    for (auto& c : e.called_by)
      merge_names(at(c).calls, {name});
    for (auto& h : e.hosts)
      merge_names(at(h, "host").services, {name});
    if (with_metrics)
      add_snapshot(e, s, n);
  }

  void describe_host(const value& h, std::int64_t n) {
    auto name = str(h, "name");
    if (name.empty())
      return;
    auto& e = at(name, "host");
    merge_names(e.services, strings(h, "services"));
    merge_names(e.jobs, strings(h, "jobs"));
    add_snapshot(e, h, n);
  }

  void describe_job(const value& j, std::int64_t n, bool with_metrics) {
    auto name = str(j, "name");
    if (name.empty())
      return;
    auto& e = at(name, "job");
    if (auto k = str(j, "kind"); !k.empty())
      e.subkind = k;
    merge_names(e.calls, strings(j, "hosts"));
    merge_names(e.hosts, strings(j, "hosts"));
    for (auto& h : e.hosts)
      merge_names(at(h, "host").jobs, {name});
    if (!with_metrics)
      return;
    add_snapshot(e, j, n);
    if (auto it = j.FindMember("stalled"); it != j.MemberEnd())
      if (auto v = number(it->value))
        e.snapshots.back().current["stalled"] = *v;
  }

  void add_snapshot(entity& e, const value& o, std::int64_t n) {
    snapshot s;
    s.step = n;
    numbers(o, "current", s.current);
    numbers(o, "baseline", s.baseline);
    for (auto& m : o.GetObject())
      if (auto v = number(m.value))
        s.fields[m.name.GetString()] = *v;
    s.version = str(o, "version");
    e.snapshots.push_back(std::move(s));
  }

  void metrics(const value& r, std::int64_t n) {
    auto target = str(r, "target");
    auto metric = str(r, "metric");
    if (target.empty() || metric.empty())
      return;
    snapshot s;
    s.step = n;
    if (auto it = r.FindMember("current"); it != r.MemberEnd())
      if (auto v = number(it->value))
        s.current[metric] = *v;
    if (auto it = r.FindMember("baseline"); it != r.MemberEnd())
      if (auto v = number(it->value))
        s.baseline[metric] = *v;
    if (auto* pts = array(r, "points"))
      for (auto& p : pts->GetArray())
        if (p.IsArray() && !p.Empty() && p[0].IsString())
          note_time(p[0].GetString());
    at(target).snapshots.push_back(std::move(s));
  }

  void logs(const value& r, std::int64_t n, const std::string& asked) {
    auto name = str(r, "service");
    if (name.empty())
      name = asked;
    log_result lr;
    lr.step = n;
    if (auto* a = array(r, "lines"))
      for (auto& l : a->GetArray()) {
        lr.lines.push_back({str(l, "at"), str(l, "level"), str(l, "message")});
        note_time(lr.lines.back().at);
      }
    at(name);
    ev_.logs[name].push_back(std::move(lr));
  }

  void deploys(const value& r, std::int64_t n, const value& args) {
    deploy_result d;
    d.step = n;
    d.service = str(args, "service");
    d.window = str(args, "window");
    if (d.window.empty())
      d.window = "24h";
    if (auto* a = array(r, "deploys"))
      for (auto& x : a->GetArray())
        d.deploys.push_back({str(x, "service"), str(x, "version"), str(x, "previous"),
                             str(x, "at"), str(x, "by")});
    ev_.deploys.push_back(std::move(d));
  }

  void flags(const value& r, std::int64_t n) {
    std::vector<flag_record> out;
    if (auto* a = array(r, "flags"))
      for (auto& f : a->GetArray())
        out.push_back({str(f, "name"), str(f, "value"), str(f, "default"), str(f, "changed_at"),
                       str(f, "changed_by")});
    ev_.flags = std::move(out);
    ev_.flags_step = n;
  }

  void jobs(const value& r, std::int64_t n) {
    if (auto* a = array(r, "jobs"))
      for (auto& j : a->GetArray())
        describe_job(j, n, true);
  }

  void alerts(const value& r) {
    ev_.alerts_known = true;
    if (auto* a = array(r, "alerts"))
      for (auto& al : a->GetArray()) {
        std::map<std::string, std::string> labels;
        labels["alertname"] = str(al, "name");
        if (auto it = al.FindMember("labels"); it != al.MemberEnd() && it->value.IsObject())
          for (auto& m : it->value.GetObject())
            if (m.value.IsString())
              labels[m.name.GetString()] = m.value.GetString();
        ev_.alert_labels.push_back(std::move(labels));
        note_time(str(al, "since"));
      }
  }

  void note_time(const std::string& at) {
    if (auto t = parse_rfc3339(at))
      ev_.now = std::max(ev_.now.value_or(*t), *t);
  }

 private:
  evidence& ev_;
  const knowledge_base& kb_;
};

} // namespace

bool entity::is_service_kind() const {
  return kind.empty() || kind == "service" || kind == "database" || kind == "cache"
         || kind == "queue";
}

const entity* evidence::find(const std::string& name) const {
  auto it = entities.find(name);
  return it == entities.end() ? nullptr : &it->second;
}

const call_record* evidence::find_call(const std::string& key, std::int64_t after) const {
  for (auto it = calls.rbegin(); it != calls.rend(); ++it)
    if (it->key == key && it->step > after)
      return &*it;
  return nullptr;
}

std::string canonical_json(const std::string& json_text) {
  auto doc = json::parse(json_text);
  if (!doc)
    return json_text;
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  write_sorted(*doc, w);
  return buf.GetString();
}

std::string call_key(const std::string& tool, const std::string& args_json) {
  return tool + " " + canonical_json(args_json);
}

evidence collect_evidence(const std::vector<step>& steps, const knowledge_base& kb,
                          std::int64_t before) {
  evidence ev;
  builder b{ev, kb};
  for (auto& s : steps) {
    if (s.kind != step_kind::tool || s.state == step_state::intent
        || s.state == step_state::cancelled || (before > 0 && s.n >= before))
      continue;
    ev.last_step = std::max(ev.last_step, s.n);
    call_record c;
    c.step = s.n;
    c.tool = s.tool;
    c.args = canonical_json(s.args);
    c.key = s.tool + " " + c.args;
    c.ok = s.state == step_state::succeeded;
    c.error = s.error;
    rapidjson::Document result;
    if (c.ok) {
      auto doc = json::parse(s.result.empty() ? "{}" : s.result);
      if (doc && doc->IsObject()) {
        result = std::move(*doc);
        if (auto it = result.FindMember("ok"); it != result.MemberEnd() && it->value.IsFalse()) {
          c.ok = false;
          c.error = str(result, "error");
        }
      } else if (!s.result_truncated) {
        c.ok = false;
        c.error = "the result is not a JSON object";
      }
    }
    bool mutation = kb.is_remedy_tool(s.tool);
    c.mutation = mutation && s.state != step_state::failed;
    if (c.mutation && ev.first_mutation == 0)
      ev.first_mutation = s.n;
    ev.calls.push_back(c);
    if (!c.ok || !result.IsObject())
      continue;
    if (auto now = str(result, "now"); !now.empty())
      b.note_time(now);
    auto args = json::parse(s.args.empty() ? "{}" : s.args);
    rapidjson::Value no_args(rapidjson::kObjectType);
    const rapidjson::Value& a = args && args->IsObject() ? static_cast<rapidjson::Value&>(*args)
                                                         : no_args;
    if (s.tool == "topology.get")
      b.topology(result);
    else if (s.tool == "service.describe")
      b.describe_service(result, s.n, true);
    else if (s.tool == "host.describe")
      b.describe_host(result, s.n);
    else if (s.tool == "metrics.query")
      b.metrics(result, s.n);
    else if (s.tool == "logs.search")
      b.logs(result, s.n, str(a, "service"));
    else if (s.tool == "deploys.list")
      b.deploys(result, s.n, a);
    else if (s.tool == "flags.list")
      b.flags(result, s.n);
    else if (s.tool == "jobs.list")
      b.jobs(result, s.n);
    else if (s.tool == "alerts.list")
      b.alerts(result);
  }
  return ev;
}

// -- time ----------------------------------------------------------------------------------------

namespace {

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

} // namespace

std::optional<std::int64_t> parse_rfc3339(const std::string& s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, used = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) < 6)
    return std::nullopt;
  std::size_t i = static_cast<std::size_t>(used);
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    }
  std::int64_t offset = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &oh, &om) == 2)
      offset = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  }
  return days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400
         + h * 3600 + mi * 60 + sec - offset;
}

std::optional<std::int64_t> parse_window(const std::string& s) {
  if (s.size() < 2)
    return std::nullopt;
  std::int64_t n = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return std::nullopt;
    n = n * 10 + (s[i] - '0');
  }
  switch (s.back()) {
    case 's': return n;
    case 'm': return n * 60;
    case 'h': return n * 3600;
    case 'd': return n * 86400;
    default: return std::nullopt;
  }
}

// -- conditions ----------------------------------------------------------------------------------

std::optional<double> current_value(const entity& e, const std::string& metric, step_range r,
                                    std::int64_t* at_step) {
  for (auto it = e.snapshots.rbegin(); it != e.snapshots.rend(); ++it) {
    if (!r.contains(it->step))
      continue;
    if (auto m = it->current.find(metric); m != it->current.end()) {
      if (at_step)
        *at_step = it->step;
      return m->second;
    }
  }
  return std::nullopt;
}

std::optional<double> baseline_value(const entity& e, const std::string& metric, step_range) {
  // Baselines do not change with actions: any observation will do.
  for (auto it = e.snapshots.rbegin(); it != e.snapshots.rend(); ++it)
    if (auto m = it->baseline.find(metric); m != it->baseline.end())
      return m->second;
  return std::nullopt;
}

namespace {

std::optional<double> field_value(const entity& e, const std::string& name, step_range r) {
  if (auto v = current_value(e, name, r))
    return v;
  // Fields like max_connections change with actions: prefer the observation within the range.
  for (auto it = e.snapshots.rbegin(); it != e.snapshots.rend(); ++it)
    if (auto m = it->fields.find(name); r.contains(it->step) && m != it->fields.end())
      return m->second;
  return baseline_value(e, name, r);
}

std::optional<double> rhs_value(const comparison& c, const entity& e, step_range r) {
  if (c.ref.empty())
    return c.constant;
  auto v = c.ref == "baseline" ? baseline_value(e, c.metric, r) : field_value(e, c.ref, r);
  if (!v)
    return std::nullopt;
  return c.factor * *v;
}

bool compare(double a, const std::string& op, double b) {
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == "==") return a == b;
  return a != b;
}

} // namespace

std::optional<bool> evaluate(const condition& c, const entity& e, step_range r,
                             std::int64_t* at_step) {
  bool all = true;
  for (auto& cmp : c.all) {
    auto lhs = current_value(e, cmp.metric, r, at_step);
    auto rhs = rhs_value(cmp, e, r);
    if (!lhs || !rhs)
      return std::nullopt;
    all = all && compare(*lhs, cmp.op, *rhs);
  }
  return all;
}

std::string describe_values(const condition& c, const entity& e, step_range r) {
  std::string out;
  std::set<std::string> seen;
  for (auto& cmp : c.all) {
    if (!seen.insert(cmp.metric).second)
      continue;
    auto v = current_value(e, cmp.metric, r);
    if (!v)
      continue;
    if (!out.empty())
      out += ", ";
    out += fmt::format("{} {:g}", cmp.metric, *v);
    if (auto b = baseline_value(e, cmp.metric, r))
      out += fmt::format(" (baseline {:g})", *b);
    else if (!cmp.ref.empty() && cmp.ref != "baseline")
      if (auto f = field_value(e, cmp.ref, r))
        out += fmt::format(" ({} {:g})", cmp.ref, *f);
  }
  return out;
}

std::map<std::string, std::string> anomalies(const knowledge_base& kb, const entity& e,
                                             step_range r) {
  std::map<std::string, std::string> out;
  for (auto& a : kb.anomalies)
    if (!out.contains(a.cls) && evaluate(a.when, e, r).value_or(false))
      out[a.cls] = describe_values(a.when, e, r);
  return out;
}

bool observed(const entity& e, step_range r) {
  return std::any_of(e.snapshots.begin(), e.snapshots.end(),
                     [&](const snapshot& s) { return r.contains(s.step); });
}

} // namespace sreh::plugins::reasoner
