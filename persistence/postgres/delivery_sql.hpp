#pragma once
// The SQL of the notifications' outbox in the PostgreSQL store (deliveries.cpp, schema 15).

#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

#define SREH_DELIVERY_COLUMNS                                                                      \
  "id, event_seq, event, receiver, subject, group_key, notice, state, attempts, created_at, "      \
  "next_at, done_at, last_error"

inline constexpr statement insert_delivery{"insert_delivery",
                                           "INSERT INTO deliveries (" SREH_DELIVERY_COLUMNS
                                           ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                                           "$9, $10, $11, $12, $13) ON CONFLICT (id) DO NOTHING"};
inline constexpr statement set_notify_offset{
  "set_notify_offset",
  "INSERT INTO relay_offsets (name, seq, updated_at) VALUES ($1, $2, $3) "
  "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at"};
inline constexpr statement due_deliveries{
  "due_deliveries", "SELECT " SREH_DELIVERY_COLUMNS " FROM deliveries WHERE state = 'pending' "
                    "AND next_at <= $1 ORDER BY event_seq, id LIMIT $2"};
inline constexpr statement next_delivery_at{
  "next_delivery_at", "SELECT min(next_at) FROM deliveries WHERE state = 'pending'"};
inline constexpr statement record_attempt{
  "record_attempt", "UPDATE deliveries SET state = $2, attempts = $3, next_at = $4, done_at = $5, "
                    "last_error = $6 WHERE id = $1"};
inline constexpr statement get_delivery{"get_delivery", "SELECT " SREH_DELIVERY_COLUMNS
                                                        " FROM deliveries WHERE id = $1"};
inline constexpr statement list_deliveries{
  "list_deliveries", "SELECT " SREH_DELIVERY_COLUMNS " FROM deliveries WHERE ($2 = '' OR id < $2) "
                     "AND ($3 = '' OR state = $3) ORDER BY id DESC LIMIT $1"};
inline constexpr statement last_in_group{
  "last_in_group", "SELECT max(created_at) FROM deliveries WHERE receiver = $1 AND "
                   "group_key = $2 AND state <> 'grouped'"};

#undef SREH_DELIVERY_COLUMNS

inline constexpr statement delivery_statements[] = {
  insert_delivery, set_notify_offset, due_deliveries,  next_delivery_at,
  record_attempt,  get_delivery,      list_deliveries, last_in_group};

} // namespace sreh::persistence::pg
