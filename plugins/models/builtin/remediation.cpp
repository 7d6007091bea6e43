#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/base/json.hpp"
#include "plugins/models/builtin/engine.hpp"

namespace sreh::plugins::reasoner {

namespace {

std::optional<double> as_number(const std::string& s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size())
    return std::nullopt;
  return v;
}

/// Writes a template value with `$name` and `$name*k` replaced from the bindings.
bool render(const rapidjson::Value& v, const std::map<std::string, std::string>& b,
            json::writer& w) {
  if (v.IsObject()) {
    w.StartObject();
    for (auto& m : v.GetObject()) {
      w.Key(m.name.GetString());
      if (!render(m.value, b, w))
        return false;
    }
    w.EndObject();
    return true;
  }
  if (v.IsArray()) {
    w.StartArray();
    for (auto& e : v.GetArray())
      if (!render(e, b, w))
        return false;
    w.EndArray();
    return true;
  }
  if (!v.IsString() || v.GetString()[0] != '$') {
    v.Accept(w);
    return true;
  }
  std::string ref = v.GetString() + 1;
  double factor = 1;
  if (auto star = ref.find('*'); star != std::string::npos) {
    factor = as_number(ref.substr(star + 1)).value_or(1);
    ref = ref.substr(0, star);
  }
  auto it = b.find(ref);
  if (it == b.end() || it->second.empty())
    return false;
  if (auto n = as_number(it->second)) {
    auto x = *n * factor;
    if (x == std::floor(x))
      w.Int64(static_cast<std::int64_t>(x));
    else
      w.Double(x);
  } else if (it->second == "true" || it->second == "false") {
    w.Bool(it->second == "true");
  } else {
    w.String(it->second.c_str());
  }
  return true;
}

/// The remedy's calls, made by the tools that perform its actions; nullopt when a binding is
/// missing or no tool performs one of the actions.
std::optional<std::vector<planned_call>> expand(const remedy& r, const hypothesis& h,
                                                const situation& sit) {
  const auto& ev = sit.ev;
  std::vector<planned_call> out;
  for (auto& a : r.actions) {
    auto tpl = json::parse(a.args);
    if (!tpl)
      return std::nullopt;
    std::vector<std::map<std::string, std::string>> variants;
    if (a.for_each == "job") {
      auto* host = ev.find(h.target);
      for (auto& j : host ? host->jobs : std::vector<std::string>{}) {
        auto b = h.bindings;
        b["job"] = j;
        variants.push_back(std::move(b));
      }
      if (variants.empty())
        return std::nullopt; // a remedy for the jobs on the target: without jobs it does not apply
    } else {
      variants.push_back(h.bindings);
    }
    for (auto& b : variants) {
      rapidjson::StringBuffer buf;
      json::writer w(buf);
      if (!render(*tpl, b, w))
        return std::nullopt;
      auto c = sit.tools.remedy(a.tool, buf.GetString());
      if (!c)
        return std::nullopt;
      out.push_back(std::move(*c));
    }
  }
  if (out.empty())
    return std::nullopt;
  return out;
}

std::map<std::string, std::string> minus_sticky(const knowledge_base& kb,
                                                std::map<std::string, std::string> cls) {
  for (auto& s : kb.limits.sticky_classes)
    cls.erase(s);
  return cls;
}

/// The entity nearest the fault whose anomaly a good remedy clears: the leaf, the subject, or (a
/// hardware fault stays after a good remedy) the first entity up the walk that suffered from it.
std::string nearest(const knowledge_base& kb, const triage_result& t, const hypothesis& h,
                    const std::string& leaf) {
  auto clears = [&](const std::string& n) {
    auto it = t.classes.find(n);
    return it != t.classes.end() && !minus_sticky(kb, it->second).empty();
  };
  for (auto& n : {leaf, h.subject})
    if (clears(n))
      return n;
  for (auto p = t.parent.find(leaf); p != t.parent.end(); p = t.parent.find(p->second))
    if (clears(p->second))
      return p->second;
  return {};
}

/// Entities whose anomaly should clear when the diagnosis' remedy works: the nearest one, and a
/// lone diagnosis (it explains everything anomalous) the alerted ones too.
std::vector<std::string> verify_set(const knowledge_base& kb, const triage_result& t,
                                    const std::string& near, bool alone) {
  std::vector<std::string> out;
  if (!near.empty())
    out.push_back(near);
  if (alone)
    for (auto& f : t.focus) {
      auto it = t.classes.find(f);
      if (it != t.classes.end() && !minus_sticky(kb, it->second).empty() &&
          std::find(out.begin(), out.end(), f) == out.end())
        out.push_back(f);
    }
  return out;
}

std::string current_text(const knowledge_base& kb, const entity& e,
                         const std::map<std::string, std::string>& before, step_range r) {
  std::string out;
  for (auto& a : kb.anomalies) {
    if (!before.contains(a.cls))
      continue;
    auto vals = describe_values(a.when, e, r);
    if (!vals.empty() && out.find(vals) == std::string::npos)
      out += (out.empty() ? "" : ", ") + vals;
  }
  return out;
}

} // namespace

std::set<std::string> remedy_keys(const situation& sit,
                                  const std::vector<const hypothesis*>& diagnoses) {
  std::set<std::string> out;
  for (auto* h : diagnoses)
    for (auto& r : h->mode->remedies)
      if (auto actions = expand(r, *h, sit))
        for (auto& a : *actions)
          out.insert(call_key(a.tool, a.args));
  return out;
}

namespace {

/// Walks the remedies of each diagnosis in order, then looks at the alerted entities once more.
/// A step returns false when it needs a call first (`st_.next`).
class remedy_walk {
 public:
  remedy_walk(const situation& sit, const triage_result& t,
              const std::vector<const hypothesis*>& diagnoses,
              const std::map<std::string, std::string>& leaf_of)
    : sit_(sit), kb_(sit.kb), ev_(sit.ev), t_(t), diagnoses_(diagnoses), leaf_of_(leaf_of) {}

  remediation_state run() {
    for (auto* h : diagnoses_)
      if (!treat(*h))
        return st_;
    if (last_action_ > 0 && !final_look())
      return st_;
    st_.last_action = last_action_;
    return st_;
  }

 private:
  /// The constraint a person set on a target of call `a` (any string argument naming it).
  const conversation::constraint* constrained(const planned_call& a) const {
    if (sit_.constraints == nullptr || sit_.constraints->empty())
      return nullptr;
    auto doc = json::parse_object(a.args);
    if (!doc)
      return nullptr;
    for (const auto& m : doc->GetObject())
      if (m.value.IsString())
        if (const auto* c = conversation::constraint_on(
              *sit_.constraints, {m.value.GetString(), m.value.GetStringLength()}))
          return c;
    return nullptr;
  }

  /// How one remedy went: it needs a call, it failed or did not verify (try the next one), or it
  /// settled the diagnosis.
  enum class outcome { call, next, settled };

  bool treat(const hypothesis& h) {
    auto what = h.mode->kind + ":" + h.target;
    st_.mitigated[what] = false;
    bool any = false;
    for (auto& r : h.mode->remedies) {
      if ((!r.when.empty() && !h.seen(r.when)) ||
          (!r.requires_binding.empty() && !h.bindings.contains(r.requires_binding)))
        continue;
      auto actions = expand(r, h, sit_);
      if (!actions)
        continue;
      any = true;
      auto o = attempt(r, h, what, *actions);
      if (o == outcome::call)
        return false;
      if (o == outcome::settled)
        break;
    }
    if (!any)
      st_.notes.push_back(
        fmt::format("{}({}): no remedy of the knowledge base applies", h.mode->kind, h.target));
    return true;
  }

  /// The remedy's calls in order (the first one not made yet is next), then its verification.
  outcome attempt(const remedy& r, const hypothesis& h, const std::string& what,
                  const std::vector<planned_call>& actions) {
    std::int64_t last = 0;
    auto first = st_.records.size();
    for (auto& a : actions) {
      auto* rec = ev_.find_call(call_key(a.tool, a.args));
      if (!rec) {
        if (const auto* c = constrained(a)) {
          st_.notes.push_back(
            fmt::format("{} on {} not done: {}", a.tool, c->entity, conversation::describe(*c)));
          return outcome::next;
        }
        st_.next = a;
        st_.next->why =
          fmt::format("remedy '{}' for {}({}): {}", r.name, h.mode->kind, h.target, r.risk);
        return outcome::call;
      }
      st_.records.push_back({a.tool, a.args, rec->step, rec->ok, false, what, rec->error});
      last = std::max(last, rec->step);
      last_action_ = std::max(last_action_, rec->step);
      if (!rec->ok) {
        st_.notes.push_back(fmt::format("{} failed at step {}: {}", a.tool, rec->step,
                                        rec->error.empty() ? "no detail" : rec->error));
        return outcome::next;
      }
    }
    return verify(r, h, what, last, first);
  }

  /// How an entity stands after a remedy against the (non-sticky) anomalies it had before:
  /// back within the mild bar, only below the strong one, or still anomalous.
  enum class standing { recovered, partial, anomalous };
  standing judge(const entity& e, const std::map<std::string, std::string>& before,
                 step_range after) const {
    auto in = [&](const std::map<std::string, std::string>& now) {
      return std::any_of(before.begin(), before.end(),
                         [&](auto& c) { return now.contains(c.first); });
    };
    if (in(anomalies(kb_, e, after)))
      return standing::anomalous;
    return in(anomalies(kb_, e, after, true)) ? standing::partial : standing::recovered;
  }

  static const char* words(standing s) {
    return s == standing::recovered ? "recovered"
           : s == standing::partial ? "partially recovered"
                                    : "still anomalous";
  }

  /// When the action of step `n` ended (0 when unknown).
  timestamp_us ended_at(std::int64_t n) const {
    for (const auto& c : ev_.calls)
      if (c.step == n)
        return c.finished_at;
    return 0;
  }

  /// A new description of `e`, which has no settled snapshot since the action of step `last`
  /// (settled_after), if a tool makes one and its last try did not fail; made no sooner than
  /// the sources' metrics can show the action (settles_at).
  std::optional<planned_call> describe_after(const entity& e, std::int64_t last,
                                             std::string why) const {
    auto ended = ended_at(last);
    auto after = settled_after(e, last, ended);
    if (observed(e, after))
      return std::nullopt;
    auto call = sit_.tools.describe(e.name, e.kind);
    if (!call || ev_.find_call(call_key(call->tool, call->args), after.from))
      return std::nullopt; // no tool, or the check failed: cannot verify this entity
    call->not_before_us = settles_at(e, ended);
    if (call->not_before_us > 0)
      why += fmt::format(" (not before its metrics can show the action of step {})", last);
    call->why = std::move(why);
    return call;
  }

  /// The description of an entity of `vset` not observed since `last`, if a tool makes one.
  std::optional<planned_call> unobserved(const remedy& r, const std::vector<std::string>& vset,
                                         std::int64_t last) const {
    for (auto& v : vset)
      if (const auto* e = ev_.find(v))
        if (auto call = describe_after(
              *e, last, fmt::format("verify that remedy '{}' cleared {}'s anomaly", r.name, v)))
          return call;
    return std::nullopt;
  }

  /// Whether the anomalies the remedy should clear are gone in the steps after `last`: against
  /// the baseline (the mild bar), so that a half-restored entity is partially recovered. Only
  /// the entity nearest the fault tells a partial recovery; an alerted entity left mildly
  /// anomalous may have another cause (final_look starts another round for it).
  outcome verify(const remedy& r, const hypothesis& h, const std::string& what, std::int64_t last,
                 std::size_t first) {
    auto leaf_it = leaf_of_.find(what);
    auto near = nearest(kb_, t_, h, leaf_it == leaf_of_.end() ? h.subject : leaf_it->second);
    auto vset = verify_set(kb_, t_, near, diagnoses_.size() == 1);
    if (auto call = unobserved(r, vset, last)) {
      st_.next = std::move(call);
      return outcome::call;
    }
    bool checked = false, ok = true, partial = false;
    for (auto& v : vset) {
      auto* e = ev_.find(v);
      if (!e)
        continue;
      auto after = settled_after(*e, last, ended_at(last));
      if (!observed(*e, after))
        continue;
      checked = true;
      auto before = minus_sticky(kb_, t_.classes.at(v));
      auto s = judge(*e, before, after);
      st_.notes.push_back(fmt::format("after {}: {} {} ({})", r.name, v, words(s),
                                      current_text(kb_, *e, before, after)));
      ok = ok && s != standing::anomalous;
      partial = partial || (v == near && s == standing::partial);
    }
    if (!checked) {
      st_.notes.push_back(fmt::format("{}: nothing observable to verify", r.name));
      return outcome::settled;
    }
    st_.recovery[what] = !ok ? "not_recovered" : partial ? "partial" : "recovered";
    if (!ok)
      return outcome::next;
    for (auto i = first; i < st_.records.size(); ++i)
      st_.records[i].verified = st_.records[i].ok;
    st_.mitigated[what] = true;
    if (partial) {
      st_.partial.insert(near);
      st_.notes.push_back(fmt::format("{} partially recovered after '{}': what {} carried is not "
                                      "fully replaced (no further remedy of the knowledge base "
                                      "restores it)",
                                      near, r.name, h.target));
    }
    return outcome::settled;
  }

  /// A last look at the alerted entities once something was changed, for the summary. An alerted
  /// entity still anomalous — or mildly so, without a partial recovery that explains it — is
  /// left for another round.
  bool final_look() {
    for (auto& f : t_.focus) {
      const auto* e = ev_.find(f);
      if (!e)
        continue;
      if (auto call = describe_after(*e, last_action_, fmt::format("final check of {}", f))) {
        st_.next = call;
        return false;
      }
    }
    for (auto& f : t_.focus) {
      auto* e = ev_.find(f);
      auto it = t_.classes.find(f);
      if (!e || it == t_.classes.end() || it->second.empty())
        continue;
      auto after = settled_after(*e, last_action_, ended_at(last_action_));
      if (!observed(*e, after))
        continue;
      auto strong = minus_sticky(kb_, anomalies(kb_, *e, after));
      auto mild = minus_sticky(kb_, anomalies(kb_, *e, after, true));
      auto s = !strong.empty() ? standing::anomalous
               : mild.empty()  ? standing::recovered
                               : standing::partial;
      if (s == standing::anomalous || (s == standing::partial && !st_.partial.contains(f)))
        st_.still_anomalous.push_back(f);
      st_.notes.push_back(
        fmt::format("{} {} ({})", f, words(s), current_text(kb_, *e, it->second, after)));
    }
    return true;
  }

  const situation& sit_;
  const knowledge_base& kb_;
  const evidence& ev_;
  const triage_result& t_;
  const std::vector<const hypothesis*>& diagnoses_;
  const std::map<std::string, std::string>& leaf_of_;
  remediation_state st_;
  std::int64_t last_action_ = 0;
};

} // namespace

remediation_state remediate(const situation& sit, const triage_result& t,
                            const std::vector<const hypothesis*>& diagnoses,
                            const std::map<std::string, std::string>& leaf_of) {
  return remedy_walk{sit, t, diagnoses, leaf_of}.run();
}

} // namespace sreh::plugins::reasoner
