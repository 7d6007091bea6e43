#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "plugins/models/builtin/engine.hpp"
#include "core/base/json.hpp"

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

/// Entities whose anomaly should clear when the diagnosis' remedy works.
std::vector<std::string> verify_set(const knowledge_base& kb, const triage_result& t,
                                    const hypothesis& h, const std::string& leaf, bool alone) {
  std::vector<std::string> out;
  auto consider = [&](const std::string& n) {
    auto it = t.classes.find(n);
    if (it != t.classes.end() && !minus_sticky(kb, it->second).empty()
        && std::find(out.begin(), out.end(), n) == out.end())
      out.push_back(n);
  };
  // A lone diagnosis explains everything anomalous: what was alerted on is the proof.
  if (alone)
    for (auto& f : t.focus)
      consider(f);
  if (!out.empty())
    return out;
  consider(leaf);
  consider(h.subject);
  // A hardware fault stays after a good remedy: verify on the entities that suffered from it.
  for (auto p = t.parent.find(leaf); out.empty() && p != t.parent.end(); p = t.parent.find(p->second))
    consider(p->second);
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

remediation_state remediate(const situation& sit, const triage_result& t,
                            const std::vector<const hypothesis*>& diagnoses,
                            const std::map<std::string, std::string>& leaf_of) {
  const auto& kb = sit.kb;
  const auto& ev = sit.ev;
  remediation_state st;
  std::int64_t last_action = 0;
  for (auto* h : diagnoses) {
    auto what = h->mode->kind + ":" + h->target;
    st.mitigated[what] = false;
    bool done = false;
    bool any = false;
    for (auto& r : h->mode->remedies) {
      if (done)
        break;
      if ((!r.when.empty() && !h->seen(r.when))
          || (!r.requires_binding.empty() && !h->bindings.contains(r.requires_binding)))
        continue;
      auto actions = expand(r, *h, sit);
      if (!actions)
        continue;
      any = true;
      std::int64_t last = 0;
      bool failed = false;
      for (auto& a : *actions) {
        auto* rec = ev.find_call(call_key(a.tool, a.args));
        if (!rec) {
          st.next = a;
          st.next->why = fmt::format("remedy '{}' for {}({}): {}", r.name, h->mode->kind,
                                     h->target, r.risk);
          return st;
        }
        st.records.push_back({a.tool, a.args, rec->step, rec->ok, false, what, rec->error});
        last = std::max(last, rec->step);
        last_action = std::max(last_action, rec->step);
        if (!rec->ok) {
          failed = true;
          st.notes.push_back(fmt::format("{} failed at step {}: {}", a.tool, rec->step,
                                         rec->error.empty() ? "no detail" : rec->error));
          break;
        }
      }
      if (failed)
        continue;
      auto leaf_it = leaf_of.find(what);
      auto vset = verify_set(kb, t, *h, leaf_it == leaf_of.end() ? h->subject : leaf_it->second,
                             diagnoses.size() == 1);
      step_range after{last, 0};
      bool verified = true, checked = false;
      for (auto& v : vset) {
        auto* e = ev.find(v);
        if (!e)
          continue;
        if (!observed(*e, after)) {
          auto call = sit.tools.describe(e->name, e->kind);
          if (!call || ev.find_call(call_key(call->tool, call->args), last))
            continue;  // no tool, or the check failed: cannot verify this entity
          call->why = fmt::format("verify that remedy '{}' cleared {}'s anomaly", r.name, v);
          st.next = call;
          return st;
        }
        checked = true;
        auto before = minus_sticky(kb, t.classes.at(v));
        auto now = anomalies(kb, *e, after);
        bool cleared = std::none_of(before.begin(), before.end(),
                                    [&](auto& c) { return now.contains(c.first); });
        st.notes.push_back(fmt::format("after {}: {} {} ({})", r.name, v,
                                       cleared ? "recovered" : "still anomalous",
                                       current_text(kb, *e, before, after)));
        verified = verified && cleared;
      }
      if (verified && checked) {
        for (auto& rec : st.records)
          if (rec.for_what == what && rec.step > 0 && rec.step <= last && rec.ok)
            rec.verified = true;
        st.mitigated[what] = true;
        done = true;
      } else if (!checked) {
        st.notes.push_back(fmt::format("{}: nothing observable to verify", r.name));
        done = true;
      }
    }
    if (!any)
      st.notes.push_back(fmt::format("{}({}): no remedy of the knowledge base applies",
                                     h->mode->kind, h->target));
  }
  // A last look at the alerted entities once something was changed, for the summary.
  if (last_action > 0) {
    for (auto& f : t.focus) {
      auto* e = ev.find(f);
      if (!e || observed(*e, {last_action, 0}))
        continue;
      auto call = sit.tools.describe(e->name, e->kind);
      if (!call || ev.find_call(call_key(call->tool, call->args), last_action))
        continue;
      call->why = fmt::format("final check of {}", f);
      st.next = call;
      return st;
    }
    for (auto& f : t.focus) {
      auto* e = ev.find(f);
      auto it = t.classes.find(f);
      if (!e || it == t.classes.end() || it->second.empty())
        continue;
      step_range after{last_action, 0};
      auto now = anomalies(kb, *e, after);
      bool recovered = minus_sticky(kb, now).empty();
      if (!recovered && observed(*e, after))
        st.still_anomalous.push_back(f);
      st.notes.push_back(fmt::format("{} {} ({})", f, recovered ? "recovered" : "still anomalous",
                                     current_text(kb, *e, it->second, after)));
    }
  }
  st.last_action = last_action;
  return st;
}

} // namespace sreh::plugins::reasoner
