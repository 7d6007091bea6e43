#pragma once
// Searching long-term memory (docs/memory.md, "Search"). The store's own full-text engine finds
// the candidates — SQLite FTS5 (porter stemmer) on one node, PostgreSQL's `tsvector` with a GIN
// index in a cluster — matching any of the query's terms, with the engine's text relevance.
// `rank` orders them by what an on-call engineer means: the text relevance first, then the
// query's labels an entry shares, the world entities it concerns, and how recent it is. An
// all-terms filter would miss "payments 5xx after the release" against an entry that says
// "error rate rose on payments after deploy v2.3"; the ranking decides instead.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/memory/memory.hpp"

namespace sreh::memory {

/// What a search asks.
struct query {
  std::string text;                          // what was typed; "" = the newest entries
  std::map<std::string, std::string> labels; // ranking: the labels of the case at hand
  std::vector<std::string> entities;         // ranking: the entities of the case at hand
  std::map<std::string, std::string> filter; // only entries with every one of these labels
  std::optional<memory::kind> kind;          // only entries of this kind
  int limit = 10;                            // 1..100
};

inline constexpr int max_search_limit = 100;
inline constexpr std::size_t max_query_bytes = 1024;
inline constexpr std::size_t max_query_terms = 24;

/// The words of `text` a full-text engine is asked for: lowercase runs of letters and digits
/// (UTF-8 letters kept whole), common English words dropped, each at most 64 bytes, at most
/// `max_query_terms`, first occurrence first. Every term is safe to quote into either engine's
/// query syntax, so no text a user types reaches the engine as syntax.
[[nodiscard]] std::vector<std::string> search_terms(std::string_view text);

/// `invalid_argument` naming the parameter when `q` is over a limit.
[[nodiscard]] sreh::error validate(const query& q);

/// How many candidates a store returns for `q` (by text relevance) for `rank` to order: enough
/// that labels, entities and recency can lift an entry the text ranks lower.
[[nodiscard]] int candidate_limit(const query& q);

/// A candidate as a store finds it: the current version of a live entry and the engine's text
/// relevance (higher is better; 0 when the query has no terms).
struct candidate {
  entry e;
  double relevance = 0;
};

/// One part of a hit's score.
struct score_part {
  const char* name; // text, labels, entities, recency
  double value;     // 0..1, before its weight
};

/// A ranked entry: its score 0..1 and the parts it is made of.
struct hit {
  entry e;
  double score = 0;
  std::vector<score_part> parts;
};

/// The weights of the parts (they sum to 1).
inline constexpr double text_weight = 0.55;
inline constexpr double label_weight = 0.20;
inline constexpr double entity_weight = 0.15;
inline constexpr double recency_weight = 0.10;
/// Recency halves every this many days.
inline constexpr double recency_half_life_days = 30;

/// `candidates` ordered by score (ties: newer first, then id), at most `q.limit`.
[[nodiscard]] std::vector<hit> rank(std::vector<candidate> candidates, const query& q,
                                    timestamp_us now);

/// `h` in its wire shape: the entry's members and `score` (3 decimals) with its `parts`.
void write_json(json::writer& w, const hit& h);

} // namespace sreh::memory
