#include "core/works/conversation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/base/text.hpp"

namespace sreh::works {

namespace {

constexpr std::size_t max_said_bytes = 500; // of one comment in the context
constexpr std::size_t max_conclusion_bytes = 600;

std::string when(timestamp_us t) {
  char buf[32];
  return std::string{format_rfc3339(t, buf)};
}

std::string clipped(std::string_view s, std::size_t max) {
  if (s.size() <= max)
    return std::string{s};
  return std::string{utf8_prefix(s, max)} + "…";
}

} // namespace

std::vector<said> said_on(const std::vector<event>& timeline) {
  std::vector<said> out;
  for (const auto& e : timeline) {
    if (e.kind != "work.comment" && e.kind != "work.triggered")
      continue;
    auto doc = json::parse_object(e.data);
    if (!doc)
      continue;
    said s{e.run_seq, e.kind, json::string_or(*doc, "by"), json::string_or(*doc, "text"), e.at};
    if (s.text.find_first_not_of(" \t\r\n") != std::string::npos)
      out.push_back(std::move(s));
  }
  return out;
}

std::vector<said> said_since(const std::vector<event>& timeline, std::string_view run_id) {
  std::int64_t started = -1;
  for (const auto& e : timeline)
    if (e.kind == "work.run_started")
      if (auto doc = json::parse_object(e.data); doc && json::string_or(*doc, "run_id") == run_id)
        started = e.run_seq;
  if (started < 0)
    return {};
  std::vector<said> out;
  for (auto& s : said_on(timeline)) {
    if (s.seq <= started)
      continue;
    if (s.kind == "work.triggered") { // only a trigger the active run took (join): `attach`
      const auto* e = std::find_if(timeline.data(), timeline.data() + timeline.size(),
                                   [&](const event& x) { return x.run_seq == s.seq; });
      auto doc = json::parse_object(e->data);
      if (!doc || json::string_or(*doc, "action") != "attach")
        continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string message_key(const work& w, std::int64_t seq) {
  return fmt::format("work:{}:{}", w.id, seq);
}

std::string run_context(const work& w, const std::vector<said>& said,
                        const std::vector<earlier_run>& runs, std::size_t max_bytes) {
  std::string head = fmt::format("Work {} ({}, {}{}): {}", w.id, w.kind, to_string(w.state),
                                 w.severity.empty() ? "" : ", " + w.severity, w.title);
  if (auto fields = json::parse_object(w.fields); fields && fields->MemberCount() > 0) {
    head += "\nFields:";
    for (const auto& m : fields->GetObject())
      head += fmt::format(" {}={}", m.name.GetString(),
                          m.value.IsString() ? std::string{m.value.GetString()}
                                             : json::stringify(m.value));
  }
  std::vector<std::string> words;
  for (const auto& s : said)
    words.push_back(fmt::format("- {} at {}{}: {}", s.by, when(s.at),
                                s.kind == "work.triggered" ? " (triggering a run)" : "",
                                clipped(s.text, max_said_bytes)));
  std::vector<std::string> ended;
  for (const auto& r : runs)
    ended.push_back(fmt::format(
      "- {} {}: {}", r.id, r.state,
      clipped(r.conclusion.empty() ? "(no conclusion)" : r.conclusion, max_conclusion_bytes)));
  // The oldest go first when it does not fit: what was said last and the last run matter most.
  std::size_t left_words = 0, left_runs = 0;
  auto render = [&] {
    std::string out = head;
    if (!words.empty() || left_words > 0) {
      out += "\nSaid on the Work (oldest first):";
      if (left_words > 0)
        out += fmt::format("\n- [{} earlier left out]", left_words);
      for (const auto& x : words)
        out += "\n" + x;
    }
    if (!ended.empty() || left_runs > 0) {
      out += "\nEarlier runs of the Work (oldest first):";
      if (left_runs > 0)
        out += fmt::format("\n- [{} earlier left out]", left_runs);
      for (const auto& x : ended)
        out += "\n" + x;
    }
    return out;
  };
  auto out = render();
  while (out.size() > max_bytes && (words.size() > 1 || ended.size() > 1)) {
    if (words.size() >= ended.size() && words.size() > 1) {
      words.erase(words.begin());
      ++left_words;
    } else {
      ended.erase(ended.begin());
      ++left_runs;
    }
    out = render();
  }
  return std::string{utf8_prefix(out, max_bytes)};
}

} // namespace sreh::works
