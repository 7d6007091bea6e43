#include "core/memory/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/base/json_object.hpp"

namespace sreh::memory {

namespace {

// Words that say nothing about an incident: English function words (those of the Snowball
// stop list both engines' English stemmers share) and the words of a goal that every incident
// shares ("find out why", "find the root cause and mitigate").
const std::set<std::string_view>& stop_words() {
  static const std::set<std::string_view> words{
    "a",           "about",    "above",   "after",  "again",   "against", "all",   "am",
    "an",          "and",      "any",     "are",    "as",      "at",      "be",    "because",
    "been",        "before",   "being",   "below",  "between", "both",    "but",   "by",
    "can",         "could",    "did",     "do",     "does",    "doing",   "down",  "during",
    "each",        "few",      "for",     "from",   "further", "had",     "has",   "have",
    "having",      "he",       "her",     "here",   "hers",    "him",     "his",   "how",
    "i",           "if",       "in",      "into",   "is",      "it",      "its",   "itself",
    "just",        "me",       "more",    "most",   "my",      "no",      "nor",   "not",
    "now",         "of",       "off",     "on",     "once",    "only",    "or",    "other",
    "our",         "ours",     "out",     "over",   "own",     "same",    "she",   "should",
    "so",          "some",     "such",    "than",   "that",    "the",     "their", "theirs",
    "them",        "then",     "there",   "these",  "they",    "this",    "those", "through",
    "to",          "too",      "under",   "until",  "up",      "very",    "was",   "we",
    "were",        "what",     "when",    "where",  "which",   "while",   "who",   "whom",
    "why",         "will",     "with",    "would",  "you",     "your",    "yours", "find",
    "fix",         "please",   "look",    "check",  "cause",   "causes",  "root",  "mitigate",
    "investigate", "diagnose", "resolve", "figure",
  };
  return words;
}

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

double label_overlap(const entry& e, const query& q) {
  if (q.labels.empty())
    return 0;
  std::size_t shared = 0;
  for (const auto& [k, v] : q.labels) {
    auto it = e.labels.find(k);
    if (it != e.labels.end() && it->second == v)
      ++shared;
  }
  return static_cast<double>(shared) / static_cast<double>(q.labels.size());
}

double entity_overlap(const entry& e, const query& q) {
  if (q.entities.empty())
    return 0;
  std::size_t shared = 0;
  for (const auto& id : q.entities)
    if (std::binary_search(e.entities.begin(), e.entities.end(), id))
      ++shared;
  return static_cast<double>(shared) / static_cast<double>(q.entities.size());
}

double recency(const entry& e, timestamp_us now) {
  const double age_days =
    std::max<double>(0, static_cast<double>(now - e.updated_at) / (86'400.0 * 1e6));
  return std::pow(0.5, age_days / recency_half_life_days);
}

double three_decimals(double v) {
  return std::round(v * 1000) / 1000;
}

} // namespace

std::vector<std::string> search_terms(std::string_view text) {
  std::vector<std::string> terms;
  std::set<std::string> seen;
  std::size_t i = 0;
  while (i < text.size() && terms.size() < max_query_terms) {
    while (i < text.size() && !word_byte(static_cast<unsigned char>(text[i])))
      ++i;
    std::string word;
    while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) {
      const auto c = static_cast<unsigned char>(text[i]);
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c);
      ++i;
    }
    if (word.empty() || word.size() > 64 || stop_words().count(word) > 0)
      continue;
    if (seen.insert(word).second)
      terms.push_back(std::move(word));
  }
  return terms;
}

sreh::error validate(const query& q) {
  if (q.text.size() > max_query_bytes)
    return {errc::invalid_argument,
            fmt::format("memory search: q is {} bytes, over the limit of {}", q.text.size(),
                        max_query_bytes)};
  if (auto at = json::invalid_utf8_at(q.text))
    return {errc::invalid_argument, fmt::format("memory search: q is not UTF-8 at byte {}", *at)};
  if (q.limit < 1 || q.limit > max_search_limit)
    return {errc::invalid_argument,
            fmt::format("memory search: limit must be 1..{}, not {}", max_search_limit, q.limit)};
  if (q.filter.size() > max_labels)
    return {errc::invalid_argument,
            fmt::format("memory search: at most {} label filters", max_labels)};
  return {};
}

int candidate_limit(const query& q) {
  return std::clamp(q.limit * 10, 50, 500);
}

std::vector<hit> rank(std::vector<candidate> candidates, const query& q, timestamp_us now) {
  double best = 0;
  for (const auto& c : candidates)
    best = std::max(best, c.relevance);
  std::vector<hit> hits;
  hits.reserve(candidates.size());
  for (auto& c : candidates) {
    const double text = best > 0 ? std::max(0.0, c.relevance) / best : 0;
    const double labels = label_overlap(c.e, q);
    const double entities = entity_overlap(c.e, q);
    const double recent = recency(c.e, now);
    hit h;
    h.score = text_weight * text + label_weight * labels + entity_weight * entities +
              recency_weight * recent;
    h.parts = {{"text", text}, {"labels", labels}, {"entities", entities}, {"recency", recent}};
    h.e = std::move(c.e);
    hits.push_back(std::move(h));
  }
  std::sort(hits.begin(), hits.end(), [](const hit& a, const hit& b) {
    if (a.score != b.score)
      return a.score > b.score;
    if (a.e.updated_at != b.e.updated_at)
      return a.e.updated_at > b.e.updated_at;
    return a.e.id < b.e.id;
  });
  if (hits.size() > static_cast<std::size_t>(std::max(q.limit, 0)))
    hits.resize(static_cast<std::size_t>(std::max(q.limit, 0)));
  return hits;
}

void write_json(json::writer& w, const hit& h) {
  w.StartObject();
  write_members(w, h.e);
  json::field(w, "score", three_decimals(h.score));
  w.Key("parts");
  w.StartObject();
  for (const auto& p : h.parts)
    json::field(w, p.name, three_decimals(p.value));
  w.EndObject();
  w.EndObject();
}

} // namespace sreh::memory
