// Where a walk starts: the entities the run's labels, goal or alerts name (engine.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/base/json.hpp"
#include "plugins/models/builtin/engine.hpp"

namespace sreh::plugins::reasoner {

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::vector<std::string> split_name(const std::string& name) {
  std::vector<std::string> out(1);
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!out.back().empty())
        out.emplace_back();
    } else {
      out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (out.back().empty())
    out.pop_back();
  return out;
}

/// Where a multi-part name is paraphrased in `text` ("the fraud model stopped training" for
/// `fraud-train`): every part starts a distinct word. npos when it is not.
std::size_t paraphrase_at(const std::string& text, const std::string& name) {
  auto parts = split_name(name);
  if (parts.size() < 2)
    return std::string::npos;
  std::vector<std::pair<std::size_t, std::string>> words;
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && !std::isalnum(static_cast<unsigned char>(text[i])))
      ++i;
    auto start = i;
    std::string w;
    while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])))
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i++])));
    if (!w.empty())
      words.emplace_back(start, std::move(w));
  }
  std::size_t first = std::string::npos;
  std::vector<bool> used(words.size());
  for (auto& p : parts) {
    bool found = false;
    for (std::size_t k = 0; k < words.size() && !found; ++k)
      if (!used[k] && words[k].second.rfind(p, 0) == 0) {
        used[k] = found = true;
        first = std::min(first, words[k].first);
      }
    if (!found)
      return std::string::npos;
  }
  return first;
}

/// Entity names that occur as whole words in `text` (or paraphrased part by part), in order of
/// first occurrence.
std::vector<std::string> names_in(const std::string& text, const evidence& ev) {
  std::vector<std::pair<std::size_t, std::string>> hits;
  for (auto& name : ev.order) {
    if (auto at = paraphrase_at(text, name);
        at != std::string::npos && text.find(name) == std::string::npos) {
      hits.emplace_back(at, name);
      continue;
    }
    for (auto pos = text.find(name); pos != std::string::npos; pos = text.find(name, pos + 1)) {
      bool left = pos == 0 || !is_name_char(text[pos - 1]);
      auto end = pos + name.size();
      // A trailing '.' ends a sentence; it does not continue the name.
      bool right = end == text.size() || !is_name_char(text[end]) ||
                   (text[end] == '.' && (end + 1 == text.size() || !is_name_char(text[end + 1])));
      if (left && right) {
        hits.emplace_back(pos, name);
        break;
      }
    }
  }
  std::sort(hits.begin(), hits.end(), [](auto& a, auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.size() > b.second.size();
  });
  std::vector<std::string> out;
  for (auto& [pos, name] : hits)
    if (std::none_of(out.begin(), out.end(), [&](auto& o) {
          return o.find(name) != std::string::npos && o != name; // "orders" inside "orders-db"
        }))
      out.push_back(name);
  return out;
}

} // namespace

/// The alerted entities: run labels, else names in the goal, else firing alerts, else roots.
/// Returns the source, or "" when the alerts must be listed first.
std::string find_focus(const evidence& ev, const run& r,
                       std::vector<std::pair<std::string, std::string>>& out) {
  auto add = [&](const std::string& name, const std::string& kind) {
    if (!name.empty() &&
        std::none_of(out.begin(), out.end(), [&](auto& f) { return f.first == name; }))
      out.emplace_back(name, kind);
  };
  auto kind_of = [&](const std::string& name, const std::string& key) {
    if (auto* e = ev.find(name); e && !e->kind.empty())
      return e->kind;
    return key == "host" || key == "job" ? key : std::string{"service"};
  };
  if (auto labels = json::parse(r.labels); labels && labels->IsObject()) {
    for (const char* key : {"service", "database", "host", "job", "target"})
      if (auto it = labels->FindMember(key); it != labels->MemberEnd() && it->value.IsString())
        add(it->value.GetString(), kind_of(it->value.GetString(), key));
    if (ev.topology_known)
      for (auto& m : labels->GetObject())
        if (m.value.IsString() && ev.find(m.value.GetString()))
          add(m.value.GetString(), kind_of(m.value.GetString(), ""));
  }
  bool labelled = !out.empty();
  for (auto& n : names_in(r.goal, ev))
    add(n, kind_of(n, ""));
  if (!out.empty())
    return labelled ? "labels" : "goal";
  if (!ev.alerts_known)
    return "";
  for (auto& labels : ev.alert_labels)
    for (const char* key : {"service", "database", "host", "job"})
      if (auto it = labels.find(key);
          it != labels.end() && (ev.find(it->second) || !ev.topology_known))
        add(it->second, kind_of(it->second, key));
  if (!out.empty())
    return "alerts";
  for (auto& name : ev.order) {
    auto& e = ev.entities.at(name);
    if ((e.is_service_kind() && e.called_by.empty() && !e.calls.empty()) || e.kind == "job")
      add(name, e.kind);
  }
  return "roots";
}

/// True when the goal speaks of jobs ("a training job stalled") and the topology has some.
bool goal_mentions_jobs(const std::string& goal, const evidence& ev) {
  std::set<std::string> words;
  std::string w;
  for (char c : goal + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      words.insert(std::move(w));
      w.clear();
    }
  }
  bool any_job = false;
  for (auto& [name, e] : ev.entities) {
    if (e.kind != "job")
      continue;
    any_job = true;
    if (!e.subkind.empty() && words.contains(e.subkind))
      return true;
  }
  return any_job && (words.contains("job") || words.contains("jobs"));
}

} // namespace sreh::plugins::reasoner
