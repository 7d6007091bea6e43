#include "persistence/store/approval_codec.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <climits>

#include "core/base/json.hpp"

namespace sreh::persistence {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(json_writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

bool read_string_member(const rapidjson::Value& o, const char* name, std::string& out) {
  auto m = o.FindMember(name);
  if (m == o.MemberEnd() || !m->value.IsString())
    return false;
  out.assign(m->value.GetString(), m->value.GetStringLength());
  return true;
}

} // namespace

std::string strings_json(const std::vector<std::string>& xs) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartArray();
  for (const auto& x : xs)
    write_string(w, x);
  w.EndArray();
  return {buf.GetString(), buf.GetSize()};
}

std::string votes_json(const std::vector<approval_vote>& votes) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartArray();
  for (const auto& v : votes) {
    w.StartObject();
    w.Key("by"), write_string(w, v.by);
    w.Key("role"), write_string(w, v.role);
    w.Key("approve"), w.Bool(v.approve);
    w.Key("comment"), write_string(w, v.comment);
    w.Key("at"), w.Int64(v.at);
    w.EndObject();
  }
  w.EndArray();
  return {buf.GetString(), buf.GetSize()};
}

bool read_strings(std::string_view text, std::vector<std::string>& out) {
  auto doc = json::parse(text);
  if (!doc || !doc->IsArray())
    return false;
  out.clear();
  for (const auto& x : doc->GetArray()) {
    if (!x.IsString())
      return false;
    out.emplace_back(x.GetString(), x.GetStringLength());
  }
  return true;
}

bool read_votes(std::string_view text, std::vector<approval_vote>& out) {
  auto doc = json::parse(text);
  if (!doc || !doc->IsArray())
    return false;
  out.clear();
  for (const auto& x : doc->GetArray()) {
    if (!x.IsObject())
      return false;
    approval_vote v;
    auto approve = x.FindMember("approve");
    auto at = x.FindMember("at");
    if (!read_string_member(x, "by", v.by) || !read_string_member(x, "role", v.role) ||
        !read_string_member(x, "comment", v.comment) || approve == x.MemberEnd() ||
        !approve->value.IsBool() || at == x.MemberEnd() || !at->value.IsInt64())
      return false;
    v.approve = approve->value.GetBool();
    v.at = at->value.GetInt64();
    out.push_back(std::move(v));
  }
  return true;
}

int needed_rank(const std::vector<std::string>& roles) {
  int needed = INT_MAX;
  for (const auto& r : roles)
    if (const int rank = role_rank(r); rank > 0)
      needed = std::min(needed, rank);
  return needed == INT_MAX ? role_rank("approver") : needed;
}

} // namespace sreh::persistence
