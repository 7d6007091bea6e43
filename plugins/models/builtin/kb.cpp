// Loading the knowledge base (knowledge/failure_modes.yaml) with the one YAML reader.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "config/yaml/reader.hpp"
#include "plugins/models/builtin/knowledge_base.hpp"

namespace sreh::plugins::reasoner {

namespace {

namespace yaml = config::yaml;
using yaml::entry;
using yaml::reader;

/// One mapping of the file: its values by key. Keys it does not know are errors (a typo must not
/// silently disable evidence); a missing required key is reported at the mapping. (The unknown
/// key's message names the mapping and gives no hint: tests/unit/reasoner/reasoner_kb.cpp pins
/// it; reader::entries would name the key and add one.)
class kb_map {
 public:
  kb_map(reader& r, const entry& e, std::initializer_list<std::string_view> known) : r_(r), e_(e) {
    if (!e.value.is_mapping())
      r.fail(e, fmt::format("expected a mapping, got {}", e.value.kind_name()));
    for (auto& f : r.pairs(e)) {
      if (std::find(known.begin(), known.end(), f.key) == known.end())
        r.fail(f.key_mark, e.path, fmt::format("unknown key '{}'", f.key));
      fields_.emplace(f.key, std::move(f));
    }
  }

  /// The value of `key`, or null when absent.
  [[nodiscard]] const entry* find(const std::string& key) const {
    auto i = fields_.find(key);
    return i == fields_.end() ? nullptr : &i->second;
  }

  /// The value of `key`, which must be there (`what` names what it should be).
  [[nodiscard]] const entry& need(const std::string& key, std::string_view what) const {
    if (const auto* f = find(key))
      return *f;
    r_.fail(e_.mark, e_.path.empty() ? key : e_.path + "." + key,
            fmt::format("missing (expected {})", what));
  }

  [[nodiscard]] std::string string(const std::string& key) const {
    return r_.string(need(key, "a string"));
  }
  [[nodiscard]] double number(const std::string& key) const {
    return r_.number(need(key, "a number"));
  }

  /// The items of the sequence at `key`, which must be there.
  [[nodiscard]] std::vector<entry> list(const std::string& key, std::string_view what) const {
    return list_of(r_, need(key, what), what);
  }

  /// The items of sequence `e` (`what` names what it should be).
  static std::vector<entry> list_of(reader& r, const entry& e, std::string_view what) {
    if (!e.value.is_sequence())
      r.fail(e, fmt::format("expected {}, got {}", what, e.value.kind_name()));
    return r.items(e);
  }

 private:
  reader& r_;
  const entry& e_;
  std::map<std::string, entry> fields_;
};

condition read_condition(reader& r, const entry& e) {
  auto c = parse_condition(r.string(e));
  if (!c)
    r.fail(e, c.error().message);
  return std::move(*c);
}

void check_pattern(reader& r, const entry& e, const std::string& pattern) {
  try {
    std::string probe = pattern;
    for (auto pos = probe.find("{subject}"); pos != std::string::npos;
         pos = probe.find("{subject}"))
      probe.replace(pos, 9, "x");
    std::regex re(probe, std::regex::icase | std::regex::ECMAScript);
  } catch (const std::regex_error& err) {
    r.fail(e, fmt::format("invalid regular expression: {}", err.what()));
  }
}

symptom read_symptom(reader& r, const entry& e) {
  kb_map m{r,
           e,
           {"id", "when", "log", "deploy_within", "flag_changed", "on", "weight", "absent_weight",
            "bind", "bind_from"}};
  symptom s;
  s.line = e.mark.line + 1;
  s.id = m.string("id");
  int kinds = 0;
  if (const auto* f = m.find("when")) {
    ++kinds;
    s.type = symptom_type::metric;
    s.when = read_condition(r, *f);
  }
  if (const auto* f = m.find("log")) {
    ++kinds;
    s.type = symptom_type::log;
    s.pattern = r.string(*f);
    check_pattern(r, *f, s.pattern);
  }
  for (const char* key : {"deploy_within", "flag_changed"}) {
    const auto* f = m.find(key);
    if (f == nullptr)
      continue;
    ++kinds;
    s.type = std::string_view{key} == "deploy_within" ? symptom_type::deploy : symptom_type::flag;
    s.window = r.string(*f);
  }
  if (kinds != 1)
    r.fail(e, "a symptom needs exactly one of when, log, deploy_within, flag_changed");
  if (const auto* f = m.find("on")) {
    static const std::map<std::string, scope> scopes{{"self", scope::self},
                                                     {"callers", scope::callers},
                                                     {"hosted", scope::hosted},
                                                     {"jobs", scope::jobs}};
    auto it = scopes.find(r.string(*f));
    if (it == scopes.end())
      r.fail(*f, "expected one of self, callers, hosted, jobs");
    s.on = it->second;
  }
  s.weight = m.number("weight");
  if (const auto* f = m.find("absent_weight"))
    s.absent_weight = r.number(*f);
  if (const auto* f = m.find("bind")) {
    s.bind = r.string(*f);
    s.bind_from = s.type == symptom_type::flag ? "flag" : "entity";
    if (const auto* from = m.find("bind_from")) {
      s.bind_from = r.string(*from);
      if (s.bind_from != "capture" && s.bind_from != "entity" && s.bind_from != "flag")
        r.fail(*from, "expected capture, entity or flag");
    }
  }
  return s;
}

action_template read_action(reader& r, const entry& e) {
  kb_map m{r, e, {"tool", "args", "for_each"}};
  action_template t;
  t.tool = m.string("tool");
  if (const auto* f = m.find("args")) {
    if (!f->value.is_mapping())
      r.fail(*f, fmt::format("expected a mapping, got {}", f->value.kind_name()));
    t.args = r.json_object(*f);
  }
  if (const auto* f = m.find("for_each")) {
    t.for_each = r.string(*f);
    if (t.for_each != "job")
      r.fail(*f, "expected job");
  }
  return t;
}

/// A remedy of a failure mode whose symptoms have `ids` and provide `bindings`.
remedy read_remedy(reader& r, const entry& e, const std::set<std::string>& ids,
                   const std::set<std::string>& bindings) {
  kb_map m{r, e, {"name", "when", "requires", "actions", "risk"}};
  remedy out;
  out.name = m.string("name");
  for (auto [key, dst] :
       {std::pair{"when", &out.when}, std::pair{"requires", &out.requires_binding},
        std::pair{"risk", &out.risk}})
    if (const auto* f = m.find(key))
      *dst = r.string(*f);
  const auto& actions = m.need("actions", "a list of actions");
  for (const auto& a : kb_map::list_of(r, actions, "a list of actions"))
    out.actions.push_back(read_action(r, a));
  if (out.actions.empty())
    r.fail(actions, "a remedy needs at least one action");
  if (!out.when.empty() && !ids.contains(out.when))
    r.fail(*m.find("when"), fmt::format("no symptom '{}'", out.when));
  if (!out.requires_binding.empty() && !bindings.contains(out.requires_binding))
    r.fail(*m.find("requires"), fmt::format("no symptom binds '{}'", out.requires_binding));
  return out;
}

/// The items of the sequence at `key`, when there.
std::vector<entry> optional_list(reader& r, const kb_map& m, const std::string& key,
                                 std::string_view what) {
  const auto* f = m.find(key);
  return f == nullptr ? std::vector<entry>{} : kb_map::list_of(r, *f, what);
}

/// A failure mode; its kind must not be one of `kb` already.
failure_mode read_mode(reader& r, const entry& e, const knowledge_base& kb) {
  kb_map m{
    r, e, {"kind", "description", "applies_to", "target", "symptoms", "remedies", "risks", "cues"}};
  failure_mode fm;
  fm.line = e.mark.line + 1;
  fm.kind = m.string("kind");
  if (const auto* f = m.find("description"))
    fm.description = r.string(*f);
  static const std::set<std::string, std::less<>> kinds{"service", "database", "cache",
                                                        "queue",   "host",     "job"};
  for (const auto& k : m.list("applies_to", "a list of kinds")) {
    fm.applies_to.push_back(r.string(k));
    if (!kinds.contains(fm.applies_to.back()))
      r.fail(k, "expected service, database, cache, queue, host or job");
  }
  std::set<std::string> ids, bindings{"subject"};
  for (const auto& item : m.list("symptoms", "a list of symptoms")) {
    auto s = read_symptom(r, item);
    if (!ids.insert(s.id).second)
      r.fail(item.mark, item.path + ".id", fmt::format("duplicate symptom id '{}'", s.id));
    if (!s.bind.empty())
      bindings.insert(s.bind);
    fm.symptoms.push_back(std::move(s));
  }
  if (const auto* f = m.find("target")) {
    fm.target = r.string(*f);
    const auto& t = fm.target;
    if (t.size() < 2 || t[0] != '$' || !bindings.contains(t.substr(1)))
      r.fail(*f, "expected $subject or $<binding> of one of the symptoms");
  }
  for (const auto& item : optional_list(r, m, "remedies", "a list"))
    fm.remedies.push_back(read_remedy(r, item, ids, bindings));
  for (const auto& item : optional_list(r, m, "risks", "a list"))
    fm.risks.push_back(r.string(item));
  for (const auto& item : optional_list(r, m, "cues", "a list of phrases")) {
    fm.cues.push_back(r.string(item));
    if (fm.cues.back().find_first_not_of(" \t") == std::string::npos)
      r.fail(item, "an empty cue");
  }
  if (kb.find(fm.kind))
    r.fail(*m.find("kind"), fmt::format("duplicate kind '{}'", fm.kind));
  return fm;
}

/// A whole number in [min, max], written as a number.
int whole_number(reader& r, const entry& e, int min, int max) {
  auto v = r.number(e);
  if (v < min || v > max)
    r.fail(e, fmt::format("expected {}..{}", min, max));
  return static_cast<int>(v);
}

void read_thresholds(reader& r, const entry& e, thresholds& t) {
  kb_map m{r,
           e,
           {"conclude_score", "conclude_margin", "investigate_steps",
            "investigate_steps_per_extra_leaf", "remedy_reserve_steps", "sticky_classes",
            "goal_cue_weight", "max_rounds", "latency_explain_share", "backtrack_steps",
            "common_cause_weight", "memory_cue_weight"}};
  for (auto [key, dst] : {std::pair{"conclude_score", &t.conclude_score},
                          std::pair{"conclude_margin", &t.conclude_margin},
                          std::pair{"goal_cue_weight", &t.goal_cue_weight},
                          std::pair{"memory_cue_weight", &t.memory_cue_weight},
                          std::pair{"latency_explain_share", &t.latency_explain_share},
                          std::pair{"common_cause_weight", &t.common_cause_weight}})
    if (const auto* f = m.find(key))
      *dst = r.number(*f);
  struct bounded {
    const char* key;
    int min, max;
    int thresholds::*dst;
  };
  static constexpr bounded counts[] = {
    {"investigate_steps", 1, 1000, &thresholds::investigate_steps},
    {"investigate_steps_per_extra_leaf", 0, 100, &thresholds::investigate_steps_per_extra_leaf},
    {"remedy_reserve_steps", 0, 100, &thresholds::remedy_reserve_steps},
    {"max_rounds", 1, 20, &thresholds::max_rounds},
    {"backtrack_steps", 0, 100, &thresholds::backtrack_steps},
  };
  for (const auto& c : counts)
    if (const auto* f = m.find(c.key))
      t.*c.dst = whole_number(r, *f, c.min, c.max);
  for (const auto& c : optional_list(r, m, "sticky_classes", "a list"))
    t.sticky_classes.push_back(r.string(c));
}

knowledge_base read_kb(reader& r, const entry& root) {
  knowledge_base kb;
  kb_map m{r, root, {"version", "thresholds", "anomalies", "propagation", "failure_modes"}};
  if (const auto* f = m.find("thresholds"))
    read_thresholds(r, *f, kb.limits);
  for (const auto& item : m.list("anomalies", "a list")) {
    kb_map a{r, item, {"class", "when", "mild"}};
    anomaly_rule rule;
    rule.cls = a.string("class");
    rule.when = read_condition(r, a.need("when", "a string"));
    if (const auto* f = a.find("mild"))
      rule.mild = read_condition(r, *f);
    kb.anomalies.push_back(std::move(rule));
  }
  if (const auto* f = m.find("propagation")) {
    if (!f->value.is_mapping())
      r.fail(*f, fmt::format("expected a mapping, got {}", f->value.kind_name()));
    for (const auto& p : r.pairs(*f)) {
      auto& dst = kb.propagation[p.key];
      for (const auto& c : kb_map::list_of(r, p, "a list of classes"))
        dst.push_back(r.string(c));
    }
  }
  const auto& modes = m.need("failure_modes", "a list");
  for (const auto& item : kb_map::list_of(r, modes, "a list"))
    kb.modes.push_back(read_mode(r, item, kb));
  if (kb.modes.empty())
    r.fail(modes, "at least one failure mode is needed");
  return kb;
}

} // namespace

expected<knowledge_base> parse_knowledge_base(std::string_view text, std::string_view source) {
  // Syntax errors read "SOURCE:LINE:COL: what", without a label (reasoner_kb.cpp pins it).
  reader r{std::string{source}, {.substitute_env = false, .syntax_label = ""}};
  try {
    auto kb = read_kb(r, r.parse(text));
    kb.source = std::string{source};
    return kb;
  } catch (const yaml::load_error& e) {
    return sreh::error{errc::invalid_argument, e.message};
  }
}

expected<knowledge_base> load_knowledge_base(const std::string& path) {
  auto text = config::yaml::read_text_file(path);
  if (!text)
    return text.error();
  return parse_knowledge_base(*text, path);
}

expected<knowledge_base> embedded_knowledge_base() {
  // The same text every time: parsed once per process (every node, and every scenario of
  // `sreh eval`, makes a reasoner of its own), then copied.
  static const auto parsed =
    parse_knowledge_base(embedded_knowledge_text(), "<embedded>/failure_modes.yaml");
  return parsed;
}

} // namespace sreh::plugins::reasoner
