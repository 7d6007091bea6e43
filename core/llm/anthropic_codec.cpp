#include "core/llm/anthropic_codec.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/json.hpp"
#include "core/llm/wire.hpp"

namespace sreh::llm::anthropic {

namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

/// One API turn: the messages of one role that follow each other.
struct turn {
  bool assistant = false;
  std::vector<const message*> parts;
};

std::vector<turn> turns_of(const std::vector<message>& messages) {
  std::vector<turn> out;
  for (auto& m : messages) {
    bool assistant = m.role == role::assistant;
    if (assistant && m.text.empty() && m.tool_calls.empty())
      continue; // an empty assistant turn is not allowed
    if (m.role == role::user && m.text.empty())
      continue;
    if (out.empty() || out.back().assistant != assistant)
      out.push_back({assistant, {}});
    out.back().parts.push_back(&m);
  }
  return out;
}

void write_text_block(writer& w, std::string_view text) {
  w.StartObject();
  w.Key("type");
  w.String("text");
  w.Key("text");
  str(w, text);
  w.EndObject();
}

void write_tool_use(writer& w, const tool_call& c) {
  w.StartObject();
  w.Key("type");
  w.String("tool_use");
  w.Key("id");
  str(w, c.id);
  w.Key("name");
  str(w, c.name);
  w.Key("input");
  auto input = json::parse(c.arguments);
  if (input && input->IsObject()) {
    input->Accept(w);
  } else {
    w.StartObject();
    w.Key("arguments_text");
    str(w, c.arguments);
    w.EndObject();
  }
  w.EndObject();
}

void write_turn(writer& w, const turn& t) {
  w.StartObject();
  w.Key("role");
  w.String(t.assistant ? "assistant" : "user");
  w.Key("content");
  if (!t.assistant && t.parts.size() == 1 && t.parts[0]->role == role::user) {
    str(w, t.parts[0]->text);
    w.EndObject();
    return;
  }
  w.StartArray();
  for (auto* m : t.parts) {
    if (m->role == role::tool) {
      w.StartObject();
      w.Key("type");
      w.String("tool_result");
      w.Key("tool_use_id");
      str(w, m->result.tool_call_id);
      w.Key("content");
      str(w, m->result.content);
      if (m->result.is_error) {
        w.Key("is_error");
        w.Bool(true);
      }
      w.EndObject();
      continue;
    }
    if (!m->text.empty())
      write_text_block(w, m->text);
    for (auto& c : m->tool_calls)
      write_tool_use(w, c);
  }
  w.EndArray();
  w.EndObject();
}

std::int64_t input_tokens_of(const rapidjson::Value& u) {
  // "Total input tokens in a request is the summation of input_tokens,
  // cache_creation_input_tokens, and cache_read_input_tokens." (usage.py)
  return json::int_of(u, "input_tokens").value_or(0) +
         json::int_of(u, "cache_creation_input_tokens").value_or(0) +
         json::int_of(u, "cache_read_input_tokens").value_or(0);
}

} // namespace

expected<std::string> build_request(const chat_request& req) {
  if (req.max_tokens < 1)
    return sreh::error{errc::invalid_argument, "max_tokens must be at least 1"};
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  w.Key("model");
  str(w, req.model);
  w.Key("max_tokens");
  w.Int64(req.max_tokens);
  if (!req.system.empty()) {
    w.Key("system");
    str(w, req.system);
  }
  w.Key("messages");
  w.StartArray();
  for (auto& t : turns_of(req.messages))
    write_turn(w, t);
  w.EndArray();
  if (!req.tools.empty()) {
    w.Key("tools");
    w.StartArray();
    for (auto& t : req.tools) {
      auto schema = json::parse(t.parameters);
      if (!schema || !schema->IsObject())
        return sreh::error{errc::invalid_argument,
                           "tool '" + t.name + "': parameters must be a JSON object"};
      w.StartObject();
      w.Key("name");
      str(w, t.name);
      if (!t.description.empty()) {
        w.Key("description");
        str(w, t.description);
      }
      w.Key("input_schema");
      schema->Accept(w);
      w.EndObject();
    }
    w.EndArray();
  }
  if (req.temperature) {
    w.Key("temperature");
    w.Double(*req.temperature);
  }
  if (req.stream) {
    w.Key("stream");
    w.Bool(true);
  }
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()};
}

expected<chat_response> parse_response(std::string_view body) {
  auto doc = json::parse(body, 64);
  if (!doc)
    return sreh::error{errc::invalid_argument, "response is not JSON: " + doc.error().message};
  if (!doc->IsObject())
    return sreh::error{errc::invalid_argument, "response is not a JSON object"};
  if (json::string_or(*doc, "type") == "error")
    return sreh::error{errc::unavailable, describe(error_from_json(0, *doc))};
  auto* content = json::member(*doc, "content");
  if (content == nullptr || !content->IsArray())
    return sreh::error{errc::invalid_argument, "response has no content array"};
  chat_response r;
  r.id = json::string_or(*doc, "id");
  r.model = json::string_or(*doc, "model");
  r.raw_finish = json::string_or(*doc, "stop_reason");
  r.finish = anthropic_finish(r.raw_finish);
  if (auto* u = json::member(*doc, "usage"); u != nullptr && u->IsObject())
    r.usage = usage{input_tokens_of(*u), json::int_of(*u, "output_tokens").value_or(0)};
  for (auto& b : content->GetArray()) {
    auto type = json::string_or(b, "type");
    if (type == "text") {
      r.text += json::string_or(b, "text");
    } else if (type == "tool_use") {
      tool_call c;
      c.id = json::string_or(b, "id");
      c.name = json::string_or(b, "name");
      c.arguments = wire::arguments_of(json::member(b, "input"));
      r.tool_calls.push_back(std::move(c));
    } // thinking, server tool blocks…: not ours to act on
  }
  return r;
}

// -- streaming -------------------------------------------------------------------------------

stream_assembler::block* stream_assembler::find(std::int64_t index) {
  for (auto& b : blocks_)
    if (b.index == index)
      return &b;
  return nullptr;
}

sreh::error stream_assembler::feed(std::string_view data) {
  if (data.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return {};
  auto doc = json::parse(data, 64);
  if (!doc)
    return {errc::invalid_argument, "stream event is not JSON: " + doc.error().message};
  if (!doc->IsObject())
    return {errc::invalid_argument, "stream event is not a JSON object"};
  auto type = json::string_or(*doc, "type");
  auto index = json::int_of(*doc, "index").value_or(0);
  if (type == "message_start") {
    if (auto* m = json::member(*doc, "message")) {
      resp_.id = json::string_or(*m, "id");
      resp_.model = json::string_or(*m, "model");
      if (auto* u = json::member(*m, "usage"); u != nullptr && u->IsObject())
        resp_.usage = usage{input_tokens_of(*u), json::int_of(*u, "output_tokens").value_or(0)};
    }
  } else if (type == "content_block_start") {
    block b;
    b.index = index;
    if (auto* cb = json::member(*doc, "content_block")) {
      auto kind = json::string_or(*cb, "type");
      if (kind == "text") {
        b.kind = block::text_block;
        b.text = json::string_or(*cb, "text");
        fresh_text_ += b.text;
      } else if (kind == "tool_use") {
        b.kind = block::tool_use_block;
        b.id = json::string_or(*cb, "id");
        b.name = json::string_or(*cb, "name");
        if (auto* in = json::member(*cb, "input"); in != nullptr && in->IsObject())
          b.initial_input = json::stringify(*in);
      }
    }
    if (auto* old = find(index))
      *old = std::move(b);
    else
      blocks_.push_back(std::move(b));
  } else if (type == "content_block_delta") {
    auto* b = find(index);
    auto* delta = json::member(*doc, "delta");
    if (b == nullptr || delta == nullptr)
      return {};
    auto kind = json::string_or(*delta, "type");
    if (kind == "text_delta" && b->kind == block::text_block) {
      auto t = json::string_or(*delta, "text");
      b->text += t;
      fresh_text_ += t;
    } else if (kind == "input_json_delta" && b->kind == block::tool_use_block) {
      b->json += json::string_or(*delta, "partial_json");
    }
  } else if (type == "message_delta") {
    if (auto* d = json::member(*doc, "delta"))
      if (auto raw = json::string_or(*d, "stop_reason"); !raw.empty()) {
        resp_.raw_finish = raw;
        stop_seen_ = true;
      }
    // The counts are cumulative (message_delta_usage.py): they replace the start's.
    if (auto* u = json::member(*doc, "usage"); u != nullptr && u->IsObject()) {
      usage now = resp_.usage.value_or(usage{});
      if (auto out = json::int_of(*u, "output_tokens"))
        now.output_tokens = *out;
      if (json::member(*u, "input_tokens") != nullptr)
        now.input_tokens = input_tokens_of(*u);
      resp_.usage = now;
    }
  } else if (type == "message_stop") {
    done_ = true;
  } else if (type == "error") {
    return fail(error_from_json(0, *doc));
  } // ping, content_block_stop and event types to come: nothing to keep
  return {};
}

expected<chat_response> stream_assembler::finish() const {
  if (auto err = incomplete(stop_seen_))
    return err;
  chat_response r = resp_;
  r.finish = anthropic_finish(r.raw_finish);
  for (auto& b : blocks_) {
    if (b.kind == block::text_block)
      r.text += b.text;
    else if (b.kind == block::tool_use_block)
      r.tool_calls.push_back({b.id, b.name,
                              !b.json.empty()            ? b.json
                              : !b.initial_input.empty() ? b.initial_input
                                                         : std::string{"{}"}});
  }
  return r;
}

} // namespace sreh::llm::anthropic
