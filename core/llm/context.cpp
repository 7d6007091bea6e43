#include "core/llm/context.hpp"

#include <algorithm>

#include "core/base/json.hpp"
#include "core/base/text.hpp"

namespace sreh::llm {

namespace {

constexpr std::int64_t per_message = 4; // role and framing, as chat formats spend them
constexpr std::int64_t per_tool = 8;

std::string pointer(std::int64_t step) {
  return "full result in journal step " + std::to_string(step);
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

struct entry {
  const prior_step* step;
  std::string result;
  enum { full, summarized, omitted } state = full;
};

/// The messages of one step: a call and its result, or a note.
void append_messages(std::vector<message>& out, const entry& e) {
  const auto& s = *e.step;
  if (!s.has_call) {
    std::string text = "[journal step " + std::to_string(s.journal_step) + "] ";
    if (!s.thought.empty())
      text += s.thought + "\n";
    out.push_back(message::user(text + e.result));
    return;
  }
  tool_call c = s.call;
  c.id = call_id(s);
  out.push_back(message::assistant(s.thought, {c}));
  // Numbered as the journal numbers it, so that a conclusion can cite its evidence by step.
  out.push_back(message::tool(
    c.id, "[journal step " + std::to_string(s.journal_step) + "] " + e.result, s.is_error));
}

std::int64_t cost(const entry& e) {
  std::vector<message> m;
  append_messages(m, e);
  chat_request r;
  r.messages = std::move(m);
  return estimate_tokens(r);
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
    text += "\n\n[" + std::to_string(left_out.size()) +
            " earlier steps are left out to fit the context: journal steps ";
    for (std::size_t i = 0; i < left_out.size(); ++i)
      text += (i == 0 ? "" : ", ") + std::to_string(left_out[i]);
    text += "]";
  }
  return text;
}

chat_request build(const context_input& in, const std::vector<entry>& entries) {
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
      append_messages(r.messages, e);
  return r;
}

} // namespace

std::vector<prior_step> prior_steps_of(const std::vector<step>& journal) {
  std::vector<prior_step> out;
  for (auto& s : journal) {
    if (s.state == step_state::intent || is_recall(s))
      continue;
    prior_step p;
    p.journal_step = s.n;
    std::string call_id;
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
    } else if (s.kind == step_kind::message && s.state == step_state::succeeded) {
      // A person's message, as a user turn (docs/conversation.md): who said it, and when.
      auto m = json::parse_object(s.args);
      if (!m)
        continue;
      p.message_seq = json::int_of(*m, "seq").value_or(0);
      p.thought.clear();
      p.result = json::string_or(*m, "author") + " said to this run at " +
                 json::string_or(*m, "at") + ": " + json::string_or(*m, "text");
    } else if (s.kind == step_kind::conclude) {
      p.conclusion_bearing = true;
      p.result = s.result;
      if (auto r = json::parse(s.result, 32); r && r->IsObject())
        p.result = "conclusion: " + json::string_or(*r, "conclusion");
    } else {
      continue;
    }
    out.push_back(std::move(p));
  }
  return out;
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
    if (!e.step->has_call || e.result.size() <= budget.max_result_bytes)
      continue;
    std::string tail = "\n[truncated: " + std::to_string(e.result.size()) + " bytes; " +
                       pointer(e.step->journal_step) + "]";
    std::size_t room =
      budget.max_result_bytes > tail.size() ? budget.max_result_bytes - tail.size() : 0;
    std::string cut{utf8_prefix(e.result, room)};
    rep.bytes_removed += e.result.size() - cut.size();
    e.result = cut + tail;
    ++rep.truncated;
  }
}

} // namespace

assembled_context assemble_context(const context_input& in, const context_budget& budget) {
  assembled_context out;
  auto& rep = out.report;
  rep.budget_tokens = budget.max_input_tokens;
  std::vector<entry> entries;
  entries.reserve(in.steps.size());
  for (auto& s : in.steps)
    entries.push_back({&s, s.result});

  truncate_results(entries, budget, rep);

  std::int64_t total = estimate_tokens(build(in, {}));
  std::vector<std::int64_t> costs;
  for (auto& e : entries) {
    costs.push_back(cost(e));
    total += costs.back();
  }
  auto eligible = [&](std::size_t i) {
    return i + budget.keep_last < entries.size() && !entries[i].step->conclusion_bearing;
  };

  // 2. The oldest results become summaries.
  for (std::size_t i = 0; i < entries.size() && total > budget.max_input_tokens; ++i) {
    auto& e = entries[i];
    if (!eligible(i))
      continue;
    std::string summary = "[summarized: " + one_line(e.result, budget.summary_bytes) + " … (" +
                          std::to_string(e.step->result.size()) + " bytes); " +
                          pointer(e.step->journal_step) + "]";
    if (summary.size() >= e.result.size())
      continue;
    rep.bytes_removed += e.result.size() - summary.size();
    e.result = std::move(summary);
    e.state = entry::summarized;
    ++rep.summarized;
    auto c = cost(e);
    total += c - costs[i];
    costs[i] = c;
  }

  // 3. The oldest steps are left out, call and result together.
  auto omit = [&](entry& e) {
    if (e.state == entry::summarized)
      --rep.summarized;
    rep.bytes_removed += e.result.size() + e.step->thought.size() + e.step->call.arguments.size();
    e.state = entry::omitted;
    ++rep.omitted;
  };
  bool noted = false;
  std::size_t next = 0;
  for (; next < entries.size() && total > budget.max_input_tokens; ++next) {
    if (!eligible(next))
      continue;
    if (!noted) {
      total += 20; // the note that says which steps are left out
      noted = true;
    }
    omit(entries[next]);
    total -= costs[next];
  }
  out.request = build(in, entries);
  rep.estimated_tokens = estimate_tokens(out.request);
  // The note names every step left out and grows with them: leave out more while it is over.
  for (; next < entries.size() && noted && rep.estimated_tokens > budget.max_input_tokens; ++next) {
    if (!eligible(next))
      continue;
    omit(entries[next]);
    out.request = build(in, entries);
    rep.estimated_tokens = estimate_tokens(out.request);
  }
  rep.over_budget = rep.estimated_tokens > budget.max_input_tokens;
  for (const auto& e : entries)
    if (e.step->message_seq > 0 && e.state != entry::omitted)
      rep.messages_seen.push_back(e.step->message_seq);
  return out;
}

} // namespace sreh::llm
