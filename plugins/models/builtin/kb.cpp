#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/base/json.hpp"
#include "plugins/models/builtin/kb_detail.hpp"
#include "plugins/models/builtin/knowledge_base.hpp"

namespace sreh::plugins::reasoner {

using detail::to_number;

namespace {

/// Reads the YAML tree with errors located at `source:line:col: path:`.
class kb_reader {
 public:
  explicit kb_reader(std::string_view source) : source_(source) {}

  sreh::error fail(const YAML::Node& n, const std::string& path, const std::string& what) const {
    auto m = n.Mark();
    return {errc::invalid_argument,
            fmt::format("{}:{}:{}: {}: {}", source_, m.line + 1, m.column + 1, path, what)};
  }

  std::optional<sreh::error> require(const YAML::Node& n, const std::string& path,
                                     YAML::NodeType::value type, const char* type_name) const {
    if (!n)
      return fail(current_, path, fmt::format("missing (expected {})", type_name));
    if (n.Type() != type)
      return fail(n, path, fmt::format("expected {}", type_name));
    return std::nullopt;
  }

  expected<std::string> string(const YAML::Node& n, const std::string& path) const {
    if (!n)
      return fail(current_, path, "missing (expected a string)");
    if (!n.IsScalar())
      return fail(n, path, "expected a string");
    return n.Scalar();
  }

  expected<double> number(const YAML::Node& n, const std::string& path) const {
    if (!n)
      return fail(current_, path, "missing (expected a number)");
    if (!n.IsScalar())
      return fail(n, path, "expected a number");
    if (auto v = to_number(n.Scalar()))
      return *v;
    return fail(n, path, fmt::format("expected a number, got '{}'", n.Scalar()));
  }

  /// Keys of a map that are not in `known` are errors (typos must not silently disable evidence).
  std::optional<sreh::error> known_keys(const YAML::Node& n, const std::string& path,
                                        std::initializer_list<std::string_view> known) const {
    for (auto it = n.begin(); it != n.end(); ++it) {
      auto key = it->first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end())
        return fail(it->first, path, fmt::format("unknown key '{}'", key));
    }
    return std::nullopt;
  }

  /// The mapping being read: missing keys are reported at its position.
  void at(const YAML::Node& n) const { current_.reset(n); }

  YAML::Node root_;

 private:
  mutable YAML::Node current_;
  std::string source_;
};

/// Converts a YAML value (the args template) to JSON; scalars that read as numbers stay numbers.
void yaml_to_json(const YAML::Node& n, json::writer& w) {
  if (n.IsMap()) {
    w.StartObject();
    for (auto it = n.begin(); it != n.end(); ++it) {
      w.Key(it->first.Scalar().c_str());
      yaml_to_json(it->second, w);
    }
    w.EndObject();
  } else if (n.IsSequence()) {
    w.StartArray();
    for (auto e : n)
      yaml_to_json(e, w);
    w.EndArray();
  } else if (n.IsNull()) {
    w.Null();
  } else {
    auto& s = n.Scalar();
    if (n.Tag() != "!" && (s == "true" || s == "false"))
      w.Bool(s == "true");
    else if (auto v = n.Tag() != "!" ? to_number(s) : std::nullopt)
      w.Double(*v);
    else
      w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  }
}

std::optional<sreh::error> read_condition(const kb_reader& r, const YAML::Node& n,
                                          const std::string& path, condition& out) {
  auto text = r.string(n, path);
  if (!text)
    return text.error();
  auto c = parse_condition(*text);
  if (!c)
    return r.fail(n, path, c.error().message);
  out = std::move(*c);
  return std::nullopt;
}

std::optional<sreh::error> read_symptom(const kb_reader& r, const YAML::Node& n,
                                        const std::string& path, symptom& s) {
  if (auto e = r.require(n, path, YAML::NodeType::Map, "a mapping"))
    return e;
  r.at(n);
  if (auto e = r.known_keys(n, path, {"id", "when", "log", "deploy_within", "flag_changed", "on",
                                      "weight", "absent_weight", "bind", "bind_from"}))
    return e;
  s.line = n.Mark().line + 1;
  auto id = r.string(n["id"], path + ".id");
  if (!id)
    return id.error();
  s.id = *id;
  int kinds = 0;
  if (n["when"]) {
    ++kinds;
    s.type = symptom_type::metric;
    if (auto e = read_condition(r, n["when"], path + ".when", s.when))
      return e;
  }
  if (n["log"]) {
    ++kinds;
    s.type = symptom_type::log;
    auto p = r.string(n["log"], path + ".log");
    if (!p)
      return p.error();
    s.pattern = *p;
    try {
      std::string probe = s.pattern;
      for (auto pos = probe.find("{subject}"); pos != std::string::npos;
           pos = probe.find("{subject}"))
        probe.replace(pos, 9, "x");
      std::regex re(probe, std::regex::icase | std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return r.fail(n["log"], path + ".log", fmt::format("invalid regular expression: {}", e.what()));
    }
  }
  for (const char* key : {"deploy_within", "flag_changed"}) {
    if (!n[key])
      continue;
    ++kinds;
    s.type = std::string_view{key} == "deploy_within" ? symptom_type::deploy : symptom_type::flag;
    auto w = r.string(n[key], path + "." + key);
    if (!w)
      return w.error();
    s.window = *w;
  }
  if (kinds != 1)
    return r.fail(n, path, "a symptom needs exactly one of when, log, deploy_within, flag_changed");
  if (n["on"]) {
    auto on = r.string(n["on"], path + ".on");
    if (!on)
      return on.error();
    static const std::map<std::string, scope> scopes{
      {"self", scope::self}, {"callers", scope::callers}, {"hosted", scope::hosted},
      {"jobs", scope::jobs}};
    auto it = scopes.find(*on);
    if (it == scopes.end())
      return r.fail(n["on"], path + ".on", "expected one of self, callers, hosted, jobs");
    s.on = it->second;
  }
  auto w = r.number(n["weight"], path + ".weight");
  if (!w)
    return w.error();
  s.weight = *w;
  if (n["absent_weight"]) {
    auto a = r.number(n["absent_weight"], path + ".absent_weight");
    if (!a)
      return a.error();
    s.absent_weight = *a;
  }
  if (n["bind"]) {
    auto b = r.string(n["bind"], path + ".bind");
    if (!b)
      return b.error();
    s.bind = *b;
    s.bind_from = s.type == symptom_type::flag ? "flag" : "entity";
    if (n["bind_from"]) {
      auto f = r.string(n["bind_from"], path + ".bind_from");
      if (!f)
        return f.error();
      if (*f != "capture" && *f != "entity" && *f != "flag")
        return r.fail(n["bind_from"], path + ".bind_from", "expected capture, entity or flag");
      s.bind_from = *f;
    }
  }
  return std::nullopt;
}

std::optional<sreh::error> read_remedy(const kb_reader& r, const YAML::Node& n,
                                       const std::string& path, remedy& out) {
  if (auto e = r.require(n, path, YAML::NodeType::Map, "a mapping"))
    return e;
  r.at(n);
  if (auto e = r.known_keys(n, path, {"name", "when", "requires", "actions", "risk"}))
    return e;
  auto name = r.string(n["name"], path + ".name");
  if (!name)
    return name.error();
  out.name = *name;
  for (auto [key, dst] : {std::pair{"when", &out.when}, std::pair{"requires", &out.requires_binding},
                          std::pair{"risk", &out.risk}}) {
    if (!n[key])
      continue;
    auto v = r.string(n[key], path + "." + key);
    if (!v)
      return v.error();
    *dst = *v;
  }
  auto acts = n["actions"];
  if (auto e = r.require(acts, path + ".actions", YAML::NodeType::Sequence, "a list of actions"))
    return e;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    auto a = acts[i];
    auto apath = fmt::format("{}.actions[{}]", path, i);
    if (auto e = r.require(a, apath, YAML::NodeType::Map, "a mapping"))
      return e;
    r.at(a);
    if (auto e = r.known_keys(a, apath, {"tool", "args", "for_each"}))
      return e;
    action_template t;
    auto tool = r.string(a["tool"], apath + ".tool");
    if (!tool)
      return tool.error();
    t.tool = *tool;
    if (a["args"]) {
      if (auto e = r.require(a["args"], apath + ".args", YAML::NodeType::Map, "a mapping"))
        return e;
      rapidjson::StringBuffer buf;
      json::writer w(buf);
      yaml_to_json(a["args"], w);
      t.args = buf.GetString();
    }
    if (a["for_each"]) {
      auto f = r.string(a["for_each"], apath + ".for_each");
      if (!f)
        return f.error();
      if (*f != "job")
        return r.fail(a["for_each"], apath + ".for_each", "expected job");
      t.for_each = *f;
    }
    out.actions.push_back(std::move(t));
  }
  if (out.actions.empty())
    return r.fail(acts, path + ".actions", "a remedy needs at least one action");
  return std::nullopt;
}

std::optional<sreh::error> read_mode(const kb_reader& r, const YAML::Node& n,
                                     const std::string& path, failure_mode& m) {
  if (auto e = r.require(n, path, YAML::NodeType::Map, "a mapping"))
    return e;
  r.at(n);
  if (auto e = r.known_keys(n, path, {"kind", "description", "applies_to", "target", "symptoms",
                                      "remedies", "risks", "cues"}))
    return e;
  m.line = n.Mark().line + 1;
  auto kind = r.string(n["kind"], path + ".kind");
  if (!kind)
    return kind.error();
  m.kind = *kind;
  if (n["description"]) {
    auto d = r.string(n["description"], path + ".description");
    if (!d)
      return d.error();
    m.description = *d;
  }
  static const std::set<std::string, std::less<>> kinds{"service", "database", "cache", "queue",
                                                        "host", "job"};
  auto at = n["applies_to"];
  if (auto e = r.require(at, path + ".applies_to", YAML::NodeType::Sequence, "a list of kinds"))
    return e;
  for (std::size_t i = 0; i < at.size(); ++i) {
    auto k = r.string(at[i], fmt::format("{}.applies_to[{}]", path, i));
    if (!k)
      return k.error();
    if (!kinds.contains(*k))
      return r.fail(at[i], fmt::format("{}.applies_to[{}]", path, i),
                    "expected service, database, cache, queue, host or job");
    m.applies_to.push_back(*k);
  }
  auto syms = n["symptoms"];
  if (auto e = r.require(syms, path + ".symptoms", YAML::NodeType::Sequence, "a list of symptoms"))
    return e;
  std::set<std::string> ids, bindings{"subject"};
  for (std::size_t i = 0; i < syms.size(); ++i) {
    symptom s;
    auto spath = fmt::format("{}.symptoms[{}]", path, i);
    if (auto e = read_symptom(r, syms[i], spath, s))
      return e;
    if (!ids.insert(s.id).second)
      return r.fail(syms[i], spath + ".id", fmt::format("duplicate symptom id '{}'", s.id));
    if (!s.bind.empty())
      bindings.insert(s.bind);
    m.symptoms.push_back(std::move(s));
  }
  if (n["target"]) {
    auto t = r.string(n["target"], path + ".target");
    if (!t)
      return t.error();
    if (t->size() < 2 || (*t)[0] != '$' || !bindings.contains(t->substr(1)))
      return r.fail(n["target"], path + ".target",
                    "expected $subject or $<binding> of one of the symptoms");
    m.target = *t;
  }
  if (auto rem = n["remedies"]) {
    if (auto e = r.require(rem, path + ".remedies", YAML::NodeType::Sequence, "a list"))
      return e;
    for (std::size_t i = 0; i < rem.size(); ++i) {
      remedy x;
      auto rpath = fmt::format("{}.remedies[{}]", path, i);
      if (auto e = read_remedy(r, rem[i], rpath, x))
        return e;
      if (!x.when.empty() && !ids.contains(x.when))
        return r.fail(rem[i]["when"], rpath + ".when", fmt::format("no symptom '{}'", x.when));
      if (!x.requires_binding.empty() && !bindings.contains(x.requires_binding))
        return r.fail(rem[i]["requires"], rpath + ".requires",
                      fmt::format("no symptom binds '{}'", x.requires_binding));
      m.remedies.push_back(std::move(x));
    }
  }
  if (auto risks = n["risks"]) {
    if (auto e = r.require(risks, path + ".risks", YAML::NodeType::Sequence, "a list"))
      return e;
    for (std::size_t i = 0; i < risks.size(); ++i) {
      auto s = r.string(risks[i], fmt::format("{}.risks[{}]", path, i));
      if (!s)
        return s.error();
      m.risks.push_back(*s);
    }
  }
  if (auto cues = n["cues"]) {
    if (auto e = r.require(cues, path + ".cues", YAML::NodeType::Sequence, "a list of phrases"))
      return e;
    for (std::size_t i = 0; i < cues.size(); ++i) {
      auto s = r.string(cues[i], fmt::format("{}.cues[{}]", path, i));
      if (!s)
        return s.error();
      if (s->find_first_not_of(" \t") == std::string::npos)
        return r.fail(cues[i], fmt::format("{}.cues[{}]", path, i), "an empty cue");
      m.cues.push_back(*s);
    }
  }
  return std::nullopt;
}

std::optional<sreh::error> read_thresholds(const kb_reader& r, const YAML::Node& n,
                                           thresholds& t) {
  if (!n)
    return std::nullopt;
  if (auto e = r.require(n, "thresholds", YAML::NodeType::Map, "a mapping"))
    return e;
  if (auto e = r.known_keys(n, "thresholds", {"conclude_score", "conclude_margin",
                                              "investigate_steps",
                                              "investigate_steps_per_extra_leaf",
                                              "remedy_reserve_steps", "sticky_classes",
                                              "goal_cue_weight", "max_rounds"}))
    return e;
  for (auto [key, dst] : {std::pair{"conclude_score", &t.conclude_score},
                          std::pair{"conclude_margin", &t.conclude_margin},
                          std::pair{"goal_cue_weight", &t.goal_cue_weight}}) {
    if (!n[key])
      continue;
    auto v = r.number(n[key], std::string{"thresholds."} + key);
    if (!v)
      return v.error();
    *dst = *v;
  }
  if (n["investigate_steps"]) {
    auto v = r.number(n["investigate_steps"], "thresholds.investigate_steps");
    if (!v)
      return v.error();
    if (*v < 1 || *v > 1000)
      return r.fail(n["investigate_steps"], "thresholds.investigate_steps", "expected 1..1000");
    t.investigate_steps = static_cast<int>(*v);
  }
  if (n["investigate_steps_per_extra_leaf"]) {
    auto v = r.number(n["investigate_steps_per_extra_leaf"],
                      "thresholds.investigate_steps_per_extra_leaf");
    if (!v)
      return v.error();
    if (*v < 0 || *v > 100)
      return r.fail(n["investigate_steps_per_extra_leaf"],
                    "thresholds.investigate_steps_per_extra_leaf", "expected 0..100");
    t.investigate_steps_per_extra_leaf = static_cast<int>(*v);
  }
  if (n["remedy_reserve_steps"]) {
    auto v = r.number(n["remedy_reserve_steps"], "thresholds.remedy_reserve_steps");
    if (!v)
      return v.error();
    if (*v < 0 || *v > 100)
      return r.fail(n["remedy_reserve_steps"], "thresholds.remedy_reserve_steps", "expected 0..100");
    t.remedy_reserve_steps = static_cast<int>(*v);
  }
  if (n["max_rounds"]) {
    auto v = r.number(n["max_rounds"], "thresholds.max_rounds");
    if (!v)
      return v.error();
    if (*v < 1 || *v > 20)
      return r.fail(n["max_rounds"], "thresholds.max_rounds", "expected 1..20");
    t.max_rounds = static_cast<int>(*v);
  }
  if (auto s = n["sticky_classes"]) {
    if (auto e = r.require(s, "thresholds.sticky_classes", YAML::NodeType::Sequence, "a list"))
      return e;
    for (auto c : s)
      t.sticky_classes.push_back(c.Scalar());
  }
  return std::nullopt;
}

expected<knowledge_base> read_kb(kb_reader& r, const YAML::Node& root) {
  knowledge_base kb;
  r.at(root);
  if (auto e = r.require(root, "(top)", YAML::NodeType::Map, "a mapping"))
    return *e;
  if (auto e = r.known_keys(root, "(top)", {"version", "thresholds", "anomalies", "propagation",
                                            "failure_modes"}))
    return *e;
  if (auto e = read_thresholds(r, root["thresholds"], kb.limits))
    return *e;
  auto an = root["anomalies"];
  if (auto e = r.require(an, "anomalies", YAML::NodeType::Sequence, "a list"))
    return *e;
  for (std::size_t i = 0; i < an.size(); ++i) {
    auto path = fmt::format("anomalies[{}]", i);
    if (auto e = r.require(an[i], path, YAML::NodeType::Map, "a mapping"))
      return *e;
    r.at(an[i]);
    if (auto e = r.known_keys(an[i], path, {"class", "when"}))
      return *e;
    anomaly_rule a;
    auto cls = r.string(an[i]["class"], path + ".class");
    if (!cls)
      return cls.error();
    a.cls = *cls;
    if (auto e = read_condition(r, an[i]["when"], path + ".when", a.when))
      return *e;
    kb.anomalies.push_back(std::move(a));
  }
  if (auto pr = root["propagation"]) {
    if (auto e = r.require(pr, "propagation", YAML::NodeType::Map, "a mapping"))
      return *e;
    for (auto it = pr.begin(); it != pr.end(); ++it) {
      auto path = "propagation." + it->first.Scalar();
      if (auto e = r.require(it->second, path, YAML::NodeType::Sequence, "a list of classes"))
        return *e;
      auto& dst = kb.propagation[it->first.Scalar()];
      // A copy: yaml-cpp's iterator proxy dies with this statement (ASan: stack-use-after-scope).
      const YAML::Node classes = it->second;
      for (const auto& c : classes)
        dst.push_back(c.Scalar());
    }
  }
  auto fm = root["failure_modes"];
  if (auto e = r.require(fm, "failure_modes", YAML::NodeType::Sequence, "a list"))
    return *e;
  for (std::size_t i = 0; i < fm.size(); ++i) {
    failure_mode m;
    auto path = fmt::format("failure_modes[{}]", i);
    if (auto e = read_mode(r, fm[i], path, m))
      return *e;
    if (kb.find(m.kind))
      return r.fail(fm[i]["kind"], path + ".kind", fmt::format("duplicate kind '{}'", m.kind));
    kb.modes.push_back(std::move(m));
  }
  if (kb.modes.empty())
    return r.fail(fm, "failure_modes", "at least one failure mode is needed");
  return kb;
}

} // namespace

expected<knowledge_base> parse_knowledge_base(std::string_view yaml, std::string_view source) {
  kb_reader r{source};
  try {
    r.root_ = YAML::Load(std::string{yaml});
    auto kb = read_kb(r, r.root_);
    if (kb)
      kb->source = std::string{source};
    return kb;
  } catch (const YAML::Exception& e) {
    return sreh::error{errc::invalid_argument,
                       fmt::format("{}:{}:{}: {}", source, e.mark.line + 1, e.mark.column + 1,
                                   e.msg)};
  }
}

expected<knowledge_base> load_knowledge_base(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return sreh::error{errc::not_found, fmt::format("{}: cannot open the knowledge base", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_knowledge_base(ss.str(), path);
}

expected<knowledge_base> embedded_knowledge_base() {
  return parse_knowledge_base(embedded_knowledge_text(), "<embedded>/failure_modes.yaml");
}

} // namespace sreh::plugins::reasoner
