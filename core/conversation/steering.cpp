#include "core/conversation/steering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/text.hpp"
#include "core/model/json_fields.hpp"

namespace sreh::conversation {

namespace {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n\"'`");
  if (b == std::string_view::npos)
    return {};
  auto e = s.find_last_not_of(" \t\r\n\"'`");
  return std::string{s.substr(b, e - b + 1)};
}

bool starts_with_word(std::string_view s, std::string_view w) {
  return s.starts_with(w) &&
         (s.size() == w.size() || !std::isalnum(static_cast<unsigned char>(s[w.size()])));
}

/// The sentences of `text`, lower-cased: split at . ; ! ? and line ends (a dot inside a name,
/// "api.v2", is kept: it splits only before a space or the end).
std::vector<std::string> sentences(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (auto t = trim(cur); !t.empty())
      out.push_back(ascii_lower(t));
    cur.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool end = c == ';' || c == '!' || c == '?' || c == '\n' ||
               (c == '.' && (i + 1 == text.size() || text[i + 1] == ' '));
    if (end)
      flush();
    else
      cur += c;
  }
  flush();
  return out;
}

/// Where a subject ends: a comma, or a word that starts a reason ("because", "while", ...).
std::string clip_subject(std::string_view s) {
  auto end = s.find_first_of(",:()");
  std::string_view cut = s.substr(0, end);
  for (std::string_view w : {" because ", " while ", " until ", " since ", " as ", " for now",
                             " for the moment", " please", " it is ", " it's ", " - "}) {
    auto at = (std::string{cut} + " ").find(w);
    if (at != std::string::npos && at < cut.size())
      cut = cut.substr(0, at);
  }
  return trim(cut);
}

/// The subjects of a clipped phrase: split at "and", "or", "/"; articles and "service" dropped.
std::vector<std::string> subjects_of(std::string_view phrase) {
  std::vector<std::string> out;
  std::string p; // the phrase with each separator as '\x1f'
  p.reserve(phrase.size());
  for (std::size_t i = 0; i < phrase.size();) {
    std::size_t skip = 0;
    for (std::string_view sep : {" and ", " or ", "/", " nor "})
      if (phrase.substr(i).starts_with(sep)) {
        skip = sep.size();
        break;
      }
    p += skip > 0 ? '\x1f' : phrase[i];
    i += skip > 0 ? skip : 1;
  }
  std::string_view rest = p;
  while (!rest.empty()) {
    auto at = rest.find('\x1f');
    auto part = trim(rest.substr(0, at));
    rest = at == std::string_view::npos ? std::string_view{} : rest.substr(at + 1);
    for (std::string_view art : {"the ", "any ", "our ", "a ", "service ", "either "})
      if (part.starts_with(art))
        part.erase(0, art.size());
    for (std::string_view tail : {" service", " either", " at all"})
      if (part.size() > tail.size() && part.ends_with(tail))
        part.erase(part.size() - tail.size());
    if (!part.empty())
      out.push_back(part);
  }
  return out;
}

/// `phrase X` in `s`: the subjects of X; `suffix` (" alone", " first") must follow X when given.
std::vector<std::string> after(const std::string& s, std::string_view phrase,
                               std::string_view suffix = {}) {
  for (auto at = s.find(phrase); at != std::string::npos; at = s.find(phrase, at + 1)) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(s[at - 1])))
      continue;
    auto rest = std::string_view{s}.substr(at + phrase.size());
    if (!suffix.empty()) {
      auto end = rest.find(suffix);
      if (end == std::string_view::npos)
        continue;
      rest = rest.substr(0, end);
    }
    auto subjects = subjects_of(clip_subject(rest));
    if (!subjects.empty())
      return subjects;
  }
  return {};
}

constexpr std::array<std::string_view, 9> constraint_phrases{
  "do not touch ", "don't touch ",    "dont touch ",     "do not change ", "don't change ",
  "hands off ",    "keep away from ", "stay away from ", "no changes to "};

constexpr std::array<std::string_view, 17> question_words{
  "why",    "what", "how", "which", "who",   "when",  "where",  "did", "does",
  "do you", "is",   "are", "can",   "could", "would", "should", "will"};

bool is_command(const std::string& s, std::string_view word) {
  auto t = s;
  for (std::string_view p : {"please ", "now "})
    if (t.starts_with(p))
      t.erase(0, p.size());
  for (std::string_view x : {" please", " now", " the run", " the investigation", " it", " here"})
    if (t.size() > x.size() && t.ends_with(x))
      t.erase(t.size() - x.size());
  return t == word;
}

} // namespace

const char* to_string(form f) {
  switch (f) {
  case form::constraint:
    return "constraint";
  case form::check_first:
    return "check_first";
  case form::stop:
    return "stop";
  case form::pause:
    return "pause";
  case form::resume:
    return "resume";
  case form::question:
    return "question";
  case form::note:
    return "note";
  }
  return "note";
}

reading read(std::string_view text) {
  auto all = sentences(text);
  for (const auto& s : all) {
    for (auto p : constraint_phrases)
      if (auto x = after(s, p); !x.empty())
        return {form::constraint, std::move(x)};
    if (auto x = after(s, "leave ", " alone"); !x.empty())
      return {form::constraint, std::move(x)};
    for (std::string_view p : {"check ", "look at ", "investigate ", "start by checking "})
      if (auto x = after(s, p, " first"); !x.empty())
        return {form::check_first, std::move(x)};
    if (auto x = after(s, "start with "); !x.empty())
      return {form::check_first, std::move(x)};
  }
  if (!all.empty()) {
    // A command is the message's first clause; what follows is its reason ("pause, the db is
    // being failed over", "Stop. I will take it from here.").
    const auto head = clip_subject(all[0]);
    for (auto [word, f] : {std::pair{"stop", form::stop}, std::pair{"abort", form::stop},
                           std::pair{"pause", form::pause}, std::pair{"hold on", form::pause},
                           std::pair{"resume", form::resume}, std::pair{"continue", form::resume},
                           std::pair{"go on", form::resume}})
      if (is_command(head, word))
        return {f, {}};
  }
  auto t = trim(text);
  if (!t.empty() && t.back() == '?')
    return {form::question, {}};
  auto first = ascii_lower(t);
  for (auto w : question_words)
    if (starts_with_word(first, w))
      return {form::question, {}};
  return {form::note, {}};
}

std::vector<std::string> resolve(std::string_view subject, const std::vector<known_entity>& known) {
  auto s = ascii_lower(subject);
  for (const auto& [name, kind] : known)
    if (ascii_lower(name) == s)
      return {name};
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kinds{
    {{"database", "database"},
     {"databases", "database"},
     {"db", "database"},
     {"dbs", "database"},
     {"cache", "cache"},
     {"caches", "cache"},
     {"queue", "queue"},
     {"queues", "queue"},
     {"host", "host"},
     {"hosts", "host"},
     {"node", "host"},
     {"nodes", "host"}}};
  // "the database", or "the payments database": every entity of that kind (whose name starts
  // with the qualifier, when one is given).
  std::string qualifier;
  std::string kind_word = s;
  if (auto sp = s.rfind(' '); sp != std::string::npos) {
    qualifier = s.substr(0, sp);
    kind_word = s.substr(sp + 1);
  }
  for (auto [word, kind] : kinds) {
    if (kind_word != word)
      continue;
    std::vector<std::string> out;
    for (const auto& [name, k] : known)
      if (k == kind && (qualifier.empty() || ascii_lower(name).starts_with(qualifier)))
        out.push_back(name);
    if (!out.empty())
      return out;
  }
  return {std::string{subject}};
}

std::string reading_json(const reading& r, const std::vector<std::string>& entities) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("form"), w.String(to_string(r.what));
  w.Key("subjects");
  w.StartArray();
  for (const auto& s : r.subjects)
    json::detail::str(w, s);
  w.EndArray();
  w.Key("entities");
  w.StartArray();
  for (const auto& e : entities)
    json::detail::str(w, e);
  w.EndArray();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::vector<directive> directives_of(const std::vector<step>& journal, form f) {
  std::vector<directive> out;
  const std::string name_of_form = to_string(f);
  for (const auto& s : journal) {
    if (s.kind != step_kind::message || s.state != step_state::succeeded ||
        s.result.find('"' + name_of_form + '"') == std::string::npos)
      continue;
    auto res = json::parse_object(s.result);
    auto args = json::parse_object(s.args);
    if (!res || !args || json::string_or(*res, "form") != name_of_form)
      continue;
    const auto* entities = json::member(*res, "entities");
    if (entities == nullptr || !entities->IsArray())
      continue;
    for (const auto& e : entities->GetArray()) {
      if (!e.IsString())
        continue;
      std::string name{e.GetString(), e.GetStringLength()};
      if (constraint_on(out, name) != nullptr)
        continue;
      out.push_back({name, json::string_or(*args, "text"), json::string_or(*args, "author"),
                     json::string_or(*args, "id"), s.n});
    }
  }
  return out;
}

std::vector<constraint> constraints_of(const std::vector<step>& journal) {
  return directives_of(journal, form::constraint);
}

std::optional<directive> pause_of(const std::vector<step>& journal) {
  for (auto s = journal.rbegin(); s != journal.rend(); ++s) {
    if (s->kind != step_kind::message || s->state != step_state::succeeded ||
        (s->result.find("\"pause\"") == std::string::npos &&
         s->result.find("\"resume\"") == std::string::npos))
      continue; // as directives_of: only a step that may say pause or resume is parsed
    auto res = json::parse_object(s->result);
    if (!res)
      continue;
    auto what = json::string_or(*res, "form");
    if (what == to_string(form::resume))
      return std::nullopt;
    if (what != to_string(form::pause))
      continue;
    auto args = json::parse_object(s->args);
    if (!args)
      continue;
    return directive{{},
                     json::string_or(*args, "text"),
                     json::string_or(*args, "author"),
                     json::string_or(*args, "id"),
                     s->n};
  }
  return std::nullopt;
}

std::string pause_json(const std::optional<directive>& pause) {
  if (!pause)
    return "null";
  return json::object("author", pause->author, "said", pause->said, "message", pause->message_id,
                      "step", pause->step);
}

const constraint* constraint_on(const std::vector<constraint>& all, std::string_view target) {
  if (target.empty())
    return nullptr;
  auto t = ascii_lower(target);
  for (const auto& c : all)
    if (ascii_lower(c.entity) == t)
      return &c;
  return nullptr;
}

std::string describe(const constraint& c) {
  auto said = c.said.size() > 200 ? c.said.substr(0, 200) + "…" : c.said;
  return fmt::format("constraint from {} at step {}: \"{}\"", c.author, c.step, said);
}

std::string constraints_json(const std::vector<constraint>& all) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartArray();
  for (const auto& c : all) {
    w.StartObject();
    w.Key("entity"), json::detail::str(w, c.entity);
    w.Key("said"), json::detail::str(w, c.said);
    w.Key("author"), json::detail::str(w, c.author);
    w.Key("message"), json::detail::str(w, c.message_id);
    w.Key("step"), w.Int64(c.step);
    w.EndObject();
  }
  w.EndArray();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace sreh::conversation
