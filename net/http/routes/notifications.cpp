// REST handlers for the notifications' outbox (docs/notifications.md): list and read the
// deliveries (a dead-letter list with ?state=failed), and retry one. A retry makes the delivery
// pending again with its attempts counted from zero and wakes the notifier.
#include <fmt/format.h>

#include "actors/notify/notifier.hpp"
#include "core/base/clock.hpp"
#include "core/base/logger.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

using persistence::delivery;
using persistence::delivery_state;

constexpr std::size_t max_delivery_id_bytes = 256;

void write_time(json::writer& w, const char* key, timestamp_us at) {
  char buf[32];
  json::field(w, key, at == 0 ? std::nullopt : std::optional{format_rfc3339(at, buf)});
}

void write_delivery(json::writer& w, const delivery& d) {
  w.StartObject();
  json::fields(w, "id", d.id, "event", d.event, "receiver", d.receiver, "subject", d.subject,
               "state", to_string(d.state), "attempts", d.attempts, "event_seq", d.event_seq,
               "group_key", json::string_or_null(d.group_key), "last_error",
               json::string_or_null(d.last_error));
  write_time(w, "created_at", d.created_at);
  write_time(w, "next_at", d.state == delivery_state::pending ? d.next_at : 0);
  write_time(w, "done_at", d.done_at);
  json::field(w, "notice", json::raw_text{d.notice});
  w.EndObject();
}

std::optional<reply> check_id(const request& req, const std::string& id) {
  if (!id.empty() && id.size() <= max_delivery_id_bytes && id.starts_with("evt_") &&
      id.find('.') != std::string::npos)
    return std::nullopt;
  return problem(
    400, "invalid-argument",
    fmt::format("notification id '{}' is malformed (expected EVENT_ID.RECEIVER)", id.substr(0, 80)),
    req);
}

reply list_notifications(server_context& ctx, const request& req) {
  persistence::delivery_filter f;
  if (const auto* s = req.param("state"); s && !s->empty()) {
    f.state = persistence::parse_delivery_state(*s);
    if (!f.state)
      return problem(400, "invalid-argument",
                     "state: '" + *s + "' is not one of pending, delivered, failed, grouped", req);
  }
  std::optional<reply> bad_limit;
  if (auto n = read_limit(req, bad_limit))
    f.limit = *n;
  if (bad_limit)
    return std::move(*bad_limit);
  if (const auto* cur = req.param("cursor"); cur && !cur->empty()) {
    if (auto bad = check_id(req, *cur))
      return std::move(*bad);
    f.before_id = *cur;
  }
  auto page = ctx.store.list_deliveries(f);
  if (!page)
    return problem(page.error(), req);
  return json_reply(200, object_body([&](json::writer& w) {
                      write_items(w, "notifications", page->deliveries, write_delivery);
                      json::field(w, "next_cursor", json::string_or_null(page->next_cursor));
                    }));
}

std::variant<delivery, reply> load(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_id(req, id))
    return std::move(*bad);
  auto d = ctx.store.get_delivery(id);
  if (!d)
    return problem(d.error(), req);
  if (!*d)
    return problem(404, "not-found", "notification " + id + " not found", req);
  return std::move(**d);
}

reply get_notification(server_context& ctx, const request& req) {
  auto loaded = load(ctx, req);
  if (auto* r = std::get_if<reply>(&loaded))
    return std::move(*r);
  return json_reply(200, item_body("notification", std::get<delivery>(loaded), write_delivery));
}

reply retry_notification(server_context& ctx, const request& req) {
  auto loaded = load(ctx, req);
  if (auto* r = std::get_if<reply>(&loaded))
    return std::move(*r);
  auto d = std::get<delivery>(std::move(loaded));
  if (d.state == delivery_state::delivered || d.state == delivery_state::grouped)
    return problem(
      409, "conflict",
      fmt::format("notification {} is {}: there is nothing to retry", d.id, to_string(d.state)),
      req);
  d.state = delivery_state::pending;
  d.attempts = 0;
  d.next_at = ctx.clock.now_us();
  d.done_at = 0;
  if (auto err = ctx.store.record_attempt(d))
    return problem(err, req);
  logger("notify")->info("notify: {} retried by {}", d.id, req.who.name);
  if (ctx.notifier != nullptr)
    ctx.notifier->wake();
  return json_reply(202, item_body("notification", d, write_delivery));
}

} // namespace

void add_notification_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add("GET", "/v1/notifications", access::viewer,
        [c](const request& q, responder s) { s.send(list_notifications(*c, q)); });
  r.add("GET", "/v1/notifications/{id}", access::viewer,
        [c](const request& q, responder s) { s.send(get_notification(*c, q)); });
  r.add("POST", "/v1/notifications/{id}/retry", access::operator_,
        [c](const request& q, responder s) { s.send(retry_notification(*c, q)); });
}

} // namespace sreh::net
