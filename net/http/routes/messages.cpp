// POST and GET /v1/runs/{id}/messages: a run's conversation (docs/conversation.md). A message is
// committed by the kernel (once per Idempotency-Key) and then taken into the run at its next
// decision; the list is the run's conversation oldest first, people's messages and the agent's
// replies.
#include <fmt/format.h>

#include <charconv>

#include "core/base/id.hpp"
#include "core/base/json.hpp"
#include "core/conversation/message.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

std::optional<reply> check_id(const request& req, const std::string& id) {
  if (is_valid_id(id, "run"))
    return std::nullopt;
  return problem(400, "invalid-argument",
                 "run id '" + id + "' is malformed (expected run_ followed by 26 characters)", req);
}

/// `{"message": {...}}`, and `"reply": {...}` when the message was a question.
std::string message_body(const actors::say_reply& r) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("message");
  json::raw(w, conversation::to_json(r.said));
  if (r.answer) {
    w.Key("reply");
    json::raw(w, conversation::to_json(*r.answer));
  }
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

void post_message(server_context& ctx, const request& req, responder res) {
  const auto& id = req.params.at("id");
  if (auto bad = check_id(req, id))
    return res.send(std::move(*bad));
  conversation::message m;
  if (auto bad = read_idempotency_key(req, m.idempotency_key))
    return res.send(std::move(*bad));
  auto doc = request_object(ctx, req, R"({"text": "..."})");
  if (auto* bad = std::get_if<reply>(&doc))
    return res.send(std::move(*bad));
  const auto& body = std::get<rapidjson::Document>(doc);
  for (const auto& member : body.GetObject())
    if (std::string_view{member.name.GetString()} != "text")
      return res.send(problem(400, "invalid-argument",
                              fmt::format("unknown field '{}' (a message is {{\"text\": \"...\"}})",
                                          member.name.GetString()),
                              req));
  const auto* text = json::member(body, "text");
  if (text == nullptr || !text->IsString())
    return res.send(problem(400, "invalid-argument", "text: a message needs a string 'text'", req));
  m.text.assign(text->GetString(), text->GetStringLength());
  if (auto err = conversation::check_text(m.text))
    return res.send(problem(err, req));
  m.run_id = id;
  m.author = req.who.name;
  ctx.kernel.say(std::move(m), [req, res](expected<actors::say_reply> r) {
    res.post([req, res, r = std::move(r)] {
      if (!r)
        return res.send(problem(r.error(), req));
      auto out = json_reply(r->created ? 201 : 200, message_body(*r));
      res.send(std::move(out));
    });
  });
}

reply list_messages(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_id(req, id))
    return std::move(*bad);
  std::int64_t after = 0;
  if (const auto* a = req.param("after"); a && !a->empty()) {
    auto [p, ec] = std::from_chars(a->data(), a->data() + a->size(), after);
    if (ec != std::errc{} || p != a->data() + a->size() || after < 0)
      return problem(400, "invalid-argument", "after: must be a message seq (0 or more)", req);
  }
  std::optional<reply> bad;
  int limit = persistence::max_message_rows;
  if (auto n = read_limit(req, bad))
    limit = *n;
  if (bad)
    return std::move(*bad);
  auto r = ctx.store.get_run(id);
  if (!r)
    return problem(r.error(), req);
  if (!*r)
    return problem(404, "not-found", "run " + id + " not found", req);
  auto all = ctx.store.list_messages(id, after, limit);
  if (!all)
    return problem(all.error(), req);
  return json_reply(200, list_body("messages", *all, [](json::writer& w, const auto& m) {
                      json::raw(w, conversation::to_json(m));
                    }));
}

} // namespace

void add_message_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add("POST", "/v1/runs/{id}/messages", access::operator_,
        [c](const request& q, responder s) { post_message(*c, q, std::move(s)); });
  r.add("GET", "/v1/runs/{id}/messages", access::viewer,
        [c](const request& q, responder s) { s.send(list_messages(*c, q)); });
}

} // namespace sreh::net
