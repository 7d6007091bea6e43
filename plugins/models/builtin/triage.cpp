#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <set>

#include "core/base/json.hpp"
#include "core/conversation/follow_up.hpp"
#include "plugins/models/builtin/engine.hpp"

namespace sreh::plugins::reasoner {

namespace {

/// The caller's classes that the dependency's classes can cause.
std::set<std::string> propagated(const knowledge_base& kb,
                                 const std::map<std::string, std::string>& dep,
                                 const std::map<std::string, std::string>& caller) {
  std::set<std::string> out;
  for (auto& [d, _] : dep) {
    auto it = kb.propagation.find(d);
    if (it == kb.propagation.end())
      continue;
    for (auto& c : it->second)
      if (caller.contains(c))
        out.insert(c);
  }
  return out;
}

} // namespace

std::string classes_text(const std::map<std::string, std::string>& cls) {
  std::string out;
  for (auto& [c, why] : cls)
    out += fmt::format("{}{} ({})", out.empty() ? "" : "; ", c, why);
  return out;
}

std::vector<goal_cue> cues_of(const situation& sit) {
  auto out = sit.kb.cues_in(sit.r.goal);
  auto known = [&out](const failure_mode* mode) {
    return std::any_of(out.begin(), out.end(), [&](const goal_cue& c) { return c.mode == mode; });
  };
  // What the run it follows up found, before what memory recalls: the same team asked for it.
  if (auto f = conversation::follow_up_of(sit.r.spec))
    for (const auto& p : f->priors)
      if (const auto* mode = sit.kb.find(p.kind); mode != nullptr && !known(mode)) {
        out.push_back({mode, p.kind, 0, "", f->of});
      }
  for (const auto& m : sit.ev.memories) {
    auto f = m.c.labels.find("fault");
    const auto* mode = f == m.c.labels.end() ? nullptr : sit.kb.find(f->second);
    if (mode == nullptr || known(mode))
      continue;
    out.push_back({mode, f->second, 0, fmt::format("{} v{}", m.c.id, m.c.version), ""});
  }
  return out;
}

namespace {

/// One walk down the call graph from the focus. A step returns false when the walk stops for a
/// call (`t_.next`).
class walker {
 public:
  walker(const situation& sit, step_range range, const walk_options& opts)
    : sit_(sit), kb_(sit.kb), ev_(sit.ev), range_(range), opts_(opts) {}

  triage_result run() {
    t_.cues = cues_of(sit_);
    if (!prepare() || !check_first())
      return t_;
    for (auto& [name, kind] : focus_) {
      t_.focus.push_back(name);
      if (opts_.frontier.empty())
        queue_.push_back(name);
      else if (visited_.insert(name).second && !look(name))
        return t_;
    }
    // From the frontier one branch at a time: the first that holds an unexplained anomaly is
    // this round's; the rest stay set aside for a later one.
    for (std::size_t i = 0; i < opts_.frontier.size(); ++i) {
      if (!t_.leaves.empty()) {
        for (auto& [name, caller] : std::vector(opts_.frontier.begin() + i, opts_.frontier.end()))
          if (!visited_.contains(name)) {
            t_.deferred.push_back(name);
            t_.deferred_by.try_emplace(name, caller);
          }
        break;
      }
      auto& [name, caller] = opts_.frontier[i];
      t_.parent.try_emplace(name, caller);
      queue_.push_back(name);
      if (!drain())
        return t_;
    }
    if (!drain())
      return t_;
    finish();
    return t_;
  }

 private:
  enum class sight { seen, unseen, call };

  /// Visits what is queued; false when the walk stops for a call.
  bool drain() {
    while (!queue_.empty()) {
      auto name = queue_.front();
      queue_.pop_front();
      if (visited_.insert(name).second && !visit(name))
        return false;
    }
    return true;
  }

  bool stop(planned_call c, std::string why) {
    c.why = std::move(why);
    t_.next = std::move(c);
    return false;
  }

  /// The graph, and the focus: the alerted entities, or the unhealthy jobs the goal speaks of.
  bool prepare() {
    auto topo = sit_.tools.topology();
    if (topo && !ev_.topology_known && !attempted(ev_, *topo, range_) && opts_.allow_calls)
      return stop(*topo, "learn the call graph, hosts and jobs");
    t_.focus_source = find_focus(ev_, sit_.r, focus_);
    if (t_.focus_source.empty()) {
      auto alerts = sit_.tools.alerts();
      if (alerts && opts_.allow_calls && !attempted(ev_, *alerts, range_))
        return stop(*alerts, "neither the labels nor the goal name an entity");
      t_.focus_source = "none";
    }
    if (!goal_mentions_jobs(sit_.r.goal, ev_) ||
        std::any_of(focus_.begin(), focus_.end(), [](auto& f) { return f.second == "job"; }))
      return true;
    auto jobs = sit_.tools.listing("job");
    if (jobs && !attempted(ev_, *jobs, range_))
      return !opts_.allow_calls || stop(*jobs, "the goal mentions jobs: which ones are unhealthy?");
    for (auto& name : ev_.order) {
      auto& e = ev_.entities.at(name);
      if (e.kind == "job" && observed(e, range_) && !anomalies(kb_, e, range_).empty())
        focus_.emplace_back(name, "job");
    }
    return true;
  }

  /// What people asked to check first (docs/conversation.md, "Steering"), resolved against the
  /// entities the run knows: a name, or a kind ("the cache"). Only the messages taken in this
  /// walk's range count: "first" is about the checks that follow the message.
  void resolve_checks_first() {
    if (sit_.checks_first == nullptr)
      return;
    std::vector<conversation::known_entity> known;
    for (auto& n : ev_.order)
      known.emplace_back(n, ev_.entities.at(n).kind);
    for (const auto& d : *sit_.checks_first) {
      if (d.step < range_.from)
        continue;
      for (auto& n : conversation::resolve(d.entity, known))
        if (ev_.find(n) != nullptr &&
            std::none_of(checks_.begin(), checks_.end(), [&](auto& c) { return c.first == n; }))
          checks_.emplace_back(n, &d);
    }
  }

  /// Describes each entity asked for first before the walk's own checks; false when the walk
  /// stops for such a call. The walk reaches them again by the call graph, already seen.
  bool check_first() {
    resolve_checks_first();
    for (auto& [name, d] : checks_) {
      auto& e = ev_.entities.at(name);
      auto s =
        observe(name, e.kind,
                fmt::format("{} asked at step {} to check {} first", d->author, d->step, name));
      if (s == sight::call)
        return false;
      if (s == sight::seen && !t_.checked_first.contains(name)) {
        t_.checked_first.insert(name);
        auto cls = classes_of(e);
        t_.observations.push_back(
          {last_seen(e),
           fmt::format("{} checked first, as {} asked at step {}: {}", name, d->author, d->step,
                       cls.empty() ? std::string{"healthy"} : classes_text(cls)),
           0});
      }
    }
    return true;
  }

  /// Whether an entity asked for first is `name` or lies below it in the call graph.
  [[nodiscard]] bool leads_to_checked(const std::string& name) const {
    if (checks_.empty())
      return false;
    std::set<std::string> seen{name};
    std::deque<std::string> todo{name};
    while (!todo.empty()) {
      auto n = todo.front();
      todo.pop_front();
      if (std::any_of(checks_.begin(), checks_.end(), [&](auto& c) { return c.first == n; }))
        return true;
      if (const auto* e = ev_.find(n))
        for (auto& d : e->calls)
          if (seen.insert(d).second)
            todo.push_back(d);
    }
    return false;
  }

  /// An entity's dependencies in the order the walk follows them: the branches that lead to an
  /// entity asked for first go first, the rest as the call graph lists them.
  [[nodiscard]] std::vector<std::string> calls_in_order(const entity& e) const {
    auto out = e.calls;
    std::stable_partition(out.begin(), out.end(),
                          [&](const std::string& d) { return leads_to_checked(d); });
    return out;
  }

  /// One entity of the walk: healthy, or anomalous and explained (or not) by its dependencies.
  bool visit(const std::string& name) {
    auto s = observe(name, kind_hint(name), fmt::format("is {} anomalous?", name));
    if (s != sight::seen)
      return s == sight::unseen;
    auto& e = ev_.entities.at(name);
    auto at = last_seen(e);
    // The walk reaches only alerted entities and dependencies that may explain an anomalous
    // caller: a symptom points at each, so the mild bar applies.
    auto cls = classes_of(e);
    t_.classes[name] = cls;
    if (cls.empty()) {
      healthy_.insert(name);
      t_.observations.push_back({at, fmt::format("{} is healthy", name), 0});
      return true;
    }
    t_.observations.push_back({at, fmt::format("{} is anomalous: {}", name, classes_text(cls)), 0});
    bool self = false;
    if (!probe(name, e, at, self))
      return false;
    std::vector<std::string> explaining;
    std::set<std::string> covered; // classes of `name` that some dependency explains
    for (auto& d : calls_in_order(e))
      if (!follow(name, cls, self, d, explaining, covered))
        return false;
    descend(name, explaining);
    // An anomaly no dependency can cause (its own load, memory, restarts) makes the entity a
    // suspect of its own, whatever its dependencies explain.
    if (explaining.empty() || self || intrinsic(cls))
      t_.leaves.push_back(name);
    return true;
  }

  /// An alerted entity in a walk from the frontier: its anomalies are recorded (the remedies are
  /// verified against them), its calls are not followed.
  bool look(const std::string& name) {
    auto s = observe(name, kind_hint(name), fmt::format("is {} still anomalous?", name));
    if (s != sight::seen)
      return s == sight::unseen;
    auto& e = ev_.entities.at(name);
    auto cls = classes_of(e);
    t_.classes[name] = cls;
    if (cls.empty())
      healthy_.insert(name);
    t_.observations.push_back(
      {last_seen(e),
       cls.empty() ? fmt::format("{} is healthy", name)
                   : fmt::format("{} is anomalous: {}; look first where the last round set "
                                 "branches aside",
                                 name, classes_text(cls)),
       0});
    return true;
  }

  /// Walks on into the explaining dependencies of `name`. One that explains only part of what
  /// another explains is redundant (the other suffices): it waits on the frontier (`deferred`)
  /// for a backtrack, unless this walk is a sweep.
  void descend(const std::string& name, const std::vector<std::string>& explaining) {
    for (auto& d : explaining) {
      bool redundant =
        !opts_.sweep && std::any_of(explaining.begin(), explaining.end(),
                                    [&](auto& o) { return explains_more(name, o, d); });
      if (redundant) {
        t_.deferred.push_back(d);
        t_.deferred_by.try_emplace(d, name);
        t_.observations.push_back(
          {0, fmt::format("{} explains less of {} than a sibling does: left for later", d, name),
           0});
        continue;
      }
      t_.parent.try_emplace(d, name);
      queue_.push_back(d);
    }
  }

  /// The entity's anomalies at the mild bar; on an entity an earlier round treated, without
  /// the classes that stay after a good remedy (a restart counter).
  [[nodiscard]] std::map<std::string, std::string> classes_of(const entity& e) const {
    auto cls = anomalies(kb_, e, range_, true);
    if (opts_.treated.contains(e.name))
      for (auto& s : kb_.limits.sticky_classes)
        cls.erase(s);
    return cls;
  }

  /// The extra p99 of an entity over its baseline, when both are known.
  [[nodiscard]] std::optional<double> extra_latency(const entity& x) const {
    auto v = current_value(x, "latency_p99_ms", range_);
    auto b = baseline_value(x, "latency_p99_ms", range_);
    if (!v || !b)
      return std::nullopt;
    return *v - *b;
  }

  /// Whether dependency `o` of `name` explains at least what `d` does: more classes, or the same
  /// with more extra latency.
  [[nodiscard]] bool explains_more(const std::string& name, const std::string& o,
                                   const std::string& d) {
    auto& mine = causes_[{name, d}];
    auto& theirs = causes_[{name, o}];
    if (o == d || !std::includes(theirs.begin(), theirs.end(), mine.begin(), mine.end()))
      return false;
    if (theirs.size() > mine.size())
      return true;
    if (!mine.contains("latency"))
      return false;
    auto a = extra_latency(ev_.entities.at(o)), b = extra_latency(ev_.entities.at(d));
    return a && b && *a > *b;
  }

  [[nodiscard]] bool intrinsic(const std::map<std::string, std::string>& cls) const {
    return std::any_of(cls.begin(), cls.end(), [&](auto& c) {
      return std::none_of(kb_.propagation.begin(), kb_.propagation.end(), [&](auto& p) {
        return std::find(p.second.begin(), p.second.end(), c.first) != p.second.end();
      });
    });
  }

  /// The dependency's classes that can explain the caller's: a slower dependency explains its
  /// caller's latency only if the caller is slower by a fair share of it (it waits on it).
  [[nodiscard]] std::map<std::string, std::string>
  explaining_classes(const entity& caller, const entity& dep,
                     std::map<std::string, std::string> dcls) const {
    if (!dcls.contains("latency"))
      return dcls;
    auto c = extra_latency(caller), d = extra_latency(dep);
    if (c && d && *d > 0 && *c < kb_.limits.latency_explain_share * *d)
      dcls.erase("latency");
    return dcls;
  }

  /// Below the alerted entities, a suspect that a cued change explains by itself is a leaf: its
  /// dependencies are not described one by one (they wait for the sweep or a later round).
  bool probe(const std::string& name, const entity& e, std::int64_t at, bool& self) {
    auto unseen = std::count_if(e.calls.begin(), e.calls.end(),
                                [&](const std::string& d) { return !known(d); });
    if (t_.cues.empty() || unseen == 0 || e.calls.empty() || !t_.parent.contains(name))
      return true;
    auto p = probe_self(sit_, name, range_, opts_.global, t_.cues);
    if (p.next && opts_.allow_calls && !opts_.sweep) {
      t_.next = *p.next;
      return false;
    }
    if (p.self_explained) {
      self = true;
      t_.observations.push_back({at, fmt::format("{} explains itself: {}", name, p.why), 0});
    }
    return true;
  }

  /// Whether the dependencies seen so far explain every class of `cls` a dependency can cause.
  [[nodiscard]] bool all_covered(const std::map<std::string, std::string>& cls,
                                 const std::set<std::string>& covered) const {
    return std::all_of(cls.begin(), cls.end(), [&](auto& c) {
      return covered.contains(c.first) || intrinsic({{c.first, {}}});
    });
  }

  /// Dependency `d` of the anomalous `name`: healthy, explaining (walked next), off the path,
  /// or deferred once dependencies explain every class of `name`'s anomaly.
  bool follow(const std::string& name, const std::map<std::string, std::string>& cls, bool self,
              const std::string& d, std::vector<std::string>& explaining,
              std::set<std::string>& covered) {
    auto* de = ev_.find(d);
    if ((self || (!explaining.empty() && all_covered(cls, covered))) && !opts_.sweep && !known(d)) {
      t_.deferred.push_back(d); // one explanation is enough to go deeper
      t_.deferred_by.try_emplace(d, name);
      return true;
    }
    auto s = observe(d, de && !de->kind.empty() ? de->kind : "service",
                     fmt::format("{} is anomalous; does its dependency {} explain it?", name, d));
    if (s != sight::seen)
      return s == sight::unseen;
    auto dcls = classes_of(*de);
    if (dcls.empty()) {
      if (healthy_.insert(d).second && !visited_.contains(d))
        t_.observations.push_back({last_seen(*de), fmt::format("{} is healthy", d), 0});
    } else if (auto causes =
                 propagated(kb_, explaining_classes(ev_.entities.at(name), *de, dcls), cls);
               !causes.empty()) {
      covered.insert(causes.begin(), causes.end());
      explaining.push_back(d);
      causes_[{name, d}] = std::move(causes);
    } else if (std::find(t_.off_path.begin(), t_.off_path.end(), d) == t_.off_path.end()) {
      t_.off_path.push_back(d);
      t_.classes[d] = dcls;
    }
    return true;
  }

  /// Whether `name` is observed in the range; else the call that would describe it.
  sight observe(const std::string& name, const std::string& kind_hint, const std::string& why) {
    if (known(name))
      return sight::seen;
    auto* e = ev_.find(name);
    auto call = sit_.tools.describe(name, e ? e->kind : kind_hint);
    if (!call)
      return sight::unseen; // no tool describes it
    if (attempted(ev_, *call, range_)) {
      if (std::find(t_.unobservable.begin(), t_.unobservable.end(), name) == t_.unobservable.end())
        t_.unobservable.push_back(name);
      return sight::unseen;
    }
    if (!opts_.allow_calls)
      return sight::unseen;
    stop(*call, why);
    return sight::call;
  }

  /// Off-path entities that the walk reached after all are not off the path.
  void finish() {
    auto& focus = t_.focus;
    std::erase_if(t_.off_path, [&](auto& n) {
      return t_.parent.contains(n) || std::find(focus.begin(), focus.end(), n) != focus.end();
    });
    for (auto& n : t_.off_path)
      t_.observations.push_back(
        {0,
         fmt::format("{} is anomalous ({}) but that does not explain its callers' symptoms: off "
                     "the failing path",
                     n, classes_text(t_.classes[n])),
         0});
    t_.healthy.assign(healthy_.begin(), healthy_.end());
  }

  /// Observed in the range, or seen healthy by an earlier round.
  [[nodiscard]] bool known(const std::string& name) const {
    auto* e = ev_.find(name);
    return e && (observed(*e, range_) || opts_.known_healthy.contains(name));
  }

  [[nodiscard]] std::string kind_hint(const std::string& name) const {
    for (auto& [n, k] : focus_)
      if (n == name)
        return k;
    return "service";
  }

  /// The step of the entity's latest snapshot in the range.
  [[nodiscard]] std::int64_t last_seen(const entity& e) const {
    std::int64_t at = 0;
    for (auto& s : e.snapshots)
      if (range_.contains(s.step))
        at = s.step;
    return at;
  }

  const situation& sit_;
  const knowledge_base& kb_;
  const evidence& ev_;
  step_range range_;
  const walk_options& opts_;
  triage_result t_;
  std::vector<std::pair<std::string, std::string>> focus_;
  std::deque<std::string> queue_;
  std::set<std::string> visited_, healthy_;
  /// The entities asked for first, each with the message that asked.
  std::vector<std::pair<std::string, const conversation::directive*>> checks_;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> causes_; // caller, dep
};

} // namespace

triage_result triage(const situation& sit, step_range range, const walk_options& opts) {
  return walker{sit, range, opts}.run();
}

} // namespace sreh::plugins::reasoner
