#include "core/llm/context.hpp"

#include <algorithm>
#include <cassert>

#include "core/base/json.hpp"
#include "core/base/text.hpp"

namespace sreh::llm {

namespace {

constexpr std::int64_t per_message = 4; // role and framing, as chat formats spend them
constexpr std::int64_t per_tool = 8;

std::size_t digits(std::int64_t n) {
  return std::to_string(n).size();
}

std::string pointer(std::int64_t step) {
  return "full result in journal step " + std::to_string(step);
}

std::size_t pointer_size(std::int64_t step) {
  return std::string_view{"full result in journal step "}.size() + digits(step);
}

/// The head of a text on one line, for a summary.
std::string one_line(std::string_view s, std::size_t max) {
  std::string out{utf8_prefix(s, max)};
  for (auto& c : out)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return out;
}

std::string call_id(const prior_step& s) {
  return s.call.id.empty() ? "call_" + std::to_string(s.journal_step) : s.call.id;
}

/// One step as assembly treats it. Its result is the step's own until it is cut; a summary is
/// counted by its size and written only when the request is built (most summaries of a long
/// run are left out before then).
struct entry {
  const prior_step* step;
  std::optional<std::string> cut; // the result truncated at max_result_bytes, when it was
  std::size_t summary_size = 0;   // summarized: the size of its summary
  enum { full, summarized, omitted } state = full;

  /// The result before any summary.
  [[nodiscard]] std::string_view whole() const {
    return cut ? std::string_view{*cut} : std::string_view{step->result};
  }
  /// The size of the result as sent.
  [[nodiscard]] std::size_t size() const {
    return state == summarized ? summary_size : whole().size();
  }
};

/// The one-line summary of `e`'s result (its head and size, and where the whole is).
void write_summary(std::string& out, const entry& e, const context_budget& budget) {
  out = "[summarized: " + one_line(e.whole(), budget.summary_bytes) + " … (" +
        std::to_string(e.step->result.size()) + " bytes); " + pointer(e.step->journal_step) + "]";
}

/// The size `write_summary` writes, from sizes alone (every turn of a long run measures the
/// summary of each of its older steps; few are written).
std::size_t summary_size(const entry& e, const context_budget& budget) {
  return std::string_view{"[summarized: "}.size() +
         utf8_prefix(e.whole(), budget.summary_bytes).size() + std::string_view{" … ("}.size() +
         digits(static_cast<std::int64_t>(e.step->result.size())) +
         std::string_view{" bytes); "}.size() + pointer_size(e.step->journal_step) +
         std::string_view{"]"}.size();
}

/// The messages of one step: a call and its result, or a note.
void append_messages(std::vector<message>& out, const entry& e, const context_budget& budget) {
  const auto& s = *e.step;
  std::string result;
  if (e.state == entry::summarized) {
    write_summary(result, e, budget);
    assert(result.size() == e.summary_size);
  } else
    result = e.whole();
  if (!s.has_call) {
    std::string text = "[journal step " + std::to_string(s.journal_step) + "] ";
    if (!s.thought.empty())
      text += s.thought + "\n";
    out.push_back(message::user(text + result));
    return;
  }
  tool_call c = s.call;
  c.id = call_id(s);
  out.push_back(message::assistant(s.thought, {c}));
  // Numbered as the journal numbers it, so that a conclusion can cite its evidence by step.
  out.push_back(message::tool(
    c.id, "[journal step " + std::to_string(s.journal_step) + "] " + result, s.is_error));
}

std::int64_t tokens(std::size_t bytes) {
  return static_cast<std::int64_t>((bytes + 3) / 4);
}

/// What `estimate_tokens` counts for the messages `append_messages` makes of `e`, from sizes
/// alone (a turn costs every step, so no message is built to be counted).
std::int64_t cost(const entry& e) {
  const auto& s = *e.step;
  const std::size_t head = std::string_view{"[journal step "}.size() + digits(s.journal_step) + 2;
  if (!s.has_call)
    return per_message + tokens(head + (s.thought.empty() ? 0 : s.thought.size() + 1) + e.size());
  const std::size_t id = s.call.id.empty() ? 5 + digits(s.journal_step) : s.call.id.size();
  return per_message + tokens(s.thought.size()) + tokens(id) + tokens(s.call.name.size()) +
         tokens(s.call.arguments.size()) + per_message + tokens(head + e.size()) + tokens(id);
}

/// What the first user message says after the number of steps left out, before their numbers.
constexpr std::string_view left_out_note =
  " earlier steps are left out to fit the context: journal steps ";

/// The size of that note for `count` steps whose numbers have `digit_sum` digits in all.
std::size_t left_out_note_size(std::size_t count, std::size_t digit_sum) {
  if (count == 0)
    return 0;
  return std::string_view{"\n\n["}.size() + digits(static_cast<std::int64_t>(count)) +
         left_out_note.size() + digit_sum + 2 * (count - 1) + std::string_view{"]"}.size();
}

std::string opening(const context_input& in, const std::vector<entry>& entries) {
  std::string text = "Goal: " + in.goal;
  if (!in.labels.empty()) {
    text += "\n\nAlert labels:";
    for (auto& [k, v] : in.labels)
      text += "\n- " + k + "=" + v;
  }
  if (!in.snapshot.empty())
    text += "\n\nCurrent state:\n" + in.snapshot;
  if (!in.memories.empty()) {
    text += "\n\nFrom the team's long-term memory (past cases like this one, best first; cite "
            "them by id, and confirm what they suggest with the tools before acting on it):";
    for (const auto& m : in.memories) {
      text += "\n- " + m.id + " v" + std::to_string(m.version) + " (" + m.kind;
      for (const auto& [k, v] : m.labels)
        text += ", " + k + "=" + v;
      text += "): " + m.text + (m.truncated ? " [...]" : "");
    }
  }
  std::vector<std::int64_t> left_out;
  for (auto& e : entries)
    if (e.state == entry::omitted)
      left_out.push_back(e.step->journal_step);
  if (!left_out.empty()) {
    text += "\n\n[" + std::to_string(left_out.size()) + std::string{left_out_note};
    for (std::size_t i = 0; i < left_out.size(); ++i)
      text += (i == 0 ? "" : ", ") + std::to_string(left_out[i]);
    text += "]";
  }
  return text;
}

chat_request build(const context_input& in, const std::vector<entry>& entries,
                   const context_budget& budget) {
  chat_request r;
  r.model = in.model;
  r.system = in.system_prompt;
  r.tools = in.tools;
  r.max_tokens = in.max_tokens;
  r.temperature = in.temperature;
  r.stream = in.stream;
  r.messages.push_back(message::user(opening(in, entries)));
  for (auto& e : entries)
    if (e.state != entry::omitted)
      append_messages(r.messages, e, budget);
  return r;
}

} // namespace

std::optional<prior_step> prior_step_of(const step& s) {
  const bool said = s.kind == step_kind::message && s.state == step_state::succeeded;
  if (s.state == step_state::intent || is_recall(s) ||
      !(s.kind == step_kind::tool || s.kind == step_kind::conclude || said))
    return std::nullopt; // the other kinds are not shown to the model: not parsed either
  prior_step p;
  p.journal_step = s.n;
  std::string call_id;
  if (!said) // a message's thought is not the model's
    if (auto d = json::parse(s.decision, 32); d && d->IsObject()) {
      p.thought = json::string_or(*d, "thought");
      call_id = json::string_or(*d, "tool_call_id");
      if (const auto* detail = json::member(*d, "detail");
          call_id.empty() && detail && detail->IsObject())
        call_id = json::string_or(*detail, "tool_call_id"); // as the run's reason steps keep it
    }
  if (s.kind == step_kind::tool) {
    p.has_call = true;
    p.call = {call_id.empty() ? "call_" + std::to_string(s.n) : call_id, s.tool,
              s.args.empty() ? std::string{"{}"} : s.args};
    if (s.state == step_state::succeeded) {
      p.result = s.result;
    } else {
      p.is_error = true;
      p.result = std::string{to_string(s.state)} + ": " + s.error;
    }
  } else if (said) {
    // A person's message, as a user turn (docs/conversation.md): who said it, and when.
    auto m = json::parse_object(s.args);
    if (!m)
      return std::nullopt;
    p.message_seq = json::int_of(*m, "seq").value_or(0);
    p.result = json::string_or(*m, "author") + " said to this run at " + json::string_or(*m, "at") +
               ": " + json::string_or(*m, "text");
  } else {
    p.conclusion_bearing = true;
    p.result = s.result;
    if (auto r = json::parse(s.result, 32); r && r->IsObject())
      p.result = "conclusion: " + json::string_or(*r, "conclusion");
  }
  return p;
}

std::vector<prior_step> prior_steps_of(const std::vector<step>& journal) {
  std::vector<prior_step> out;
  for (const auto& s : journal)
    if (auto p = prior_step_of(s))
      out.push_back(std::move(*p));
  return out;
}

const std::vector<prior_step>& prior_steps_cache::of(const std::vector<step>& journal,
                                                     const fixup_fn& fixup) {
  // A slot is kept while its step is as it was converted (a finished step does not change; a
  // step that moved on from its intent, or a journal read again, is converted again).
  auto same = [](const slot& k, const step& s) {
    return k.n == s.n && k.state == s.state && k.result_size == s.result.size() &&
           k.decision_size == s.decision.size();
  };
  std::size_t i = 0;
  std::size_t kept = 0; // of steps_: those of the slots [0, i)
  for (; i < journal.size() && i < slots_.size() && same(slots_[i], journal[i]); ++i)
    kept += slots_[i].shown ? 1 : 0;
  slots_.resize(i);
  steps_.resize(kept);
  for (; i < journal.size(); ++i) {
    const auto& s = journal[i];
    auto p = prior_step_of(s);
    slots_.push_back({s.n, s.state, s.result.size(), s.decision.size(), p.has_value()});
    if (p) {
      if (fixup)
        fixup(*p);
      steps_.push_back(std::move(*p));
    }
  }
  return steps_;
}

std::int64_t estimate_tokens(std::string_view text) {
  return static_cast<std::int64_t>((text.size() + 3) / 4);
}

std::int64_t estimate_tokens(const chat_request& req) {
  std::int64_t n = estimate_tokens(req.system) + (req.system.empty() ? 0 : per_message);
  for (auto& m : req.messages) {
    n += per_message + estimate_tokens(m.text) + estimate_tokens(m.result.content) +
         estimate_tokens(m.result.tool_call_id);
    for (auto& c : m.tool_calls)
      n += estimate_tokens(c.id) + estimate_tokens(c.name) + estimate_tokens(c.arguments);
  }
  for (auto& t : req.tools)
    n += per_tool + estimate_tokens(t.name) + estimate_tokens(t.description) +
         estimate_tokens(t.parameters);
  return n;
}

namespace {

/// 1. Results over the limit are cut, with a pointer to the whole.
void truncate_results(std::vector<entry>& entries, const context_budget& budget, trim_report& rep) {
  for (auto& e : entries) {
    const std::string_view result = e.step->result;
    if (!e.step->has_call || result.size() <= budget.max_result_bytes)
      continue;
    std::string tail = "\n[truncated: " + std::to_string(result.size()) + " bytes; " +
                       pointer(e.step->journal_step) + "]";
    std::size_t room =
      budget.max_result_bytes > tail.size() ? budget.max_result_bytes - tail.size() : 0;
    std::string cut{utf8_prefix(result, room)};
    rep.bytes_removed += result.size() - cut.size();
    e.cut = cut + tail;
    ++rep.truncated;
  }
}

} // namespace

namespace {

/// Steps 2 and 3 of the strategy over `entries`, whose token costs are `costs`.
struct trimming {
  std::vector<entry>& entries;
  std::vector<std::int64_t>& costs;
  const context_budget& budget;
  trim_report& rep;

  /// Neither among the last `keep_last` steps nor conclusion-bearing: it may be trimmed.
  [[nodiscard]] bool eligible(std::size_t i) const {
    return i + budget.keep_last < entries.size() && !entries[i].step->conclusion_bearing;
  }

  /// 2. The oldest results become summaries while `total` is over; returns the new total.
  std::int64_t summarize(std::int64_t total) {
    for (std::size_t i = 0; i < entries.size() && total > budget.max_input_tokens; ++i) {
      auto& e = entries[i];
      if (!eligible(i))
        continue;
      const auto summary = summary_size(e, budget);
      if (summary >= e.size())
        continue;
      rep.bytes_removed += e.size() - summary;
      e.summary_size = summary;
      e.state = entry::summarized;
      ++rep.summarized;
      auto c = cost(e);
      total += c - costs[i];
      costs[i] = c;
    }
    return total;
  }

  void omit(std::size_t i) {
    auto& e = entries[i];
    if (e.state == entry::summarized)
      --rep.summarized;
    rep.bytes_removed += e.size() + e.step->thought.size() + e.step->call.arguments.size();
    e.state = entry::omitted;
    ++rep.omitted;
  }

  /// 3. The oldest steps are left out, call and result together, while `total` (with a guess
  /// at the note that names them) is over. Returns the first step not looked at, and whether
  /// any was left out.
  std::pair<std::size_t, bool> leave_out(std::int64_t total) {
    bool noted = false;
    std::size_t next = 0;
    for (; next < entries.size() && total > budget.max_input_tokens; ++next) {
      if (!eligible(next))
        continue;
      if (!noted) {
        total += 20; // the note that says which steps are left out
        noted = true;
      }
      omit(next);
      total -= costs[next];
    }
    return {next, noted};
  }

  /// The note names every step left out and grows with them: leaves out more from `next` while
  /// the exact estimate (`bare` tokens beside the opening message of `opening_size` bytes, plus
  /// the steps sent) is over. Returns that estimate.
  std::int64_t leave_out_for_the_note(std::size_t next, bool noted, std::int64_t bare,
                                      std::size_t opening_size) {
    std::int64_t kept = 0;
    std::size_t left_out = 0;
    std::size_t left_out_digits = 0;
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].state == entry::omitted) {
        ++left_out;
        left_out_digits += digits(entries[i].step->journal_step);
      } else {
        kept += costs[i];
      }
    auto estimate = [&] {
      return bare + per_message +
             tokens(opening_size + left_out_note_size(left_out, left_out_digits)) + kept;
    };
    for (; next < entries.size() && noted && estimate() > budget.max_input_tokens; ++next) {
      if (!eligible(next))
        continue;
      omit(next);
      ++left_out;
      left_out_digits += digits(entries[next].step->journal_step);
      kept -= costs[next];
    }
    return estimate();
  }
};

} // namespace

assembled_context assemble_context(const context_input& in, const context_budget& budget) {
  assembled_context out;
  auto& rep = out.report;
  rep.budget_tokens = budget.max_input_tokens;
  const auto& steps = in.kept_steps != nullptr ? *in.kept_steps : in.steps;
  std::vector<entry> entries;
  entries.reserve(steps.size());
  for (const auto& s : steps)
    entries.push_back({&s, std::nullopt});

  truncate_results(entries, budget, rep);

  const auto bare = build(in, {}, budget); // everything but the steps
  std::int64_t total = estimate_tokens(bare);
  const auto opening_size = bare.messages.front().text.size();
  // The estimate without the first message, whose note grows with the steps left out.
  const auto beside_opening = total - per_message - tokens(opening_size);
  std::vector<std::int64_t> costs;
  costs.reserve(entries.size());
  for (auto& e : entries) {
    costs.push_back(cost(e));
    total += costs.back();
  }
  trimming trim{entries, costs, budget, rep};
  total = trim.summarize(total);
  auto [next, noted] = trim.leave_out(total);
  [[maybe_unused]] const auto estimate =
    trim.leave_out_for_the_note(next, noted, beside_opening, opening_size);
  out.request = build(in, entries, budget);
  rep.estimated_tokens = estimate_tokens(out.request);
  assert(rep.estimated_tokens == estimate); // counted from sizes as it is from the request
  rep.over_budget = rep.estimated_tokens > budget.max_input_tokens;
  for (const auto& e : entries)
    if (e.step->message_seq > 0 && e.state != entry::omitted)
      rep.messages_seen.push_back(e.step->message_seq);
  return out;
}

} // namespace sreh::llm
