#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <set>

#include "plugins/models/builtin/engine.hpp"
#include "core/base/json.hpp"

namespace sreh::plugins::reasoner {

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::vector<std::string> split_name(const std::string& name) {
  std::vector<std::string> out(1);
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!out.back().empty())
        out.emplace_back();
    } else {
      out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (out.back().empty())
    out.pop_back();
  return out;
}

/// Where a multi-part name is paraphrased in `text` ("the fraud model stopped training" for
/// `fraud-train`): every part starts a distinct word. npos when it is not.
std::size_t paraphrase_at(const std::string& text, const std::string& name) {
  auto parts = split_name(name);
  if (parts.size() < 2)
    return std::string::npos;
  std::vector<std::pair<std::size_t, std::string>> words;
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && !std::isalnum(static_cast<unsigned char>(text[i])))
      ++i;
    auto start = i;
    std::string w;
    while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])))
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i++])));
    if (!w.empty())
      words.emplace_back(start, std::move(w));
  }
  std::size_t first = std::string::npos;
  std::vector<bool> used(words.size());
  for (auto& p : parts) {
    bool found = false;
    for (std::size_t k = 0; k < words.size() && !found; ++k)
      if (!used[k] && words[k].second.rfind(p, 0) == 0) {
        used[k] = found = true;
        first = std::min(first, words[k].first);
      }
    if (!found)
      return std::string::npos;
  }
  return first;
}

/// Entity names that occur as whole words in `text` (or paraphrased part by part), in order of
/// first occurrence.
std::vector<std::string> names_in(const std::string& text, const evidence& ev) {
  std::vector<std::pair<std::size_t, std::string>> hits;
  for (auto& name : ev.order) {
    if (auto at = paraphrase_at(text, name); at != std::string::npos
        && text.find(name) == std::string::npos) {
      hits.emplace_back(at, name);
      continue;
    }
    for (auto pos = text.find(name); pos != std::string::npos; pos = text.find(name, pos + 1)) {
      bool left = pos == 0 || !is_name_char(text[pos - 1]);
      auto end = pos + name.size();
      // A trailing '.' ends a sentence; it does not continue the name.
      bool right = end == text.size() || !is_name_char(text[end])
                   || (text[end] == '.' && (end + 1 == text.size() || !is_name_char(text[end + 1])));
      if (left && right) {
        hits.emplace_back(pos, name);
        break;
      }
    }
  }
  std::sort(hits.begin(), hits.end(), [](auto& a, auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.size() > b.second.size();
  });
  std::vector<std::string> out;
  for (auto& [pos, name] : hits)
    if (std::none_of(out.begin(), out.end(), [&](auto& o) {
          return o.find(name) != std::string::npos && o != name;  // "orders" inside "orders-db"
        }))
      out.push_back(name);
  return out;
}

bool attempted(const evidence& ev, const planned_call& c, step_range r) {
  auto key = call_key(c.tool, c.args);
  return std::any_of(ev.calls.begin(), ev.calls.end(),
                     [&](const call_record& x) { return x.key == key && r.contains(x.step); });
}

bool propagates(const knowledge_base& kb, const std::map<std::string, std::string>& dep,
                const std::map<std::string, std::string>& caller) {
  for (auto& [d, _] : dep) {
    auto it = kb.propagation.find(d);
    if (it == kb.propagation.end())
      continue;
    for (auto& c : it->second)
      if (caller.contains(c))
        return true;
  }
  return false;
}

std::string classes_text(const std::map<std::string, std::string>& cls) {
  std::string out;
  for (auto& [c, why] : cls)
    out += fmt::format("{}{} ({})", out.empty() ? "" : "; ", c, why);
  return out;
}

/// The alerted entities: run labels, else names in the goal, else firing alerts, else roots.
/// Returns the source, or "" when the alerts must be listed first.
std::string find_focus(const evidence& ev, const run& r,
                       std::vector<std::pair<std::string, std::string>>& out) {
  auto add = [&](const std::string& name, const std::string& kind) {
    if (!name.empty() && std::none_of(out.begin(), out.end(), [&](auto& f) { return f.first == name; }))
      out.emplace_back(name, kind);
  };
  auto kind_of = [&](const std::string& name, const std::string& key) {
    if (auto* e = ev.find(name); e && !e->kind.empty())
      return e->kind;
    return key == "host" || key == "job" ? key : std::string{"service"};
  };
  if (auto labels = json::parse(r.labels); labels && labels->IsObject()) {
    for (const char* key : {"service", "database", "host", "job", "target"})
      if (auto it = labels->FindMember(key); it != labels->MemberEnd() && it->value.IsString())
        add(it->value.GetString(), kind_of(it->value.GetString(), key));
    if (ev.topology_known)
      for (auto& m : labels->GetObject())
        if (m.value.IsString() && ev.find(m.value.GetString()))
          add(m.value.GetString(), kind_of(m.value.GetString(), ""));
  }
  bool labelled = !out.empty();
  for (auto& n : names_in(r.goal, ev))
    add(n, kind_of(n, ""));
  if (!out.empty())
    return labelled ? "labels" : "goal";
  if (!ev.alerts_known)
    return "";
  for (auto& labels : ev.alert_labels)
    for (const char* key : {"service", "database", "host", "job"})
      if (auto it = labels.find(key); it != labels.end() && (ev.find(it->second) || !ev.topology_known))
        add(it->second, kind_of(it->second, key));
  if (!out.empty())
    return "alerts";
  for (auto& name : ev.order) {
    auto& e = ev.entities.at(name);
    if ((e.is_service_kind() && e.called_by.empty() && !e.calls.empty()) || e.kind == "job")
      add(name, e.kind);
  }
  return "roots";
}

/// True when the goal speaks of jobs ("a training job stalled") and the topology has some.
bool goal_mentions_jobs(const std::string& goal, const evidence& ev) {
  std::set<std::string> words;
  std::string w;
  for (char c : goal + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      words.insert(std::move(w));
      w.clear();
    }
  }
  bool any_job = false;
  for (auto& [name, e] : ev.entities) {
    if (e.kind != "job")
      continue;
    any_job = true;
    if (!e.subkind.empty() && words.contains(e.subkind))
      return true;
  }
  return any_job && (words.contains("job") || words.contains("jobs"));
}

} // namespace

triage_result triage(const situation& sit, step_range range, const walk_options& opts) {
  const auto& kb = sit.kb;
  const auto& ev = sit.ev;
  const bool allow_calls = opts.allow_calls;
  const bool sweep = opts.sweep;
  triage_result t;
  t.cues = kb.cues_in(sit.r.goal);
  auto topo = sit.tools.topology();
  if (topo && !ev.topology_known && !attempted(ev, *topo, range) && allow_calls) {
    topo->why = "learn the call graph, hosts and jobs";
    t.next = topo;
    return t;
  }
  std::vector<std::pair<std::string, std::string>> focus;
  t.focus_source = find_focus(ev, sit.r, focus);
  if (t.focus_source.empty()) {
    auto alerts = sit.tools.alerts();
    if (alerts && allow_calls && !attempted(ev, *alerts, range)) {
      alerts->why = "neither the labels nor the goal name an entity";
      t.next = alerts;
      return t;
    }
    t.focus_source = "none";
  }
  if (goal_mentions_jobs(sit.r.goal, ev)
      && std::none_of(focus.begin(), focus.end(), [](auto& f) { return f.second == "job"; })) {
    auto jobs = sit.tools.listing("job");
    if (jobs && !attempted(ev, *jobs, range)) {
      if (allow_calls) {
        jobs->why = "the goal mentions jobs: which ones are unhealthy?";
        t.next = jobs;
        return t;
      }
    } else {
      for (auto& name : ev.order) {
        auto& e = ev.entities.at(name);
        if (e.kind == "job" && observed(e, range) && !anomalies(kb, e, range).empty())
          focus.emplace_back(name, "job");
      }
    }
  }
  std::deque<std::string> queue;
  for (auto& [name, kind] : focus) {
    t.focus.push_back(name);
    queue.push_back(name);
  }
  std::set<std::string> visited, healthy;
  // Returns false when the walk must stop for a call.
  auto observe = [&](const std::string& name, const std::string& kind_hint,
                     const std::string& why) -> int {
    auto* e = ev.find(name);
    if (e && (observed(*e, range) || opts.known_healthy.contains(name)))
      return 1;
    auto call = sit.tools.describe(name, e ? e->kind : kind_hint);
    if (!call)
      return 0;  // no tool describes it
    if (attempted(ev, *call, range)) {
      if (std::find(t.unobservable.begin(), t.unobservable.end(), name) == t.unobservable.end())
        t.unobservable.push_back(name);
      return 0;
    }
    if (!allow_calls)
      return 0;
    call->why = why;
    t.next = call;
    return -1;
  };
  auto kind_hint = [&](const std::string& name) {
    for (auto& [n, k] : focus)
      if (n == name)
        return k;
    return std::string{"service"};
  };
  while (!queue.empty()) {
    auto name = queue.front();
    queue.pop_front();
    if (!visited.insert(name).second)
      continue;
    auto seen = observe(name, kind_hint(name), fmt::format("is {} anomalous?", name));
    if (seen < 0)
      return t;
    if (seen == 0)
      continue;
    auto& e = ev.entities.at(name);
    std::int64_t at = 0;
    for (auto& s : e.snapshots)
      if (range.contains(s.step))
        at = s.step;
    auto cls = anomalies(kb, e, range);
    t.classes[name] = cls;
    if (cls.empty()) {
      healthy.insert(name);
      t.observations.push_back({at, fmt::format("{} is healthy", name), 0});
      continue;
    }
    t.observations.push_back({at, fmt::format("{} is anomalous: {}", name, classes_text(cls)), 0});
    // Below the alerted entities, a suspect that a cued change explains by itself is a leaf: its
    // dependencies are not described one by one (they wait for the sweep or a later round).
    bool self = false;
    auto unseen = std::count_if(e.calls.begin(), e.calls.end(), [&](const std::string& d) {
      auto* de = ev.find(d);
      return !(de && (observed(*de, range) || opts.known_healthy.contains(d)));
    });
    if (!t.cues.empty() && unseen > 0 && !e.calls.empty() && t.parent.contains(name)) {
      auto p = probe_self(sit, name, range, opts.global, t.cues);
      if (p.next && allow_calls && !sweep) {
        t.next = *p.next;
        return t;
      }
      if (p.self_explained) {
        self = true;
        t.observations.push_back({at, fmt::format("{} explains itself: {}", name, p.why), 0});
      }
    }
    std::vector<std::string> explaining;
    for (auto& d : e.calls) {
      auto* de = ev.find(d);
      if ((self || !explaining.empty()) && !sweep
          && !(de && (observed(*de, range) || opts.known_healthy.contains(d)))) {
        // One explanation is enough to go deeper; the siblings wait for the sweep.
        t.deferred.push_back(d);
        continue;
      }
      auto ds = observe(d, de && !de->kind.empty() ? de->kind : "service",
                        fmt::format("{} is anomalous; does its dependency {} explain it?", name, d));
      if (ds < 0)
        return t;
      if (ds == 0)
        continue;
      auto dcls = anomalies(kb, *de, range);
      if (dcls.empty()) {
        if (healthy.insert(d).second && !visited.contains(d)) {
          std::int64_t dat = 0;
          for (auto& s : de->snapshots)
            if (range.contains(s.step))
              dat = s.step;
          t.observations.push_back({dat, fmt::format("{} is healthy", d), 0});
        }
        continue;
      }
      if (propagates(kb, dcls, cls)) {
        explaining.push_back(d);
        t.parent.try_emplace(d, name);
        queue.push_back(d);
      } else if (std::find(t.off_path.begin(), t.off_path.end(), d) == t.off_path.end()) {
        t.off_path.push_back(d);
        t.classes[d] = dcls;
      }
    }
    if (explaining.empty() || self)
      t.leaves.push_back(name);
  }
  std::erase_if(t.off_path, [&](auto& n) { return t.parent.contains(n) || std::find(t.focus.begin(), t.focus.end(), n) != t.focus.end(); });
  for (auto& n : t.off_path)
    t.observations.push_back(
      {0, fmt::format("{} is anomalous ({}) but that does not explain its callers' symptoms: off "
                      "the failing path", n, classes_text(t.classes[n])), 0});
  for (auto& n : healthy)
    t.healthy.push_back(n);
  return t;
}

} // namespace sreh::plugins::reasoner
