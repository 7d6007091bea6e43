// The evidence as a value that grows one step at a time: each tool step's call, and its typed
// observations folded into entities, logs, deploys, flags and alerts.
#include "plugins/models/builtin/evidence.hpp"

#include <algorithm>
#include <variant>

#include "actors/tools/tool.hpp"

namespace sreh::plugins::reasoner {

namespace {

void merge_name(std::vector<std::string>& dst, const std::string& name) {
  if (std::find(dst.begin(), dst.end(), name) == dst.end())
    dst.push_back(name);
}

/// Folds one step's observations into the evidence; entities are registered in the order the
/// observations first name them.
class folder {
 public:
  folder(evidence& ev, std::int64_t step, timestamp_us taken_at)
    : ev_(ev), step_(step), taken_at_(taken_at) {}

  void operator()(const obs::topology& t) {
    ev_.topology_known = ev_.topology_known || t.complete;
    for (auto& e : t.entities)
      at(e);
    for (auto& e : t.edges)
      link(e);
  }

  void operator()(const obs::metric_sample& m) {
    snapshot s{step_, m.current, m.baseline, m.fields, m.version, taken_at_, m.settle_ms};
    at(m.entity).snapshots.push_back(std::move(s));
    note_time(m.at);
  }

  void operator()(const obs::log_lines& l) {
    for (auto& line : l.lines)
      note_time(line.at);
    at(l.entity);
    ev_.logs[l.entity].push_back({step_, l.lines});
  }

  void operator()(const obs::deploy_list& d) {
    ev_.deploys.push_back({step_, d.service, d.window, d.deploys});
  }

  void operator()(const obs::flag_list& f) {
    ev_.flags = f.flags;
    ev_.flags_step = step_;
  }

  void operator()(const obs::alert_list& a) {
    ev_.alerts_known = true;
    for (auto& al : a.alerts) {
      auto labels = al.labels;
      labels["alertname"] = al.name;
      ev_.alert_labels.push_back(std::move(labels));
      note_time(al.since);
    }
  }

  void operator()(const obs::call_failed&) {}

  void operator()(const obs::past_cases& p) {
    for (const auto& c : p.cases)
      ev_.memories.push_back({step_, c});
  }

 private:
  entity& at(const std::string& name, const std::string& kind = {}) {
    auto [it, fresh] = ev_.entities.try_emplace(name);
    if (fresh) {
      it->second.name = name;
      ev_.order.push_back(name);
    }
    // A dependency first seen as a name is a service until a description says more.
    if (!kind.empty() && (it->second.kind.empty() || it->second.kind == "service"))
      it->second.kind = kind;
    return it->second;
  }

  entity& at(const obs::entity_ref& r) {
    auto& e = at(r.name, r.kind);
    if (!r.subkind.empty())
      e.subkind = r.subkind;
    return e;
  }

  void link(const obs::edge& e) {
    switch (e.rel) {
    case obs::relation::calls:
      merge_name(at(e.from).calls, e.to);
      merge_name(at(e.to).called_by, e.from);
      break;
    case obs::relation::runs_on:
      merge_name(at(e.from).hosts, e.to);
      merge_name(at(e.to, "host").services, e.from);
      break;
    case obs::relation::job_on: {
      auto& job = at(e.from, "job");
      merge_name(job.calls, e.to); // a job depends on its hosts
      merge_name(job.hosts, e.to);
      merge_name(at(e.to, "host").jobs, e.from);
      break;
    }
    }
  }

  void note_time(const std::string& at) {
    if (auto t = parse_rfc3339(at))
      ev_.now = std::max(ev_.now.value_or(*t), *t);
  }

  evidence& ev_;
  std::int64_t step_;
  timestamp_us taken_at_;
};

/// The call a step made, failed when its result says so.
call_record record_of(const step& s, const obs::observations& seen, bool remedy) {
  call_record c;
  c.step = s.n;
  c.tool = s.tool;
  c.args = canonical_json(s.args);
  c.key = s.tool + " " + c.args;
  c.ok = s.state == step_state::succeeded;
  c.error = s.error;
  for (auto& o : seen)
    if (auto* f = std::get_if<obs::call_failed>(&o)) {
      c.ok = false;
      c.error = f->reason;
    }
  c.mutation = remedy && s.state != step_state::failed;
  c.finished_at = s.finished_at;
  return c;
}

bool performs_remedy(const actors::tool_registry& tools, const std::string& name) {
  auto t = tools.find(name);
  if (!t)
    return false;
  auto caps = t->provides();
  return std::any_of(caps.begin(), caps.end(), [](const obs::capability& c) {
    return c.kind == obs::capability_kind::remedy;
  });
}

} // namespace

bool entity::is_service_kind() const {
  return kind.empty() || kind == "service" || kind == "database" || kind == "cache" ||
         kind == "queue";
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

void evidence::add(const step& s, const obs::observations& seen, bool remedy) {
  last_step = std::max(last_step, s.n);
  auto c = record_of(s, seen, remedy);
  if (c.mutation && first_mutation == 0)
    first_mutation = s.n;
  calls.push_back(c);
  if (!c.ok)
    return;
  folder f{*this, s.n, s.executed_at > 0 ? s.executed_at : s.started_at};
  for (auto& o : seen)
    std::visit(f, o);
}

bool is_evidence(const step& s) {
  return s.kind == step_kind::tool && s.state != step_state::intent &&
         s.state != step_state::cancelled;
}

// -- the journal ---------------------------------------------------------------------------------

bool evidence_journal::seen_step::same(const step& s) const {
  return head.n == s.n && head.kind == s.kind && head.state == s.state &&
         head.attempts == s.attempts && head.tool == s.tool && head.args == s.args &&
         head.error == s.error && result_size == s.result.size();
}

evidence_journal::seen_step evidence_journal::read(const step& s,
                                                   const actors::tool_registry& tools) {
  seen_step out;
  out.head = s;
  out.head.result.clear();
  out.head.decision.clear();
  out.result_size = s.result.size();
  out.counts = is_evidence(s);
  if (out.counts) {
    out.remedy = performs_remedy(tools, s.tool);
    out.observed = tools.observations_of(s);
  }
  return out;
}

void evidence_journal::catch_up(const std::vector<step>& steps,
                                const actors::tool_registry& tools) {
  bool valid = seen_.size() <= steps.size();
  for (std::size_t i = 0; valid && i < seen_.size(); ++i)
    valid = seen_[i].same(steps[i]);
  if (!valid)
    *this = {}; // a step seen before changed (re-run after a recovery): start over
  std::size_t i = seen_.size();
  for (; i < steps.size(); ++i) {
    if (steps[i].kind == step_kind::tool && steps[i].state == step_state::intent)
      break; // read once it has its outcome
    seen_.push_back(read(steps[i], tools));
    if (seen_.back().counts)
      ev_.add(seen_.back().head, seen_.back().observed, seen_.back().remedy);
  }
  // Steps with outcomes behind one without (decisions normally follow outcomes): counted on a
  // copy, and read again next time.
  tail_.reset();
  tail_seen_.clear();
  for (++i; i < steps.size(); ++i)
    if (is_evidence(steps[i])) {
      if (!tail_)
        tail_ = ev_;
      tail_seen_.push_back(read(steps[i], tools));
      tail_->add(tail_seen_.back().head, tail_seen_.back().observed, tail_seen_.back().remedy);
    }
}

evidence evidence_journal::before(std::int64_t n) const {
  evidence ev;
  for (auto* part : {&seen_, &tail_seen_})
    for (auto& s : *part)
      if (s.counts && s.head.n < n)
        ev.add(s.head, s.observed, s.remedy);
  return ev;
}

} // namespace sreh::plugins::reasoner
