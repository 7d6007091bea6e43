// How each symptom of a hypothesis is judged against the evidence (engine.hpp: judge_symptom),
// and the evidence queries the walk and the judges share.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "plugins/models/builtin/engine.hpp"

namespace sreh::plugins::reasoner {

std::string regex_escape(const std::string& s) {
  static const std::string special = R"(\^$.|?*+()[]{}/-)";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos)
      out += '\\';
    out += c;
  }
  return out;
}

const log_result* latest_logs(const evidence& ev, const std::string& name, step_range r) {
  auto it = ev.logs.find(name);
  if (it == ev.logs.end())
    return nullptr;
  for (auto l = it->second.rbegin(); l != it->second.rend(); ++l)
    if (r.contains(l->step))
      return &*l;
  return nullptr;
}

bool attempted(const evidence& ev, const planned_call& c, step_range r) {
  auto key = call_key(c.tool, c.args);
  return std::any_of(ev.calls.begin(), ev.calls.end(),
                     [&](const call_record& x) { return x.key == key && r.contains(x.step); });
}

std::string kind_of(const evidence& ev, const std::string& name) {
  auto* e = ev.find(name);
  return e && !e->kind.empty() ? e->kind : "service";
}

namespace {

std::vector<std::string> scope_of(const symptom& s, const entity* x, const std::string& subject) {
  if (s.on == scope::self)
    return {subject};
  if (!x)
    return {};
  switch (s.on) {
  case scope::callers:
    return x->called_by;
  case scope::hosted:
    return x->services;
  case scope::jobs:
    return x->jobs;
  default:
    return {};
  }
}

/// Evaluates one symptom of a hypothesis; fills facts and bindings.
class symptom_judge {
 public:
  symptom_judge(const situation& sit, step_range r, step_range global, hypothesis& h)
    : kb_(sit.kb), ev_(sit.ev), tools_(sit.tools), r_(r), g_(global), h_(h) {}

  symptom_eval judge(const symptom& s) {
    symptom_eval out;
    out.s = &s;
    auto* x = ev_.find(h_.subject);
    auto in_scope = scope_of(s, x, h_.subject);
    if (in_scope.empty()) {
      out.state = seen_state::not_applicable;
      return out;
    }
    switch (s.type) {
    case symptom_type::metric:
      metric(s, in_scope, out);
      break;
    case symptom_type::log:
      log(s, in_scope, out);
      break;
    case symptom_type::deploy:
      deploy(s, x, out);
      break;
    case symptom_type::flag:
      flag(s, out);
      break;
    }
    auto within = s.type == symptom_type::deploy || s.type == symptom_type::flag ? g_ : r_;
    if (out.check && attempted(ev_, *out.check, within)) {
      out.check.reset();
      out.state = seen_state::not_applicable; // the check failed: do not ask again
    }
    if (out.state == seen_state::seen) {
      h_.score += s.weight;
    } else if (out.state == seen_state::absent) {
      h_.score += s.absent_weight;
    }
    return out;
  }

 private:
  void add(std::int64_t step, std::string text, double w) {
    h_.evidence.push_back({step, std::move(text), w});
  }

  void bind(const symptom& s, const std::string& v) {
    if (!s.bind.empty() && !v.empty())
      h_.bindings.try_emplace(s.bind, v);
  }

  void metric(const symptom& s, const std::vector<std::string>& names, symptom_eval& out) {
    std::string unknown;
    std::optional<fact> negative;
    for (auto& n : names) {
      auto* e = ev_.find(n);
      if (!e || !observed(*e, r_)) {
        if (unknown.empty())
          unknown = n;
        continue;
      }
      std::int64_t at = 0;
      auto v = evaluate(s.when, *e, r_, &at);
      if (!v)
        continue;
      if (*v) {
        out.state = seen_state::seen;
        add(at, fmt::format("{}: {} — {}", n, s.when.text, describe_values(s.when, *e, r_)),
            s.weight);
        bind(s, n);
        return;
      }
      if (!negative)
        negative =
          fact{at, fmt::format("{}: not {} — {}", n, s.when.text, describe_values(s.when, *e, r_)),
               s.absent_weight};
    }
    if (negative) {
      out.state = seen_state::absent;
      add(negative->step, negative->text, negative->weight);
    } else if (!unknown.empty()) {
      auto* e = ev_.find(unknown);
      out.check = tools_.describe(unknown, e ? e->kind : "service");
    } else {
      out.state = seen_state::not_applicable;
    }
  }

  void log(const symptom& s, const std::vector<std::string>& names, symptom_eval& out) {
    auto pattern = s.pattern;
    for (auto pos = pattern.find("{subject}"); pos != std::string::npos;
         pos = pattern.find("{subject}"))
      pattern.replace(pos, 9, regex_escape(h_.subject));
    std::regex re(pattern, std::regex::icase | std::regex::ECMAScript);
    std::string unknown;
    std::int64_t searched = 0;
    std::string searched_names;
    // A host carries services unrelated to its fault: what counts are the logs of the anomalous
    // ones on it, each of them, before the symptom is absent.
    bool each = s.on == scope::hosted;
    for (auto& n : each ? anomalous_among(names) : names) {
      auto* lr = latest_logs(ev_, n, r_);
      if (!lr) {
        if (unknown.empty())
          unknown = n;
        continue;
      }
      searched = lr->step;
      searched_names += (searched_names.empty() ? "" : ", ") + n;
      for (auto& line : lr->lines) {
        std::smatch m;
        if (!std::regex_search(line.message, m, re))
          continue;
        out.state = seen_state::seen;
        add(lr->step, fmt::format("{} logs: \"{}\"", n, line.message), s.weight);
        bind(s, s.bind_from == "capture" && m.size() > 1 ? m[1].str() : n);
        return;
      }
    }
    if (each && !unknown.empty()) {
      out.check = tools_.logs(unknown, kind_of(ev_, unknown));
    } else if (searched) {
      out.state = seen_state::absent;
      add(searched, fmt::format("no /{}/ in the logs of {}", s.pattern, searched_names),
          s.absent_weight);
    } else if (!unknown.empty()) {
      out.check = tools_.logs(unknown, kind_of(ev_, unknown));
    }
  }

  /// The entities of `names` observed anomalous (all of them when none is).
  std::vector<std::string> anomalous_among(const std::vector<std::string>& names) const {
    std::vector<std::string> out;
    for (auto& n : names)
      if (auto* e = ev_.find(n); e && !anomalies(kb_, *e, r_, true).empty())
        out.push_back(n);
    return out.empty() ? names : out;
  }

  void deploy(const symptom& s, const entity* x, symptom_eval& out) {
    if (x && !x->is_service_kind()) {
      out.state = seen_state::not_applicable;
      return;
    }
    auto want = parse_window(s.window).value_or(7200);
    for (auto it = ev_.deploys.rbegin(); it != ev_.deploys.rend(); ++it) {
      if (!g_.contains(it->step) || (!it->service.empty() && it->service != h_.subject))
        continue;
      if (parse_window(it->window).value_or(86400) > want)
        continue; // a wider window does not tell whether the deploy is recent
      for (auto& d : it->deploys) {
        if (d.service != h_.subject)
          continue;
        out.state = seen_state::seen;
        add(it->step,
            fmt::format("{} deployed {}{} at {} by {} (within {})", d.service, d.version,
                        d.previous.empty() ? "" : " (from " + d.previous + ")", d.at, d.by,
                        s.window),
            s.weight);
        h_.bindings.try_emplace("version", d.version);
        h_.bindings.try_emplace("previous_version", d.previous);
        bind(s, d.version);
        return;
      }
      out.state = seen_state::absent;
      add(it->step, fmt::format("no deploy of {} within {}", h_.subject, s.window),
          s.absent_weight);
      return;
    }
    out.check = tools_.deploys(s.window);
  }

  void flag(const symptom& s, symptom_eval& out) {
    if (!ev_.flags || !g_.contains(ev_.flags_step)) {
      out.check = tools_.flags();
      return;
    }
    auto window = parse_window(s.window).value_or(7200);
    const flag_record* best = nullptr;
    for (auto& f : *ev_.flags) {
      bool changed = !f.changed_at.empty() || f.value != f.default_value;
      if (!f.changed_at.empty() && ev_.now)
        if (auto t = parse_rfc3339(f.changed_at))
          changed = *ev_.now - *t <= window;
      if (changed && (!best || f.changed_at > best->changed_at))
        best = &f;
    }
    if (!best) {
      out.state = seen_state::absent;
      add(ev_.flags_step, fmt::format("no flag changed within {}", s.window), s.absent_weight);
      return;
    }
    out.state = seen_state::seen;
    add(ev_.flags_step,
        fmt::format("flag {} = {} (default {}) changed at {} by {}", best->name, best->value,
                    best->default_value, best->changed_at.empty() ? "?" : best->changed_at,
                    best->changed_by.empty() ? "?" : best->changed_by),
        s.weight);
    bind(s, best->name);
  }

  const knowledge_base& kb_;
  const evidence& ev_;
  const toolbox& tools_;
  step_range r_;
  step_range g_; // deploys and flags: what was seen of them stays true after a remedy
  hypothesis& h_;
};

} // namespace

symptom_eval judge_symptom(const situation& sit, step_range range, step_range global, hypothesis& h,
                           const symptom& s) {
  return symptom_judge{sit, range, global, h}.judge(s);
}

} // namespace sreh::plugins::reasoner
