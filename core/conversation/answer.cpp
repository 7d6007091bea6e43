#include "core/conversation/answer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/base/text.hpp"
#include "core/conversation/steering.hpp"

namespace sreh::conversation {

namespace {

bool has_any(std::string_view text, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return text.find(w) != std::string_view::npos; });
}

/// What an answer says and cites, as it is built.
struct writer {
  const std::vector<step>& steps;
  answer out;

  bool exists(std::int64_t n) const {
    return std::any_of(steps.begin(), steps.end(), [n](const step& s) { return s.n == n; });
  }
  void cite(std::int64_t n) {
    if (n > 0 && exists(n) && std::find(out.cited.begin(), out.cited.end(), n) == out.cited.end())
      out.cited.push_back(n);
  }
  /// Cites every "step N" that `text` names (a document line names its steps so).
  void cite_in(std::string_view text) {
    for (auto n : cited_in(text))
      cite(n);
  }
  void line(const std::string& s) {
    if (!out.text.empty())
      out.text += "\n";
    out.text += s;
    cite_in(s);
  }
};

/// "step 3", "steps 3, 4": each number after "step" or "steps" and the commas and "and"s after it.
void numbers_after(std::string_view text, std::size_t i, std::vector<std::int64_t>& out) {
  for (;;) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ','))
      ++i;
    if (text.substr(i).starts_with("and "))
      i += 4;
    std::int64_t n = 0;
    std::size_t start = i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0 &&
           i - start < 12;
         ++i)
      n = n * 10 + (text[i] - '0');
    if (i == start)
      return;
    if (std::find(out.begin(), out.end(), n) == out.end())
      out.push_back(n);
  }
}

std::string steps_list(const std::vector<std::int64_t>& ns) {
  std::string out;
  for (auto n : ns)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
  return out;
}

/// Whether the document is of an ended run (its outcome is the run's state).
bool ended(const postmortem::document& d) {
  return d.outcome == "succeeded" || d.outcome == "failed" || d.outcome == "cancelled";
}

/// Where the run is: ended with its outcome, or still working, and its last step.
void status(writer& w, const postmortem::document& d) {
  const postmortem::event* last = nullptr;
  for (const auto& e : d.timeline)
    if (e.step > 0)
      last = &e;
  if (ended(d))
    w.line(fmt::format("The run ended ({}): {}", d.outcome,
                       d.summary.empty() ? "no conclusion was written." : d.summary));
  else if (auto p = pause_of(w.steps))
    w.line(fmt::format("The run is paused: {} said \"{}\" at step {}, and it decides nothing "
                       "until someone says \"resume\".",
                       p->author, utf8_prefix(p->said, 200), p->step));
  else
    w.line("The run is still working.");
  if (last != nullptr)
    w.line(fmt::format("Its last step is step {}: {}", last->step, last->what));
}

/// The causes, the one the question names first, each with its evidence by step.
void why(writer& w, const postmortem::document& d, std::string_view q) {
  if (d.causes.empty()) {
    w.line(ended(d) ? "The run concluded no cause." : "No cause is concluded yet.");
    return status(w, d);
  }
  std::vector<const postmortem::cause*> order;
  for (const auto& c : d.causes)
    if ((!c.target.empty() && q.find(ascii_lower(c.target)) != std::string_view::npos) ||
        (!c.kind.empty() && q.find(ascii_lower(c.kind)) != std::string_view::npos))
      order.push_back(&c);
  if (order.empty())
    for (const auto& e : d.affected)
      if (!e.empty() && q.find(ascii_lower(e)) != std::string_view::npos)
        w.line(fmt::format("I did not conclude a cause on {}.", e));
  for (const auto& c : d.causes)
    if (std::find(order.begin(), order.end(), &c) == order.end())
      order.push_back(&c);
  for (const auto* c : order) {
    auto name = c->kind.empty() ? c->target : c->kind + " on " + c->target;
    if (c->evidence_steps.empty()) {
      w.line(fmt::format("{}: the conclusion says so, but cites no step.", name));
      continue;
    }
    w.line(fmt::format("{} (confidence {:.2f}), on the evidence of step{} {}:", name, c->confidence,
                       c->evidence_steps.size() == 1 ? "" : "s", steps_list(c->evidence_steps)));
    for (const auto& e : c->evidence)
      w.line("- " + e);
  }
}

void alternatives(writer& w, const postmortem::document& d) {
  std::size_t said = 0;
  for (const auto& x : d.did_not_work)
    if (x.starts_with("ruled out") || x.starts_with("memory ")) {
      w.line("- " + x);
      ++said;
    }
  if (said == 0)
    w.line(d.causes.empty() ? "Nothing was ruled out by evidence yet."
                            : "No other explanation was considered and ruled out.");
  else
    w.out.text.insert(0, "What was considered and ruled out:\n");
  if (d.causes.size() > 1)
    w.line(fmt::format("{} causes were concluded together; ask \"why\" for their evidence.",
                       d.causes.size()));
}

void actions(writer& w, const postmortem::document& d) {
  if (d.actions.empty())
    w.line("No action was taken.");
  for (const auto& a : d.actions) {
    std::string how = a.approved_by.empty() ? "allowed by policy" : "approved by " + a.approved_by;
    std::string check = a.check.empty() ? "" : (a.verified ? "; verified: " : "; not verified: ");
    w.line(fmt::format("- step {}: {} {} — {}, {}{}{}", a.step, a.tool, a.args, a.state, how, check,
                       a.check));
  }
  for (const auto& x : d.did_not_work)
    if (x.starts_with("denied: "))
      w.line("- " + x);
}

void unexplained(writer& w, const postmortem::document& d) {
  std::size_t said = 0;
  for (const auto& e : d.affected) {
    // The alerted service's symptoms are what the causes explain, when there are any.
    bool explained = (!d.causes.empty() && ascii_iequal(e, d.service)) ||
                     std::any_of(d.causes.begin(), d.causes.end(),
                                 [&](const auto& c) { return ascii_iequal(c.target, e); });
    if (!explained && !e.empty()) {
      w.line(fmt::format("- {} is affected, and no concluded cause is on it.", e));
      ++said;
    }
  }
  for (const auto& x : d.did_not_work)
    if (x.find("did not have the effect") != std::string::npos ||
        x.find("failed") != std::string::npos) {
      w.line("- " + x);
      ++said;
    }
  if (d.causes.empty()) {
    w.line("- The cause itself: none is concluded.");
    ++said;
  }
  if (said == 0)
    w.line("Nothing: every affected entity has a concluded cause, and every action held.");
}

} // namespace

std::vector<std::int64_t> cited_in(std::string_view text) {
  std::vector<std::int64_t> out;
  for (auto at = text.find("step"); at != std::string_view::npos; at = text.find("step", at + 4)) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1])) != 0)
      continue;
    auto i = at + 4;
    if (i < text.size() && text[i] == 's')
      ++i;
    if (i < text.size() && text[i] == ' ')
      numbers_after(text, i, out);
  }
  return out;
}

std::string reply_json(std::int64_t question_seq, std::string_view text, std::int64_t last_step) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("in_reply_to");
  w.Int64(question_seq);
  w.Key("cites");
  w.StartArray();
  for (auto n : cited_in(text))
    if (n <= last_step)
      w.Int64(n);
  w.EndArray();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::string model_question(const message& q) {
  char at[32];
  return fmt::format("{} asks about this run at {}: {}\n\nAnswer this question in plain text "
                     "from the run's steps above; do not call a tool. Cite each step your "
                     "answer rests on as \"step N\" (the [journal step N] marks), and only "
                     "steps that are there; say so when the steps do not tell.",
                     q.author, format_rfc3339(q.at, at), q.text);
}

std::string checked_model_answer(std::string_view text, std::int64_t last_step) {
  std::string out{text};
  std::vector<std::int64_t> missing;
  for (auto n : cited_in(text))
    if (n > last_step)
      missing.push_back(n);
  if (!missing.empty())
    out += fmt::format("\n\n(Not in the journal, which has {} steps: step {}.)", last_step,
                       fmt::join(missing, ", step "));
  return out;
}

const char* to_string(topic t) {
  switch (t) {
  case topic::why:
    return "why";
  case topic::alternatives:
    return "alternatives";
  case topic::actions:
    return "actions";
  case topic::unexplained:
    return "unexplained";
  case topic::status:
    return "status";
  }
  return "status";
}

topic topic_of(std::string_view question) {
  const auto q = ascii_lower(question);
  if (has_any(q, {"what else", "rule out", "ruled out", "alternative", "other cause",
                  "could it have been", "could it be", "why not", "instead"}))
    return topic::alternatives;
  if (has_any(q, {"what did you do", "what have you done", "what was done", "approv", "action",
                  "did you change", "roll back", "rolled back", "restart"}))
    return topic::actions;
  if (has_any(q, {"unexplained", "left open", "still open", "is left", "remain", "not explain"}))
    return topic::unexplained;
  if (has_any(q,
              {"why", "cause", "root", "evidence", "how do you know", "think", "sure", "reason"}))
    return topic::why;
  return topic::status;
}

answer answer_from(std::string_view question, const postmortem::document& d,
                   const std::vector<step>& steps) {
  writer w{steps, {}};
  w.out.about = topic_of(question);
  const auto q = ascii_lower(question);
  switch (w.out.about) {
  case topic::why:
    why(w, d, q);
    break;
  case topic::alternatives:
    alternatives(w, d);
    break;
  case topic::actions:
    actions(w, d);
    break;
  case topic::unexplained:
    unexplained(w, d);
    break;
  case topic::status:
    status(w, d);
    break;
  }
  return std::move(w.out);
}

} // namespace sreh::conversation
