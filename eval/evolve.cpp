#include "eval/evolve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/base/json.hpp"
#include "core/journal/compare.hpp"
#include "eval/replay.hpp"
#include "eval/runner.hpp"
#include "persistence/store/store.hpp"

namespace sreh::eval {

namespace fs = std::filesystem;

namespace {

/// True when the file has a top-level `scenario:` key (worlds and other YAML do not).
bool looks_like_scenario(const fs::path& p) {
  std::ifstream in{p};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("scenario:", 0) == 0 || line.rfind("scenario :", 0) == 0)
      return true;
  return false;
}

bool cancelled(const gate_inputs& in) {
  return in.cancel != nullptr && in.cancel->load();
}

void tell(const gate_inputs& in, const std::string& what) {
  if (in.progress)
    in.progress(what);
}

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : "; ") + x;
  return out;
}

/// One scenario under both versions.
struct scenario_pair {
  scenario_score base, candidate;
  journal::comparison cmp;
  std::vector<std::string> regressions;
};

std::string name_of(const scenario_score& s) {
  return s.id.empty() ? s.file : s.id;
}

/// Where the two runs of a scenario part: " (the runs part at step N: what differs)".
std::string parting(const scenario_pair& p) {
  if (p.cmp.first_divergence == 0)
    return "";
  const auto& s = p.cmp.steps.at(static_cast<std::size_t>(p.cmp.first_divergence - 1));
  return fmt::format(" (the runs part at step {}: {})", s.n, s.difference);
}

void judge(scenario_pair& p) {
  const auto name = name_of(p.candidate);
  if (p.base.passed && !p.candidate.passed)
    p.regressions.push_back(fmt::format("scenario {}: passes with the current version, fails with "
                                        "the candidate: {}{}",
                                        name, joined(p.candidate.failures), parting(p)));
  if (p.candidate.unsafe_proposed > p.base.unsafe_proposed)
    p.regressions.push_back(fmt::format("scenario {}: the candidate proposes {} unsafe action(s), "
                                        "the current version {} ({}){}",
                                        name, p.candidate.unsafe_proposed, p.base.unsafe_proposed,
                                        joined(p.candidate.unsafe), parting(p)));
  if (p.candidate.unsafe_executed > p.base.unsafe_executed)
    p.regressions.push_back(fmt::format("scenario {}: the candidate lets {} unsafe action(s) run, "
                                        "the current version {} ({}){}",
                                        name, p.candidate.unsafe_executed, p.base.unsafe_executed,
                                        joined(p.candidate.unsafe), parting(p)));
  if (p.base.quality && p.candidate.quality &&
      p.candidate.quality->total + quality_slack < p.base.quality->total)
    p.regressions.push_back(fmt::format("scenario {}: reasoning quality falls from {} to {}{}",
                                        name, p.base.quality->total, p.candidate.quality->total,
                                        parting(p)));
}

scenario_pair run_pair(const std::string& file, const gate_inputs& in) {
  eval_options opts;
  opts.mode = in.mode;
  scenario_pair p;
  opts.make_provider = in.base;
  opts.policy = in.base_policy;
  p.base = run_scenario_file(file, opts);
  opts.make_provider = in.candidate;
  opts.policy = in.candidate_policy;
  p.candidate = run_scenario_file(file, opts);
  journal::sides names{
    "current", "candidate", "the current version's run", "the candidate's run", false, 0};
  p.cmp = journal::compare(p.base.journal, p.candidate.journal, names);
  judge(p);
  return p;
}

/// One recent run replayed under the candidate.
struct run_row {
  std::string run_id;
  std::string skipped; // why it was not replayed
  replay_report rep;
  std::string verdict; // same | changed | inconclusive | regressed | not_replayed
  std::vector<std::string> regressions;
};

std::string divergence_of(const replay_report& r) {
  if (r.first_divergence == 0)
    return "";
  const auto& s = r.steps.at(static_cast<std::size_t>(r.first_divergence - 1));
  return fmt::format(" (it parts from the recording at step {}: {})", s.n, s.difference);
}

run_row replay_one(const run& r, const gate_inputs& in) {
  run_row row;
  row.run_id = r.id;
  auto rec = load_recording(*in.store, r.id);
  auto provider = rec ? in.candidate() : expected<actors::model_provider_ptr>{rec.error()};
  auto rep = provider ? replay(*rec, *in.cfg, in.make_tools(),
                               in.candidate_policy ? *in.candidate_policy : in.policy, *provider)
                      : expected<replay_report>{provider.error()};
  if (!rep) {
    row.verdict = "not_replayed";
    row.skipped = rep.error().message;
    return row;
  }
  row.rep = std::move(*rep);
  const auto& x = row.rep;
  if (x.same())
    row.verdict = "same";
  else if (x.misses > 0)
    row.verdict = "inconclusive"; // it asked what the recording cannot answer
  else if (x.recorded_succeeded && !x.replayed_succeeded) {
    row.verdict = "regressed";
    row.regressions.push_back(fmt::format("run {}: succeeded as recorded, the candidate ends "
                                          "'{}'{}",
                                          r.id, x.replayed_end, divergence_of(x)));
  } else
    row.verdict = "changed";
  return row;
}

/// The newest succeeded runs that no other run started and that are not forks, at most
/// `in.replay_last`: goal runs, and for a policy candidate flow runs too (a knowledge base, a
/// prompt or a route changes nothing in a flow's steps).
std::vector<run> recent_runs(const gate_inputs& in, std::string& error) {
  std::vector<run> out;
  persistence::run_filter f;
  f.state = run_state::succeeded;
  f.limit = 100;
  while (static_cast<std::int64_t>(out.size()) < in.replay_last) {
    auto page = in.store->list_runs(f);
    if (!page) {
      error = "cannot list the recent runs: " + page.error().message;
      return out;
    }
    for (auto& r : page->runs)
      if ((r.kind == "goal" || (r.kind == "flow" && in.candidate_policy)) && r.parent.empty() &&
          r.spec.find("forked_from") == std::string::npos &&
          static_cast<std::int64_t>(out.size()) < in.replay_last)
        out.push_back(std::move(r));
    if (page->next_cursor.empty())
      break;
    f.before_id = page->next_cursor;
  }
  return out;
}

void write_side(json::writer& w, const scenario_score& s) {
  w.StartObject();
  w.Key("run_id"), w.String(s.run_id.c_str());
  w.Key("passed"), w.Bool(s.passed);
  w.Key("steps"), w.Int64(s.steps);
  w.Key("unsafe"), w.Int64(s.unsafe_proposed);
  w.Key("quality");
  if (s.quality)
    w.Int64(s.quality->total);
  else
    w.Null();
  w.Key("failures");
  w.StartArray();
  for (const auto& f : s.failures)
    w.String(f.c_str());
  if (!s.error.empty())
    w.String(s.error.c_str());
  w.EndArray();
  w.EndObject();
}

void write_scenarios(json::writer& w, const std::vector<scenario_pair>& xs) {
  w.StartArray();
  for (const auto& p : xs) {
    w.StartObject();
    w.Key("scenario"), w.String(name_of(p.candidate).c_str());
    w.Key("file"), w.String(p.candidate.file.c_str());
    w.Key("current"), write_side(w, p.base);
    w.Key("candidate"), write_side(w, p.candidate);
    w.Key("first_divergence"), w.Int64(p.cmp.first_divergence);
    w.Key("difference");
    if (p.cmp.first_divergence > 0)
      w.String(
        p.cmp.steps.at(static_cast<std::size_t>(p.cmp.first_divergence - 1)).difference.c_str());
    else
      w.Null();
    w.Key("verdict"), w.String(!p.regressions.empty()             ? "regressed"
                               : p.candidate.steps < p.base.steps ? "fewer_steps"
                               : p.cmp.first_divergence == 0      ? "same"
                                                                  : "changed");
    w.EndObject();
  }
  w.EndArray();
}

void write_runs(json::writer& w, const std::vector<run_row>& xs) {
  w.StartArray();
  for (const auto& r : xs) {
    w.StartObject();
    w.Key("run_id"), w.String(r.run_id.c_str());
    w.Key("verdict"), w.String(r.verdict.c_str());
    if (!r.skipped.empty()) {
      w.Key("why"), w.String(r.skipped.c_str());
    } else {
      w.Key("recorded_end"), w.String(r.rep.recorded_end.c_str());
      w.Key("replayed_end"), w.String(r.rep.replayed_end.c_str());
      w.Key("recorded_steps"), w.Int64(r.rep.recorded_tool_steps);
      w.Key("replayed_steps"), w.Int64(r.rep.replayed_tool_steps);
      w.Key("first_divergence"), w.Int64(r.rep.first_divergence);
      w.Key("misses"), w.Int64(r.rep.misses);
    }
    w.EndObject();
  }
  w.EndArray();
}

struct sums {
  std::int64_t passed_base = 0, passed_candidate = 0, steps_base = 0, steps_candidate = 0;
  double quality_base = 0, quality_candidate = 0;
};

sums sum(const std::vector<scenario_pair>& xs) {
  sums t;
  for (const auto& p : xs) {
    t.passed_base += p.base.passed ? 1 : 0;
    t.passed_candidate += p.candidate.passed ? 1 : 0;
    t.steps_base += p.base.steps;
    t.steps_candidate += p.candidate.steps;
    t.quality_base += p.base.quality ? p.base.quality->total : 0;
    t.quality_candidate += p.candidate.quality ? p.candidate.quality->total : 0;
  }
  if (!xs.empty()) {
    t.quality_base /= static_cast<double>(xs.size());
    t.quality_candidate /= static_cast<double>(xs.size());
  }
  return t;
}

std::string report_json(const gate_inputs& in, const std::vector<scenario_pair>& scenarios,
                        const std::vector<run_row>& runs, std::size_t regressions) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("current"), w.String(in.base_version.c_str());
  w.Key("candidate"), w.String(in.candidate_version.c_str());
  w.Key("scenarios"), write_scenarios(w, scenarios);
  w.Key("runs"), write_runs(w, runs);
  auto t = sum(scenarios);
  w.Key("totals");
  w.StartObject();
  w.Key("scenarios"), w.Int64(static_cast<std::int64_t>(scenarios.size()));
  w.Key("passed_current"), w.Int64(t.passed_base);
  w.Key("passed_candidate"), w.Int64(t.passed_candidate);
  w.Key("steps_current"), w.Int64(t.steps_base);
  w.Key("steps_candidate"), w.Int64(t.steps_candidate);
  w.Key("quality_current"), w.Double(t.quality_base);
  w.Key("quality_candidate"), w.Double(t.quality_candidate);
  w.Key("runs_replayed"),
    w.Int64(static_cast<std::int64_t>(
      std::count_if(runs.begin(), runs.end(), [](const run_row& r) { return r.skipped.empty(); })));
  w.Key("regressions"), w.Int64(static_cast<std::int64_t>(regressions));
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace

std::vector<std::string> scenario_files(const std::vector<std::string>& paths,
                                        std::vector<std::string>* empty) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it{p, ec}, end;
    for (; !ec && it != end; it.increment(ec)) {
      const auto& e = *it;
      if (e.is_directory() && e.path().filename() == "worlds") {
        it.disable_recursion_pending();
        continue;
      }
      if (e.is_regular_file() && e.path().extension() == ".yaml" && looks_like_scenario(e.path()))
        found.push_back(e.path().string());
    }
    std::sort(found.begin(), found.end());
    if (found.empty() && empty != nullptr)
      empty->push_back(p);
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

gate_verdict evaluate_candidate(const gate_inputs& in) {
  gate_verdict v;
  std::vector<std::string> empty;
  auto files = scenario_files(in.suites, &empty);
  if (!empty.empty()) {
    v.error = "evolve.suites: no scenario files in " + joined(empty);
    return v;
  }
  std::vector<scenario_pair> scenarios;
  for (std::size_t i = 0; i < files.size() && !cancelled(in); ++i) {
    tell(in, fmt::format("scenario {}/{}: {}", i + 1, files.size(), files[i]));
    scenarios.push_back(run_pair(files[i], in));
    if (!scenarios.back().base.error.empty()) {
      v.error = fmt::format("{}: {}", files[i], scenarios.back().base.error);
      return v;
    }
  }
  std::vector<run_row> runs;
  if (in.store != nullptr && in.cfg != nullptr && in.make_tools && in.replay_last > 0) {
    auto recent = recent_runs(in, v.error);
    if (!v.error.empty())
      return v;
    for (std::size_t i = 0; i < recent.size() && !cancelled(in); ++i) {
      tell(in, fmt::format("run {}/{}: {}", i + 1, recent.size(), recent[i].id));
      runs.push_back(replay_one(recent[i], in));
    }
  }
  if (cancelled(in)) {
    v.error = "the evaluation was interrupted (the node stopped)";
    return v;
  }
  for (const auto& p : scenarios)
    v.regressions.insert(v.regressions.end(), p.regressions.begin(), p.regressions.end());
  for (const auto& r : runs)
    v.regressions.insert(v.regressions.end(), r.regressions.begin(), r.regressions.end());
  if (files.empty() && runs.empty())
    v.error = "nothing to evaluate the candidate on: evolve.suites names no scenario and no "
              "recent run could be replayed";
  v.report = report_json(in, scenarios, runs, v.regressions.size());
  return v;
}

} // namespace sreh::eval
