#include "eval/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::eval {

namespace {

void text(json::writer& w, const char* key, const std::string& s) {
  w.Key(key);
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

std::optional<int> flag(const std::optional<bool>& b) {
  return b ? std::optional<int>{*b ? 1 : 0} : std::nullopt;
}

void write_row(json::writer& w, const scenario_score& s) {
  w.StartObject();
  json::fields(w, "id", s.id, "file", s.file, "run_id", s.run_id, "passed", s.passed, "failures",
               s.failures);
  if (!s.error.empty())
    json::field(w, "error", s.error);
  json::fields(w, "control", s.control, "concluded", s.concluded, "detected", s.detected,
               "detected_ok", s.detected_ok, "localized", s.localized_ok ? 1 : 0, "targets",
               s.targets, "missing_targets", s.missing_targets, "extra_targets", s.extra_targets,
               "root_cause", s.root_cause_ok ? 1 : 0, "kinds", s.kinds, "missing_kinds",
               s.missing_kinds, "mitigated", flag(s.mitigated), "mitigated_reason",
               s.mitigated_reason, "recovery", s.recovery, "recovery_ok", s.recovery_ok, "steps",
               s.steps, "max_steps", s.max_steps, "within_max_steps", s.within_max_steps);
  w.Key("unsafe");
  json::write_object(w, "proposed", s.unsafe_proposed, "blocked", s.unsafe_blocked, "executed",
                     s.unsafe_executed, "actions", s.unsafe);
  json::fields(w, "mutating_executed", s.mutating_executed, "approvals_requested",
               s.approvals_requested, "time_to_mitigate_s", s.time_to_mitigate_s, "elapsed_s",
               s.elapsed_s);
  w.Key("wall_ms");
  w.Double(s.wall_ms);
  json::field(w, "conclusion", s.conclusion);
  w.Key("quality");
  if (s.quality)
    quality::write_json(w, *s.quality);
  else
    w.Null();
  w.EndObject();
}

void write_totals(json::writer& w, const suite_totals& t) {
  w.StartObject();
  const std::pair<const char*, std::int64_t> counts[] = {
    {"scenarios", t.scenarios},
    {"passed", t.passed},
    {"failed", t.scenarios - t.passed},
    {"detected", t.detected_ok},
    {"localized", t.localized_ok},
    {"root_cause", t.root_cause_ok},
    {"mitigated", t.mitigated},
    {"mitigatable", t.mitigatable},
    {"steps", t.steps},
    {"unsafe_proposed", t.unsafe_proposed},
    {"unsafe_blocked", t.unsafe_blocked},
    {"unsafe_executed", t.unsafe_executed},
    {"approvals_requested", t.approvals_requested},
  };
  for (auto& [k, v] : counts) {
    w.Key(k);
    w.Int64(v);
  }
  w.Key("mean_quality");
  w.Double(t.mean_quality);
  w.Key("median_wall_ms");
  w.Double(t.median_wall_ms);
  w.Key("total_wall_ms");
  w.Double(t.total_wall_ms);
  w.EndObject();
}

const char* mark(bool ok) {
  return ok ? "1" : "0";
}

std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

} // namespace

suite_totals totals_of(const std::vector<scenario_score>& rows) {
  suite_totals t;
  std::vector<double> walls;
  int scored = 0;
  for (auto& s : rows) {
    ++t.scenarios;
    t.passed += s.passed;
    t.detected_ok += s.detected_ok;
    t.localized_ok += s.localized_ok;
    t.root_cause_ok += s.root_cause_ok;
    t.mitigatable += s.mitigated.has_value();
    t.mitigated += s.mitigated.value_or(false);
    t.steps += s.steps;
    t.unsafe_proposed += s.unsafe_proposed;
    t.unsafe_blocked += s.unsafe_blocked;
    t.unsafe_executed += s.unsafe_executed;
    t.approvals_requested += s.approvals_requested;
    if (s.quality) {
      ++scored;
      t.mean_quality += s.quality->total;
    }
    t.total_wall_ms += s.wall_ms;
    walls.push_back(s.wall_ms);
  }
  if (scored > 0)
    t.mean_quality = std::round(10 * t.mean_quality / scored) / 10;
  if (!walls.empty()) {
    std::sort(walls.begin(), walls.end());
    auto mid = walls.size() / 2;
    t.median_wall_ms = walls.size() % 2 ? walls[mid] : (walls[mid - 1] + walls[mid]) / 2;
  }
  return t;
}

std::string suite_json(const std::vector<scenario_score>& rows, const suite_info& info) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  text(w, "mode", info.mode);
  text(w, "kb", info.kb.empty() ? std::string{"<embedded>"} : info.kb);
  text(w, "route", info.route);
  w.Key("config");
  if (info.config.empty())
    w.Null();
  else
    w.String(info.config.c_str());
  w.Key("scenarios");
  w.StartArray();
  for (auto& s : rows)
    write_row(w, s);
  w.EndArray();
  w.Key("totals");
  write_totals(w, totals_of(rows));
  w.EndObject();
  return buf.GetString();
}

std::string suite_markdown(const std::vector<scenario_score>& rows) {
  std::string out =
    "| scenario | pass | detected | localized | root cause | mitigated | steps | unsafe "
    "p/b/e | approvals | time to mitigate | quality | wall ms |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (auto& s : rows) {
    auto name = s.id.empty() ? s.file : s.id;
    if (!s.error.empty()) { // it never ran: nothing to score
      out += fmt::format("| {} | FAIL | - | - | - | - | - | - | - | - | - | {:.0f} |\n", cell(name),
                         s.wall_ms);
      continue;
    }
    out += fmt::format(
      "| {} | {} | {} | {} | {} | {} | {}/{} | {}/{}/{} | {} | {} | {} | {:.0f} |\n", cell(name),
      s.passed ? "PASS" : "FAIL", mark(s.detected_ok), mark(s.localized_ok), mark(s.root_cause_ok),
      s.mitigated ? mark(*s.mitigated) : "n/a", s.steps, s.max_steps, s.unsafe_proposed,
      s.unsafe_blocked, s.unsafe_executed, s.approvals_requested,
      s.time_to_mitigate_s ? fmt::format("{}s", *s.time_to_mitigate_s) : "-",
      s.quality ? std::to_string(s.quality->total) : "-", s.wall_ms);
  }
  auto t = totals_of(rows);
  out += fmt::format("| **total** | {}/{} | {} | {} | {} | {}/{} | {} | {}/{}/{} | {} | | "
                     "mean {:.1f} | median {:.0f} |\n",
                     t.passed, t.scenarios, t.detected_ok, t.localized_ok, t.root_cause_ok,
                     t.mitigated, t.mitigatable, t.steps, t.unsafe_proposed, t.unsafe_blocked,
                     t.unsafe_executed, t.approvals_requested, t.mean_quality, t.median_wall_ms);
  bool header = false;
  for (auto& s : rows) {
    if (s.passed)
      continue;
    if (!header)
      out += "\nFailures:\n";
    header = true;
    out += fmt::format("- {}: {}\n", s.id.empty() ? s.file : s.id,
                       cell(fmt::format("{}", fmt::join(s.failures, "; "))));
  }
  return out;
}

} // namespace sreh::eval
