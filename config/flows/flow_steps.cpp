// Reading a flow file's steps: each a mapping with an `id` and one kind key (docs/flows.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "config/flows/flow_read.hpp"

namespace sreh::config::flow_detail {

namespace {

using yaml::entry;
using yaml::reader;
using namespace sreh::flows;

constexpr std::array<std::string_view, 7> kind_keys = {"tool",     "goal", "approval", "condition",
                                                       "parallel", "wait", "flow"};

bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > 64 || id == end_target ||
      !std::isalnum(static_cast<unsigned char>(id.front())))
    return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

/// Every string scalar under `e` (a mapping or sequence of any depth) as a text to check.
void collect_texts(load_state& s, const entry& e, const std::string& step, bool compensation) {
  if (e.value.is_mapping()) {
    for (const auto& x : s.r.pairs(e))
      collect_texts(s, x, step, compensation);
  } else if (e.value.is_sequence()) {
    for (const auto& x : s.r.items(e))
      collect_texts(s, x, step, compensation);
  } else if (e.value.is_scalar()) {
    auto text = s.r.string(e);
    if (text.find('$') != std::string::npos)
      s.texts.push_back({e, text, step, false, compensation});
  }
}

/// A text that may hold placeholders; an `expression` one is checked as one too.
std::string text(load_state& s, const entry& e, const std::string& step, bool non_empty = false,
                 bool expression = false) {
  auto t = non_empty ? s.r.non_empty_string(e) : s.r.string(e);
  s.texts.push_back({e, t, step, expression, false});
  return t;
}

std::string target(load_state& s, const entry& e, const std::string& step) {
  auto t = s.r.non_empty_string(e);
  s.targets.push_back({e, step, t});
  return t;
}

tool_call read_tool(load_state& s, const entry& name, const entry* args, const std::string& step,
                    bool compensation) {
  tool_call c;
  c.tool = s.r.non_empty_string(name);
  c.tool_pos = pos_of(name);
  if (s.o.tools != nullptr &&
      std::find(s.o.tools->begin(), s.o.tools->end(), c.tool) == s.o.tools->end())
    s.r.fail(name,
             yaml::unknown("tool", c.tool,
                           std::vector<std::string_view>(s.o.tools->begin(), s.o.tools->end())));
  if (args != nullptr) {
    c.args_json = s.r.json_object(*args);
    collect_texts(s, *args, step, compensation);
  }
  return c;
}

approval_step read_approval(load_state& s, const entry& e, const std::string& step) {
  approval_step a;
  if (!e.value.is_null() && !e.value.is_mapping())
    s.r.fail(e, "expected a mapping with approvers, roles, timeout, reason");
  for (const auto& x : s.r.entries(e, {"approvers", "roles", "timeout", "reason"})) {
    if (x.key == "approvers")
      a.approvers = static_cast<int>(s.r.integer(x, 1, 100));
    else if (x.key == "roles")
      for (const auto& role : s.r.non_empty_items(x))
        a.roles.push_back(s.r.one_of(role, {"viewer", "operator", "approver", "admin"}));
    else if (x.key == "timeout")
      a.timeout_ms = 1000 * s.r.duration_s(x);
    else
      a.reason = text(s, x, step);
  }
  return a;
}

condition_step read_condition(load_state& s, const entry& e, const entry* then_e,
                              const entry* else_e, const std::string& step) {
  condition_step c;
  if (e.value.is_sequence()) {
    if (then_e != nullptr)
      s.r.fail(*then_e, "a condition with cases gives each case its 'then'");
    for (const auto& item : s.r.non_empty_items(e)) {
      condition_case k;
      const entry* when = nullptr;
      for (const auto& x : s.r.entries(item, {"when", "then"})) {
        if (x.key == "when") {
          k.when = text(s, x, step, true, true);
          when = &x;
        } else {
          k.then = target(s, x, step);
        }
      }
      if (when == nullptr || k.then.empty())
        s.r.fail(item, when == nullptr ? "missing key 'when'" : "missing key 'then'");
      c.cases.push_back(std::move(k));
    }
  } else {
    if (!e.value.is_scalar())
      s.r.fail(e, fmt::format("expected an expression or a sequence of cases (when, then), got {}",
                              e.value.kind_name()));
    if (then_e == nullptr)
      s.r.fail(e, "a condition needs 'then' (the step to go to when it holds)");
    c.cases.push_back({text(s, e, step, true, true), target(s, *then_e, step)});
  }
  if (else_e != nullptr)
    c.otherwise = target(s, *else_e, step);
  return c;
}

parallel_step read_parallel(load_state& s, const entry& e) {
  parallel_step p;
  bool has_branches = false;
  for (const auto& x : s.r.entries(e, {"join", "branches"})) {
    if (x.key == "join") {
      p.join = s.r.one_of(x, {"all", "any"}) == "all" ? join_mode::all : join_mode::any;
    } else {
      has_branches = true;
      for (const auto& b : s.r.pairs(x)) {
        if (!valid_id(b.key))
          s.r.fail(b, fmt::format("branch name '{}': use letters, digits, '_' and '-'", b.key));
        (void)s.r.non_empty_items(b);
        p.branches.push_back({b.key, read_steps(s, b)});
      }
    }
  }
  if (!has_branches || p.branches.size() < 2)
    s.r.fail(e, "a parallel step needs at least two branches (branches: {NAME: [steps], ...})");
  return p;
}

wait_step read_wait(load_state& s, const entry& e, const std::string& step) {
  wait_step w;
  if (e.value.is_scalar()) {
    w.duration_ms = 1000 * s.r.duration_s(e);
    return w;
  }
  if (!e.value.is_mapping())
    s.r.fail(e, "expected a duration (5m) or a mapping with until, deadline, every");
  bool deadline = false;
  for (const auto& x : s.r.entries(e, {"until", "deadline", "every"})) {
    if (x.key == "until") {
      w.until = text(s, x, step, true, true);
    } else if (x.key == "deadline") {
      w.deadline_ms = 1000 * s.r.duration_s(x);
      deadline = true;
    } else {
      w.every_ms = 1000 * s.r.duration_s(x);
    }
  }
  if (w.until.empty())
    s.r.fail(e, "missing key 'until' (or write the wait as a duration: wait: 5m)");
  if (!deadline)
    s.r.fail(e, "a wait until needs a deadline (how long to wait at most)");
  return w;
}

retry_policy read_retries(reader& r, const entry& e) {
  retry_policy p;
  for (const auto& x : r.entries(e, {"max", "backoff"})) {
    if (x.key == "max") {
      p.max = static_cast<int>(r.integer(x, 0, 100));
      continue;
    }
    for (const auto& b : r.entries(x, {"initial", "max", "multiplier"})) {
      if (b.key == "multiplier") {
        p.multiplier = r.number(b);
        if (p.multiplier < 1 || p.multiplier > 10)
          r.fail(b, "expected a multiplier between 1 and 10");
      } else {
        (b.key == "initial" ? p.initial_ms : p.max_ms) = 1000 * r.duration_s(b);
      }
    }
    if (p.initial_ms > p.max_ms)
      r.fail(x, "initial is longer than max");
  }
  return p;
}

on_failure read_on_failure(load_state& s, const entry& e, const std::string& step) {
  auto v = s.r.non_empty_string(e);
  if (v == "fail")
    return {};
  if (v == "continue")
    return {failure_action::continue_on, {}};
  if (v == "compensate")
    return {failure_action::compensate, {}};
  if (v.rfind("goto:", 0) == 0) {
    auto to = v.substr(5);
    to.erase(0, to.find_first_not_of(' '));
    if (to.empty())
      s.r.fail(e, "goto: needs a step id (goto:STEP)");
    s.targets.push_back({e, step, to});
    return {failure_action::go_to, to};
  }
  s.r.fail(e, fmt::format("expected fail, continue, compensate or goto:STEP, got '{}'", v));
}

/// The key of `e` that only `kind` steps take, or a failure.
void only_for(reader& r, const entry* e, step_kind kind, std::initializer_list<step_kind> allowed,
              std::string_view which) {
  if (e != nullptr && std::find(allowed.begin(), allowed.end(), kind) == allowed.end())
    r.fail(*e, fmt::format("'{}' is for {} steps, and this is a {} step", e->key, which,
                           to_string(kind)));
}

/// The key `key` of a step's keys `xs`, or nullptr.
const entry* find_key(const std::vector<entry>& xs, std::string_view key) {
  for (const auto& x : xs)
    if (x.key == key)
      return &x;
  return nullptr;
}

/// The step's `id`: present, well-formed and not used by another step of the flow.
std::string read_step_id(load_state& s, const entry& e, const std::vector<entry>& xs) {
  auto& r = s.r;
  const auto* id = find_key(xs, "id");
  if (id == nullptr)
    r.fail(e, "missing key 'id'");
  auto out = r.non_empty_string(*id);
  if (!valid_id(out))
    r.fail(*id, fmt::format("step id '{}': 1-64 letters, digits, '_' and '-', starting with a "
                            "letter or digit (and not 'end')",
                            out));
  if (auto [it, fresh] = s.ids.emplace(out, *id); !fresh)
    r.fail(*id,
           fmt::format("step id '{}' is used twice (first at {})", out, r.where(it->second.mark)));
  return out;
}

/// The step's one kind key (tool, goal, ...) read into `st.body`.
void read_step_body(load_state& s, const entry& e, const std::vector<entry>& xs, step& st) {
  auto& r = s.r;
  const entry* kind_e = nullptr;
  for (const auto& x : xs)
    if (std::find(kind_keys.begin(), kind_keys.end(), x.key) != kind_keys.end()) {
      if (kind_e != nullptr)
        r.fail(x,
               fmt::format("a step has one kind, and this one is a {} step already", kind_e->key));
      kind_e = &x;
    }
  if (kind_e == nullptr)
    r.fail(e, "a step needs one of tool, goal, approval, condition, parallel, wait, flow");
  const auto& k = kind_e->key;
  if (k == "tool")
    st.body = read_tool(s, *kind_e, find_key(xs, "args"), st.id, false);
  else if (k == "goal")
    st.body = goal_step{text(s, *kind_e, st.id, true), {}};
  else if (k == "approval")
    st.body = read_approval(s, *kind_e, st.id);
  else if (k == "condition")
    st.body = read_condition(s, *kind_e, find_key(xs, "then"), find_key(xs, "else"), st.id);
  else if (k == "parallel")
    st.body = read_parallel(s, *kind_e);
  else if (k == "wait")
    st.body = read_wait(s, *kind_e, st.id);
  else
    st.body = flow_call{r.non_empty_string(*kind_e), "{}", pos_of(*kind_e)};
}

/// Keys that only some kinds of steps take appear only on those.
void check_kind_keys(reader& r, const std::vector<entry>& xs, step_kind kind) {
  auto find = [&](std::string_view key) { return find_key(xs, key); };
  only_for(r, find("args"), kind, {step_kind::tool}, "tool");
  only_for(r, find("labels"), kind, {step_kind::goal}, "goal");
  only_for(r, find("then"), kind, {step_kind::condition}, "condition");
  only_for(r, find("else"), kind, {step_kind::condition}, "condition");
  only_for(r, find("inputs"), kind, {step_kind::flow}, "flow");
  const auto acting = {step_kind::tool, step_kind::goal, step_kind::flow};
  only_for(r, find("retries"), kind, acting, "tool, goal and flow");
  only_for(r, find("compensate"), kind, acting, "tool, goal and flow");
  only_for(r, find("timeout"), kind,
           {step_kind::tool, step_kind::goal, step_kind::flow, step_kind::parallel},
           "tool, goal, flow and parallel");
}

/// A step's `compensate: {tool, args}`.
tool_call read_compensate(load_state& s, const entry& x, const std::string& step_id) {
  const entry* tool = nullptr;
  const entry* args = nullptr;
  auto cs = s.r.entries(x, {"tool", "args"});
  for (const auto& c : cs)
    (c.key == "tool" ? tool : args) = &c;
  if (tool == nullptr)
    s.r.fail(x, "missing key 'tool'");
  return read_tool(s, *tool, args, step_id, true);
}

/// The keys every kind of step may have (and labels, inputs: checked for the kind already).
void read_step_options(load_state& s, const std::vector<entry>& xs, step& st) {
  auto& r = s.r;
  for (const auto& x : xs) {
    if (x.key == "description") {
      st.description = r.string(x);
    } else if (x.key == "labels") {
      for (const auto& l : r.pairs(x))
        std::get<goal_step>(st.body).labels[l.key] = text(s, l, st.id);
    } else if (x.key == "inputs") {
      auto& call = std::get<flow_call>(st.body);
      call.inputs_json = r.json_object(x);
      collect_texts(s, x, st.id, false);
    } else if (x.key == "retries") {
      st.retries = read_retries(r, x);
    } else if (x.key == "timeout") {
      st.timeout_ms = 1000 * r.duration_s(x);
    } else if (x.key == "on_failure") {
      st.failure = read_on_failure(s, x, st.id);
    } else if (x.key == "compensate") {
      st.compensate = read_compensate(s, x, st.id);
    } else if (x.key == "next") {
      st.next = target(s, x, st.id);
    }
  }
}

step read_step(load_state& s, const entry& e) {
  auto& r = s.r;
  if (!e.value.is_mapping())
    r.fail(e, "expected a step: a mapping with an id and one of tool, goal, approval, condition, "
              "parallel, wait, flow");
  auto xs = r.entries(e, {"id", "description", "tool", "args", "goal", "labels", "approval",
                          "condition", "then", "else", "parallel", "wait", "flow", "inputs",
                          "retries", "timeout", "on_failure", "compensate", "next"});
  step st;
  st.pos = pos_of(e);
  st.id = read_step_id(s, e, xs);
  read_step_body(s, e, xs, st);
  check_kind_keys(r, xs, st.kind());
  read_step_options(s, xs, st);
  return st;
}

} // namespace

flows::source_pos pos_of(const entry& e) {
  return {e.mark.line + 1, e.mark.column + 1, e.path};
}

std::vector<step> read_steps(load_state& s, const entry& e) {
  std::vector<step> out;
  for (const auto& item : s.r.non_empty_items(e))
    out.push_back(read_step(s, item));
  return out;
}

} // namespace sreh::config::flow_detail
