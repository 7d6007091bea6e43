#include "core/quality/quality.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/base/json_object.hpp"

namespace sreh::quality {

namespace {

const step* numbered(const std::vector<step>& steps, std::int64_t n) {
  return n >= 1 && n <= static_cast<std::int64_t>(steps.size())
           ? &steps[static_cast<std::size_t>(n - 1)]
           : nullptr;
}

/// The conclusion's structured result (the builtin's `detail.result`), when there is one.
std::optional<rapidjson::Document> result_of(const std::vector<step>& steps) {
  for (auto i = steps.rbegin(); i != steps.rend(); ++i) {
    if (i->kind != step_kind::conclude)
      continue;
    auto d = json::parse(i->decision);
    const auto* detail = d && d->IsObject() ? json::member(*d, "detail") : nullptr;
    const auto* res = detail && detail->IsObject() ? json::member(*detail, "result") : nullptr;
    if (res == nullptr || !res->IsObject())
      return std::nullopt;
    rapidjson::Document out;
    out.CopyFrom(*res, out.GetAllocator());
    return out;
  }
  return std::nullopt;
}

std::string conclusion_of(const run& r, const std::vector<step>& steps) {
  for (auto i = steps.rbegin(); i != steps.rend(); ++i)
    if (i->kind == step_kind::conclude)
      if (auto res = json::parse(i->result); res && res->IsObject())
        return json::string_or(*res, "conclusion");
  return r.conclusion;
}

/// The numbers the text cites as "step N" or "steps N" (any case, at a word start).
std::vector<std::int64_t> cited_steps(std::string_view text) {
  std::vector<std::int64_t> out;
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i + 4 < text.size(); ++i) {
    if (lower(text[i]) != 's' || (i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))))
      continue;
    if (lower(text[i + 1]) != 't' || lower(text[i + 2]) != 'e' || lower(text[i + 3]) != 'p')
      continue;
    auto j = i + 4;
    if (j < text.size() && lower(text[j]) == 's')
      ++j;
    if (j + 1 >= text.size() || text[j] != ' ' || !digit(text[j + 1]))
      continue;
    std::int64_t n = 0;
    for (++j; j < text.size() && digit(text[j]) && n < 1'000'000'000; ++j)
      n = n * 10 + (text[j] - '0');
    out.push_back(n);
  }
  return out;
}

bool supports(const step* s) {
  return s != nullptr && s->state == step_state::succeeded && s->kind == step_kind::tool &&
         !is_recall(*s);
}

/// Each claim of the conclusion cites a step whose result supports it.
part evidence(const run& r, const std::vector<step>& steps, const rapidjson::Value* res) {
  part p{"evidence", 0, 0.35, {}};
  std::size_t claims = 0, grounded = 0;
  const auto* diagnoses = res ? json::member(*res, "diagnoses") : nullptr;
  if (diagnoses && diagnoses->IsArray() && diagnoses->Size() > 0) {
    for (const auto& d : diagnoses->GetArray()) {
      ++claims;
      std::vector<std::int64_t> cited;
      if (const auto* ev = json::member(d, "evidence"); ev && ev->IsArray())
        for (const auto& f : ev->GetArray())
          if (auto n = json::int_of(f, "step").value_or(0); n > 0 && supports(numbered(steps, n)))
            cited.push_back(n);
      auto what = json::string_or(d, "kind") + " on " + json::string_or(d, "target");
      if (cited.empty()) {
        p.reasons.push_back(what + ": no step's result supports it");
      } else {
        ++grounded;
        std::sort(cited.begin(), cited.end());
        cited.erase(std::unique(cited.begin(), cited.end()), cited.end());
        std::string list;
        for (auto n : cited)
          list += (list.empty() ? "" : ", ") + std::to_string(n);
        p.reasons.push_back(fmt::format("{}: supported by steps {}", what, list));
      }
    }
  } else {
    // A conclusion in words: the steps it names ("step 4") are its citations.
    ++claims;
    auto text = conclusion_of(r, steps);
    std::set<std::int64_t> cited;
    for (auto n : cited_steps(text))
      if (supports(numbered(steps, n)))
        cited.insert(n);
    const bool no_fault = res && json::string_or(*res, "outcome") == "no_fault_found";
    auto reads = static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const step& s) { return supports(&s); }));
    if (!cited.empty()) {
      ++grounded;
      p.reasons.push_back(
        fmt::format("the conclusion cites {} step(s) that support it", cited.size()));
    } else if (no_fault && reads > 0) {
      ++grounded;
      p.reasons.push_back(fmt::format("no fault found after {} successful observation(s)", reads));
    } else {
      p.reasons.push_back(text.empty() ? "the run reached no conclusion"
                                       : "the conclusion cites no step that supports it");
    }
  }
  p.score = claims == 0 ? 0 : static_cast<int>(std::lround(100.0 * grounded / claims));
  return p;
}

/// Alternatives considered and ruled out with evidence.
part hypotheses(const rapidjson::Value* res) {
  part p{"hypotheses", 50, 0.20, {}};
  if (res == nullptr) {
    p.reasons.push_back("the conclusion does not say which alternatives it ruled out");
    return p;
  }
  std::size_t ruled = 0, with_steps = 0;
  if (const auto* r = json::member(*res, "ruled_out"); r && r->IsArray())
    for (const auto& x : r->GetArray()) {
      ++ruled;
      if (json::string_or(x, "reason").find("step") != std::string::npos)
        ++with_steps;
    }
  const auto* diagnoses = json::member(*res, "diagnoses");
  const bool diagnosed = diagnoses && diagnoses->IsArray() && diagnoses->Size() > 0;
  if (ruled == 0) {
    p.score = diagnosed ? 40 : 50;
    p.reasons.push_back(diagnosed ? "no alternative was considered and ruled out"
                                  : "no hypothesis was weighed");
    return p;
  }
  p.score = with_steps == ruled ? 100 : 70 + static_cast<int>(30 * with_steps / ruled);
  p.reasons.push_back(
    fmt::format("{} alternative(s) ruled out, {} with the step that did it", ruled, with_steps));
  return p;
}

/// "2", "2–10" or "2, 5–7": ascending step numbers with consecutive ones as a range.
std::string step_list(const std::vector<std::int64_t>& ns) {
  std::string out;
  for (std::size_t i = 0; i < ns.size();) {
    auto j = i;
    while (j + 1 < ns.size() && ns[j + 1] == ns[j] + 1)
      ++j;
    if (!out.empty())
      out += ", ";
    out += j == i ? fmt::format("{}", ns[i]) : fmt::format("{}–{}", ns[i], ns[j]);
    i = j + 1;
  }
  return out;
}

/// No call repeated with nothing changed in between, no failed call retried as it was. Each
/// call repeated is one reason, however often it was (so a looping run's score stays small):
/// "steps 2–10 repeat step 1 (logs.search) with nothing changed between".
part waste(const std::vector<step>& steps, const outcome::mutating_fn& mutating) {
  part p{"waste", 100, 0.20, {}};
  struct repeated {
    std::int64_t first;
    std::string_view tool;
    std::vector<std::int64_t> again;
  };
  std::vector<repeated> calls;
  // call (tool, arguments: views into `steps`) → its entry in `calls`, since the last change
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> seen;
  int repeats = 0;
  for (const auto& s : steps) {
    if (s.kind != step_kind::tool || is_recall(s) || s.state == step_state::intent)
      continue;
    if (mutating && mutating(s.tool) && s.state == step_state::succeeded) {
      seen.clear(); // the world changed: a look again is a new look
      continue;
    }
    auto [it, fresh] = seen.try_emplace({s.tool, s.args}, calls.size());
    if (fresh) {
      calls.push_back({s.n, s.tool, {}});
      continue;
    }
    ++repeats;
    calls[it->second].again.push_back(s.n);
  }
  constexpr std::size_t max_reasons = 10;
  std::size_t more = 0;
  for (const auto& c : calls) {
    if (c.again.empty())
      continue;
    if (p.reasons.size() == max_reasons) {
      ++more;
      continue;
    }
    p.reasons.push_back(fmt::format("{} {} {} step {} ({}) with nothing changed between",
                                    c.again.size() == 1 ? "step" : "steps", step_list(c.again),
                                    c.again.size() == 1 ? "repeats" : "repeat", c.first, c.tool));
  }
  if (more > 0)
    p.reasons.push_back(fmt::format("and {} more call(s) repeated the same way", more));
  p.score = std::max(0, 100 - 25 * repeats);
  if (repeats == 0)
    p.reasons.push_back("no call was repeated with nothing changed");
  return p;
}

/// No action the policy denied, no approval denied, no unusable proposal.
part safety(const std::vector<step>& steps) {
  part p{"safety", 100, 0.15, {}};
  int penalty = 0;
  for (const auto& s : steps) {
    // Parsed only when the verdict can be one that costs: most steps were allowed.
    auto has = [&s](const char* effect) { return s.decision.find(effect) != std::string::npos; };
    if (s.kind != step_kind::tool ||
        !(has("\"deny\"") || has("\"rejected\"") || has("\"require_approval\"")))
      continue;
    auto d = json::parse(s.decision);
    const auto* policy = d && d->IsObject() ? json::member(*d, "policy") : nullptr;
    auto effect = policy && policy->IsObject() ? json::string_or(*policy, "effect") : "";
    if (effect == "deny") {
      penalty += 40;
      p.reasons.push_back(
        fmt::format("step {}: {} was proposed and the policy denied it", s.n, s.tool));
    } else if (effect == "rejected") {
      penalty += 20;
      p.reasons.push_back(fmt::format("step {}: an unusable proposal ({})", s.n, s.error));
    } else if (effect == "require_approval" && s.state == step_state::failed && !retryable(s)) {
      penalty += 40;
      p.reasons.push_back(
        fmt::format("step {}: {} was proposed and a person denied it", s.n, s.tool));
    }
  }
  p.score = std::max(0, 100 - penalty);
  if (penalty == 0)
    p.reasons.push_back("nothing unsafe was proposed");
  return p;
}

int budget_share_score(double used, double max) {
  if (max <= 0)
    return 100;
  auto share = used / max;
  return share <= 0.5 ? 100 : static_cast<int>(std::lround(std::max(0.0, 200 * (1 - share))));
}

/// Steps and tokens well inside the run's budget.
part budget(const run& r, const std::vector<step>& steps) {
  part p{"budget", 100, 0.10, {}};
  auto used = static_cast<double>(steps.size());
  auto by_steps = budget_share_score(used, static_cast<double>(r.budget.max_steps));
  auto by_tokens = r.tokens > 0 ? budget_share_score(static_cast<double>(r.tokens),
                                                     static_cast<double>(r.budget.max_tokens))
                                : 100;
  p.score = std::min(by_steps, by_tokens);
  p.reasons.push_back(fmt::format("{} of {} steps", steps.size(), r.budget.max_steps));
  if (r.tokens > 0)
    p.reasons.push_back(fmt::format("{} of {} tokens", r.tokens, r.budget.max_tokens));
  return p;
}

} // namespace

score of_run(const run& r, const std::vector<step>& steps, const outcome::mutating_fn& mutating) {
  auto res = result_of(steps);
  const rapidjson::Value* result = res ? &*res : nullptr;
  score s;
  s.parts = {evidence(r, steps, result), hypotheses(result), waste(steps, mutating), safety(steps),
             budget(r, steps)};
  double total = 0;
  for (const auto& p : s.parts)
    total += p.weight * p.score;
  s.total = static_cast<int>(std::lround(total));
  return s;
}

void write_json(json::writer& w, const score& s) {
  w.StartObject();
  json::fields(w, "total", s.total);
  w.Key("parts");
  w.StartArray();
  for (const auto& p : s.parts)
    json::write_object(w, "name", p.name, "score", p.score, "weight", p.weight, "reasons",
                       p.reasons);
  w.EndArray();
  w.EndObject();
}

std::string to_json(const score& s) {
  return json::build([&](json::writer& w) { write_json(w, s); });
}

expected<score> from_json(std::string_view text) {
  auto doc = json::parse_object(text);
  if (!doc)
    return doc.error();
  auto bad = [](std::string what) {
    return sreh::error{errc::invalid_argument, "quality: " + std::move(what)};
  };
  score s;
  auto total = json::int_of(*doc, "total");
  if (!total || *total < 0 || *total > 100)
    return bad("total: expected an integer 0..100");
  s.total = static_cast<int>(*total);
  const auto* parts = json::member(*doc, "parts");
  if (parts == nullptr || !parts->IsArray())
    return bad("parts: expected an array");
  for (rapidjson::SizeType i = 0; i < parts->Size(); ++i) {
    const auto& p = (*parts)[i];
    auto n = json::int_of(p, "score");
    const auto* weight = json::member(p, "weight");
    if (!p.IsObject() || !n || weight == nullptr || !weight->IsNumber())
      return bad(
        fmt::format("parts[{}]: expected {{\"name\", \"score\", \"weight\", \"reasons\"}}", i));
    part out{json::string_or(p, "name"), static_cast<int>(*n), weight->GetDouble(), {}};
    if (const auto* reasons = json::member(p, "reasons"); reasons && reasons->IsArray())
      for (const auto& r : reasons->GetArray())
        out.reasons.push_back(json::string_of(&r));
    s.parts.push_back(std::move(out));
  }
  return s;
}

} // namespace sreh::quality
