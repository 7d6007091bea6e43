#pragma once
// The SQL of runs' conversations in the PostgreSQL store (messages.cpp, schema 13). Written row
// by row inside the commit's transaction: a run has a handful of messages.

#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

#define SREH_MESSAGE_COLUMNS                                                                       \
  "SELECT run_id, seq, id, author, kind, text, at, idempotency_key, taken_step FROM messages "

inline constexpr statement insert_message{
  "insert_message",
  "INSERT INTO messages (run_id, seq, id, author, kind, text, at, idempotency_key, taken_step) "
  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"};
inline constexpr statement take_message{
  "take_message", "UPDATE messages SET taken_step = $3 WHERE run_id = $1 AND seq = $2"};
inline constexpr statement list_messages{"list_messages", SREH_MESSAGE_COLUMNS
                                         "WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"};
inline constexpr statement untaken_messages{
  "untaken_messages",
  SREH_MESSAGE_COLUMNS "WHERE run_id = $1 AND taken_step = 0 AND kind = 'message' ORDER BY seq"};
inline constexpr statement message_by_key{"message_by_key", SREH_MESSAGE_COLUMNS
                                          "WHERE run_id = $1 AND idempotency_key = $2"};
inline constexpr statement runs_with_untaken_messages{
  "runs_with_untaken_messages", "SELECT DISTINCT run_id FROM messages WHERE taken_step = 0 AND "
                                "kind = 'message' ORDER BY run_id"};
inline constexpr statement last_message_seq{
  "last_message_seq", "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE run_id = $1"};

#undef SREH_MESSAGE_COLUMNS

inline constexpr statement message_statements[] = {insert_message,  take_message,
                                                   list_messages,   untaken_messages,
                                                   message_by_key,  runs_with_untaken_messages,
                                                   last_message_seq};

} // namespace sreh::persistence::pg
