#include "eval/runner.hpp"

#include <fmt/format.h>

#include <cctype>
#include <future>

#include "core/base/json.hpp"
#include "eval/follow.hpp"
#include "eval/probe.hpp"
#include "net/node/node_parts.hpp"
#include "plugins/models/builtin/reasoner.hpp"
#include "plugins/tools/sandbox/scenario.hpp"

namespace sreh::eval {

namespace {

namespace sb = plugins::sandbox;
namespace ev = sreh::eval;
using steady = std::chrono::steady_clock;

/// The alert as string labels: `alert` (its name), its labels, its annotations.
std::string labels_of(const sb::alert_spec& a) {
  std::map<std::string, std::string> all;
  for (auto& [k, v] : a.annotations)
    all[k] = v;
  for (auto& [k, v] : a.labels)
    all[k] = v;
  if (!a.name.empty())
    all["alert"] = a.name;
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  for (auto& [k, v] : all) {
    w.Key(k.c_str());
    w.String(v.c_str());
  }
  w.EndObject();
  return buf.GetString();
}

std::string member_text(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject())
    return {};
  auto m = obj.FindMember(key);
  if (m == obj.MemberEnd())
    return {};
  return m->value.IsString() ? std::string{m->value.GetString()} : json::stringify(m->value);
}

/// The run, its tool steps and its conclusion as the scorer reads them.
expected<ev::run_record> read_run(net::node_parts& n, const std::string& run_id) {
  ev::run_record rec;
  rec.run_id = run_id;
  auto r = n.store().get_run(run_id);
  if (!r)
    return r.error();
  if (!*r)
    return sreh::error{errc::not_found, "run " + run_id + " is not in the store"};
  rec.state = (*r)->state;
  rec.error = (*r)->error;
  rec.conclusion = (*r)->conclusion;
  auto steps = n.store().get_steps(run_id);
  if (!steps)
    return steps.error();
  if (!(*r)->quality.empty()) {
    auto q = quality::from_json((*r)->quality);
    if (!q)
      return sreh::error{errc::internal, "run " + run_id + ": " + q.error().message};
    rec.quality = std::move(*q);
  }
  rec.journal = *steps;
  for (auto& s : *steps) {
    auto decision = json::parse_object(s.decision);
    if (s.kind == step_kind::conclude) {
      if (decision)
        rec.detail = member_text(*decision, "detail");
      continue;
    }
    if (s.kind != step_kind::tool)
      continue;
    ev::step_record st;
    st.n = s.n;
    st.tool = s.tool;
    st.state = s.state;
    st.error = s.error;
    if (auto t = n.tools().find(s.tool)) {
      st.target = t->scope(s.args).target;
      st.mutating = !t->idempotent();
    }
    if (decision && decision->HasMember("policy"))
      st.policy_effect = member_text((*decision)["policy"], "effect");
    rec.steps.push_back(std::move(st));
  }
  persistence::approval_filter f;
  f.run_id = run_id;
  f.limit = 500;
  if (auto page = n.store().list_approvals(f))
    rec.approvals_requested = static_cast<std::int64_t>(page->approvals.size());
  return rec;
}

/// "checkout.error_rate=0.002, ..." for every `<entity>.<metric>` of the expression.
std::string values_of(const sb::world& w, const std::string& expr) {
  std::string out;
  std::size_t i = 0;
  while (i < expr.size()) {
    auto j = expr.find_first_of(" \t()", i);
    auto token = expr.substr(i, j == std::string::npos ? std::string::npos : j - i);
    i = j == std::string::npos ? expr.size() : j + 1;
    auto dot = token.rfind('.');
    if (dot == std::string::npos || dot == 0 || std::isdigit(static_cast<unsigned char>(token[0])))
      continue;
    auto v = w.metric(token.substr(0, dot), token.substr(dot + 1));
    out +=
      fmt::format("{}{}={}", out.empty() ? "" : ", ", token, v ? fmt::format("{:.4g}", *v) : "?");
  }
  return out;
}

ev::world_record read_world(const sb::world& w, const mitigation_probe& probe) {
  ev::world_record rec;
  const auto& expr = w.spec().expect.mitigated;
  if (!expr.empty()) {
    auto held = w.evaluate(expr);
    if (held)
      rec.mitigated = *held;
    else
      rec.mitigated_error = held.error().message;
    rec.mitigated_values = values_of(w, expr);
  }
  rec.mitigated_after_s = probe.first_held_after_s();
  rec.elapsed_s = w.now() - sb::epoch;
  for (auto& a : w.actions())
    rec.actions.push_back(fmt::format("{}:{}", sb::tool_name(a.act.kind), a.act.target));
  return rec;
}

/// Submits the goal and returns the run id.
expected<std::string> submit(net::node_parts& n, const sb::scenario& sc,
                             const config::node_config& cfg) {
  goal_request req;
  req.goal = sc.goal;
  req.submitter = "eval";
  req.labels = labels_of(sc.alert);
  req.budget = cfg.budget;
  std::promise<expected<actors::submit_reply>> done;
  n.kernel().submit(std::move(req),
                    [&done](expected<actors::submit_reply> r) { done.set_value(std::move(r)); });
  auto r = done.get_future().get();
  if (!r)
    return r.error();
  return r->run_id;
}

/// Approves every approval `run_id` asks for (review mode, or a policy of its own) until it ends;
/// cancels it at the deadline. Returns "" or what went wrong.
std::string follow(net::node_parts& n, run_follower& f, const std::string& run_id,
                   const eval_options& opts) {
  auto deadline = steady::now() + opts.run_timeout;
  std::vector<requested_approval> approvals;
  while (!f.wait(run_id, deadline, approvals)) {
    if (approvals.empty()) { // the deadline passed
      n.kernel().cancel(run_id, "eval", [](expected<run_state>) {});
      f.wait(run_id, steady::now() + std::chrono::seconds(10), approvals);
      return fmt::format("the run did not end within {} s and was cancelled",
                         opts.run_timeout.count());
    }
    for (const auto& requested : approvals) {
      const auto& id = requested.id;
      if (opts.mode != "review" && !opts.policy) {
        f.note("approval " + id + " requested in " + opts.mode + " mode: left undecided");
        continue;
      }
      approval_vote v;
      v.by = "eval-approver";
      v.role = "approver";
      v.approve = true;
      v.comment =
        opts.policy ? "approved by the evaluation" : "approved by sreh eval --mode review";
      v.at = n.clock().now_us();
      n.kernel().decide(id, std::move(v), [&f, id](expected<approval> r) {
        if (!r)
          f.note("approving " + id + " failed: " + r.error().message);
      });
    }
  }
  return {};
}

} // namespace

ev::scenario_score run_scenario_file(const std::string& file, const eval_options& opts) {
  auto started = steady::now();
  auto wall_ms = [&] {
    return std::chrono::duration<double, std::milli>(steady::now() - started).count();
  };
  auto fail = [&](std::string why) {
    auto row = ev::failed_row(file, std::move(why));
    row.wall_ms = wall_ms();
    return row;
  };
  auto sc = sb::load_scenario(file);
  if (!sc)
    return fail(sc.error().message);
  auto expect = sc->expect;
  auto id = sc->id;
  auto world = std::make_shared<sb::world>(*sc);
  auto probe = std::make_shared<mitigation_probe>(world, expect.mitigated);

  temp_dir dir;
  if (dir.path.empty())
    return fail("cannot create a temp data dir");
  config::node_config cfg;
  cfg.node_id = "eval";
  cfg.data_dir = dir.path;
  cfg.policy_mode = opts.mode;
  if (auto err = config::finalize(cfg))
    return fail(err.message);
  auto mode = policy::parse_mode(opts.mode);
  if (!mode)
    return fail("unknown mode '" + opts.mode + "'");
  policy::policy_set policy;
  policy.default_mode = *mode;
  policy.version = "eval:" + opts.mode;
  if (opts.policy)
    policy = *opts.policy;
  actors::tool_registry sandbox_tools;
  sb::add_sandbox_tools(sandbox_tools, world);
  auto tools = std::make_shared<actors::tool_registry>();
  add_probed_tools(*tools, sandbox_tools, probe);
  auto provider =
    opts.make_provider ? opts.make_provider() : plugins::make_builtin_reasoner(opts.kb);
  if (!provider)
    return fail("reasoner: " + provider.error().message);

  run_follower follower; // outlives the node: its callbacks may run until the node stops
  auto parts = net::node_parts::start(cfg, tools, std::move(policy), *provider);
  if (!parts)
    return fail("cannot start a node: " + parts.error().message);
  auto& n = **parts;
  auto token = n.hub().subscribe(
    [&follower](const actors::event_hub::batch& b) { follower.on_events(b->events); });
  auto run_id = submit(n, *sc, cfg);
  std::string trouble = run_id ? follow(n, follower, *run_id, opts) : run_id.error().message;
  expected<ev::run_record> run = run_id ? read_run(n, *run_id) : run_id.error();
  n.hub().unsubscribe(token);
  parts->reset(); // actors, then the writer, then the store; the temp dir goes last

  if (!run)
    return fail("cannot read the run: " + run.error().message);
  auto row = ev::score(expect, *run, read_world(*world, *probe));
  row.journal = std::move(run->journal);
  row.id = id;
  row.file = file;
  for (auto& p : follower.problems())
    row.failures.push_back(p);
  if (!trouble.empty()) {
    row.failures.push_back(trouble);
    row.passed = false;
  }
  row.passed = row.passed && follower.problems().empty();
  row.wall_ms = wall_ms();
  return row;
}

} // namespace sreh::eval
