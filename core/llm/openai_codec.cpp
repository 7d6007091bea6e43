#include "core/llm/openai_codec.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/json.hpp"
#include "core/base/text.hpp"
#include "core/llm/wire.hpp"

namespace sreh::llm::openai {

namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_message(writer& w, const message& m) {
  w.StartObject();
  w.Key("role");
  w.String(to_string(m.role));
  switch (m.role) {
  case role::user:
    w.Key("content");
    str(w, m.text);
    break;
  case role::assistant:
    w.Key("content");
    if (m.text.empty() && !m.tool_calls.empty())
      w.Null(); // "Required unless tool_calls … is specified"
    else
      str(w, m.text);
    if (!m.tool_calls.empty()) {
      w.Key("tool_calls");
      w.StartArray();
      for (auto& c : m.tool_calls) {
        w.StartObject();
        w.Key("id");
        str(w, c.id);
        w.Key("type");
        w.String("function");
        w.Key("function");
        w.StartObject();
        w.Key("name");
        str(w, c.name);
        w.Key("arguments");
        str(w, c.arguments);
        w.EndObject();
        w.EndObject();
      }
      w.EndArray();
    }
    break;
  case role::tool:
    // The format has no error flag on a tool message: an error says so in its text.
    w.Key("tool_call_id");
    str(w, m.result.tool_call_id);
    w.Key("content");
    str(w, m.result.is_error ? "error: " + m.result.content : m.result.content);
    break;
  }
  w.EndObject();
}

/// The usage object of a response or chunk; nullopt when absent or null.
std::optional<usage> usage_of(const rapidjson::Value& v) {
  auto* u = json::member(v, "usage");
  if (u == nullptr || !u->IsObject())
    return std::nullopt;
  usage out;
  out.input_tokens = json::int_of(*u, "prompt_tokens").value_or(0);
  out.output_tokens = json::int_of(*u, "completion_tokens").value_or(0);
  return out;
}

/// Tool calls as a model is known to mean them: with tool calls, a finish of `stop` (or none)
/// is `tool_calls` (some servers say `stop`); a content filter or a refusal text is `refusal`.
void settle_finish(chat_response& r) {
  r.finish = openai_finish(r.raw_finish);
  if (!r.tool_calls.empty() && (r.finish == finish_reason::stop || r.raw_finish.empty()))
    r.finish = finish_reason::tool_calls;
  if (!r.refusal.empty())
    r.finish = finish_reason::refusal;
}

} // namespace

expected<std::string> build_request(const chat_request& req, const options& opt) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  w.Key("model");
  str(w, req.model);
  w.Key("messages");
  w.StartArray();
  if (!req.system.empty()) {
    w.StartObject();
    w.Key("role");
    w.String("system");
    w.Key("content");
    str(w, req.system);
    w.EndObject();
  }
  for (auto& m : req.messages)
    write_message(w, m);
  w.EndArray();
  if (!req.tools.empty()) {
    w.Key("tools");
    w.StartArray();
    for (auto& t : req.tools) {
      auto params = json::parse(t.parameters);
      if (!params || !params->IsObject())
        return sreh::error{errc::invalid_argument,
                           "tool '" + t.name + "': parameters must be a JSON object"};
      w.StartObject();
      w.Key("type");
      w.String("function");
      w.Key("function");
      w.StartObject();
      w.Key("name");
      str(w, t.name);
      if (!t.description.empty()) {
        w.Key("description");
        str(w, t.description);
      }
      w.Key("parameters");
      params->Accept(w);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
  }
  w.Key(opt.max_completion_tokens ? "max_completion_tokens" : "max_tokens");
  w.Int64(req.max_tokens);
  if (req.temperature) {
    w.Key("temperature");
    w.Double(*req.temperature);
  }
  w.Key("stream");
  w.Bool(req.stream);
  if (req.stream) {
    w.Key("stream_options");
    w.StartObject();
    w.Key("include_usage");
    w.Bool(true);
    w.EndObject();
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
  auto* choices = json::member(*doc, "choices");
  if (choices == nullptr || !choices->IsArray() || choices->Empty()) {
    if (json::member(*doc, "error") != nullptr)
      return sreh::error{errc::unavailable, describe(error_from_json(0, *doc))};
    return sreh::error{errc::invalid_argument, "response has no choices"};
  }
  chat_response r;
  r.id = json::string_or(*doc, "id");
  r.model = json::string_or(*doc, "model");
  r.usage = usage_of(*doc);
  auto& choice = (*choices)[0];
  r.raw_finish = json::string_or(choice, "finish_reason");
  auto* msg = json::member(choice, "message");
  if (msg == nullptr || !msg->IsObject())
    return sreh::error{errc::invalid_argument, "response choice has no message"};
  r.text = json::string_or(*msg, "content");
  r.refusal = json::string_or(*msg, "refusal");
  if (auto* calls = json::member(*msg, "tool_calls"); calls != nullptr && calls->IsArray()) {
    for (auto& c : calls->GetArray()) {
      tool_call tc;
      tc.id = json::string_or(c, "id");
      if (tc.id.empty())
        tc.id = "call_" + std::to_string(r.tool_calls.size());
      const rapidjson::Value* fn = json::member(c, "function");
      if (fn == nullptr || !fn->IsObject())
        return sreh::error{errc::invalid_argument, "tool call without a function"};
      tc.name = json::string_or(*fn, "name");
      tc.arguments = wire::arguments_of(json::member(*fn, "arguments"));
      r.tool_calls.push_back(std::move(tc));
    }
  }
  settle_finish(r);
  return r;
}

} // namespace sreh::llm::openai

// -- streaming -------------------------------------------------------------------------------

namespace sreh::llm::openai {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

} // namespace

stream_assembler::partial_call& stream_assembler::slot_for(std::optional<std::int64_t> index,
                                                           const std::string& id, bool has_name) {
  partial_call* found = nullptr;
  if (index) {
    for (auto it = calls_.rbegin(); it != calls_.rend() && found == nullptr; ++it)
      if (it->index == index)
        found = &*it;
  } else if (!calls_.empty()) {
    found = &calls_.back(); // no index (some servers): a fragment continues the last call
    if (!id.empty())
      for (auto& c : calls_)
        if (c.id == id)
          found = &c;
  }
  if (found != nullptr) {
    bool other_id = !id.empty() && !found->id.empty() && id != found->id;
    bool same_id = !id.empty() && id == found->id;
    // A second name under the same index (Ollama sent index 0 for every parallel call, each
    // whole) starts a new call unless the id says it is the same one.
    bool renamed = has_name && !found->name.empty() && !same_id;
    if (!other_id && !renamed)
      return *found;
  }
  calls_.push_back({index, {}, {}, {}});
  return calls_.back();
}

sreh::error stream_assembler::feed(std::string_view data) {
  data = trim(data);
  if (data.empty())
    return {};
  if (data == "[DONE]") {
    done_ = true;
    return {};
  }
  auto doc = json::parse(data, 64);
  if (!doc)
    return {errc::invalid_argument, "stream chunk is not JSON: " + doc.error().message};
  if (!doc->IsObject())
    return {errc::invalid_argument, "stream chunk is not a JSON object"};
  auto* choices = json::member(*doc, "choices");
  if (json::member(*doc, "error") != nullptr && choices == nullptr)
    return fail(error_from_json(0, *doc));
  if (resp_.id.empty())
    resp_.id = json::string_or(*doc, "id");
  if (resp_.model.empty())
    resp_.model = json::string_or(*doc, "model");
  if (auto u = usage_of(*doc))
    resp_.usage = u;
  if (choices == nullptr || !choices->IsArray())
    return {};
  for (auto& choice : choices->GetArray()) {
    if (json::int_of(choice, "index").value_or(0) != 0)
      continue; // only the first choice is the answer
    if (auto* delta = json::member(choice, "delta"); delta != nullptr && delta->IsObject()) {
      if (auto text = json::string_or(*delta, "content"); !text.empty()) {
        resp_.text += text;
        fresh_text_ += text;
      }
      resp_.refusal += json::string_or(*delta, "refusal");
      auto* calls = json::member(*delta, "tool_calls");
      if (calls != nullptr && calls->IsArray())
        for (auto& c : calls->GetArray()) {
          auto id = json::string_or(c, "id");
          const rapidjson::Value* fn = json::member(c, "function");
          std::string name = fn != nullptr ? json::string_or(*fn, "name") : std::string{};
          auto& slot = slot_for(json::int_of(c, "index"), id, !name.empty());
          if (slot.id.empty())
            slot.id = id;
          if (slot.name.empty())
            slot.name = name;
          if (auto* args = fn != nullptr ? json::member(*fn, "arguments") : nullptr) {
            if (args->IsString())
              slot.arguments.append(args->GetString(), args->GetStringLength());
            else if (!args->IsNull())
              slot.arguments = json::stringify(*args); // sent whole as an object
          }
        }
    }
    if (auto raw = json::string_or(choice, "finish_reason"); !raw.empty()) {
      resp_.raw_finish = raw;
      finish_seen_ = true;
    }
  }
  return {};
}

sreh::error stream_assembler::feed_error(std::string_view payload) {
  auto doc = json::parse(trim(payload), 32);
  if (doc && doc->IsObject())
    return fail(error_from_json(0, *doc));
  api_error e;
  e.message = std::string{utf8_prefix(trim(payload), 300)};
  return fail(std::move(e));
}

expected<chat_response> stream_assembler::finish() const {
  if (auto err = incomplete(finish_seen_))
    return err;
  chat_response r = resp_;
  for (auto& c : calls_) {
    tool_call tc;
    tc.id = c.id.empty() ? "call_" + std::to_string(r.tool_calls.size()) : c.id;
    tc.name = c.name;
    tc.arguments = c.arguments.empty() ? std::string{"{}"} : c.arguments;
    r.tool_calls.push_back(std::move(tc));
  }
  settle_finish(r);
  return r;
}

} // namespace sreh::llm::openai
