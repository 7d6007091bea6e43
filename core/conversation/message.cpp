#include "core/conversation/message.hpp"

#include <fmt/format.h>

#include "core/model/json_codecs.hpp"
#include "core/model/json_fields.hpp"

namespace sreh::conversation {

using namespace json::detail;

const char* to_string(message_kind k) {
  return k == message_kind::reply ? "reply" : "message";
}

std::optional<message_kind> parse_message_kind(std::string_view s) {
  if (s == "message")
    return message_kind::message;
  if (s == "reply")
    return message_kind::reply;
  return std::nullopt;
}

sreh::error check_text(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return {errc::invalid_argument, "text: a message needs some text"};
  if (text.size() > max_text_bytes)
    return {errc::too_large, fmt::format("text: {} bytes; a message holds at most {} bytes",
                                         text.size(), max_text_bytes)};
  return {};
}

std::string to_json(const message& m) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("id"), str(w, m.id);
  w.Key("run"), str(w, m.run_id);
  w.Key("seq"), w.Int64(m.seq);
  w.Key("author"), str(w, m.author);
  w.Key("kind"), w.String(to_string(m.kind));
  w.Key("text"), str(w, m.text);
  w.Key("at"), json::timestamp(w, m.at);
  w.Key("taken_step");
  if (m.taken_step > 0)
    w.Int64(m.taken_step);
  else
    w.Null();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

expected<message> message_from_json(std::string_view text) {
  auto doc = json::parse_object(text);
  if (!doc)
    return doc.error();
  message m;
  fields f{*doc, ""};
  f.text("id", m.id);
  f.text("run", m.run_id);
  f.integer("seq", m.seq);
  f.text("author", m.author);
  f.enumeration("kind", m.kind, parse_message_kind, std::optional<message_kind>{});
  f.text("text", m.text);
  f.time("at", m.at);
  if (const auto* t = json::member(*doc, "taken_step"); t != nullptr && t->IsInt64())
    m.taken_step = t->GetInt64();
  if (f.err())
    return f.err();
  return m;
}

} // namespace sreh::conversation
