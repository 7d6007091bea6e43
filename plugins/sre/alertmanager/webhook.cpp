#include "plugins/sre/alertmanager/webhook.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/base/json.hpp"

namespace sreh::plugins::alertmanager {

namespace {

struct bad_payload {
  std::string what;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw bad_payload{path + ": " + what};
}

const rapidjson::Value* member(const rapidjson::Value& o, const char* name, const std::string& path,
                               bool required) {
  auto it = o.FindMember(name);
  if (it == o.MemberEnd() || (it->value.IsNull() && !required)) {
    if (required)
      fail(path.empty() ? name : path + "." + name, "required");
    return nullptr;
  }
  return &it->value;
}

std::string text(const rapidjson::Value& o, const char* name, const std::string& path,
                 bool required) {
  const auto* v = member(o, name, path, required);
  if (v == nullptr)
    return {};
  if (!v->IsString())
    fail(path.empty() ? name : path + "." + name,
         std::string{"expected a string, got "} + json::type_of(*v));
  return {v->GetString(), v->GetStringLength()};
}

label_set labels(const rapidjson::Value& o, const char* name, const std::string& path) {
  label_set out;
  const auto* v = member(o, name, path, false);
  if (v == nullptr)
    return out;
  const auto where = path.empty() ? std::string{name} : path + "." + name;
  if (!v->IsObject())
    fail(where, std::string{"expected an object, got "} + json::type_of(*v));
  for (const auto& m : v->GetObject()) {
    std::string key{m.name.GetString(), m.name.GetStringLength()};
    if (!m.value.IsString())
      fail(where + "." + key, std::string{"expected a string, got "} + json::type_of(m.value));
    out.emplace(std::move(key), std::string{m.value.GetString(), m.value.GetStringLength()});
  }
  return out;
}

std::string status(const rapidjson::Value& o, const std::string& path) {
  auto s = text(o, "status", path, true);
  if (s != "firing" && s != "resolved")
    fail(path.empty() ? "status" : path + ".status",
         "expected firing or resolved, got '" + s + "'");
  return s;
}

/// RFC 3339 with any fraction and offset, as Go writes time.Time; Go's zero time is 0.
timestamp_us time_of(const rapidjson::Value& o, const char* name, const std::string& path) {
  auto s = text(o, name, path, false);
  if (s.empty() || s.rfind("0001-01-01T", 0) == 0)
    return 0;
  // Normalise to what parse_rfc3339 reads: YYYY-MM-DDTHH:MM:SS[.ffffff]Z.
  auto t = s;
  int offset_s = 0;
  if (!t.empty() && (t.back() == 'Z' || t.back() == 'z')) {
    t.pop_back();
  } else if (t.size() > 6 && (t[t.size() - 6] == '+' || t[t.size() - 6] == '-') &&
             t[t.size() - 3] == ':') {
    int hh = 0, mm = 0;
    std::from_chars(t.data() + t.size() - 5, t.data() + t.size() - 3, hh);
    std::from_chars(t.data() + t.size() - 2, t.data() + t.size(), mm);
    offset_s = (t[t.size() - 6] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    t.resize(t.size() - 6);
  } else {
    fail(path + "." + name, "expected an RFC 3339 time, got '" + s + "'");
  }
  if (auto dot = t.find('.'); dot != std::string::npos) {
    auto frac = t.substr(dot + 1);
    frac.resize(6, '0'); // microseconds: cut nanoseconds, pad milliseconds
    t = t.substr(0, dot) + "." + frac;
  }
  auto us = parse_rfc3339(t + "Z");
  if (!us)
    fail(path + "." + name, "expected an RFC 3339 time, got '" + s + "'");
  return *us - static_cast<timestamp_us>(offset_s) * 1'000'000;
}

} // namespace

expected<notification> parse_webhook(std::string_view body, std::int64_t max_alerts,
                                     int max_depth) {
  auto doc = json::parse_object(body, max_depth);
  if (!doc)
    return doc.error();
  notification n;
  try {
    const auto& d = *doc;
    n.version = text(d, "version", "", true);
    if (n.version != "4")
      fail("version", "expected \"4\" (the webhook format of Alertmanager 0.16 and later), got '" +
                        n.version + "'");
    n.group_key = text(d, "groupKey", "", true);
    if (const auto* t = member(d, "truncatedAlerts", "", false)) {
      if (!t->IsInt64() || t->GetInt64() < 0)
        fail("truncatedAlerts", "expected a count");
      n.truncated = t->GetInt64();
    }
    n.status = status(d, "");
    n.receiver = text(d, "receiver", "", false);
    n.group_labels = labels(d, "groupLabels", "");
    n.common_labels = labels(d, "commonLabels", "");
    n.common_annotations = labels(d, "commonAnnotations", "");
    n.external_url = text(d, "externalURL", "", false);
    const auto* list = member(d, "alerts", "", true);
    if (!list->IsArray())
      fail("alerts", std::string{"expected an array, got "} + json::type_of(*list));
    if (list->Empty())
      fail("alerts", "empty (a notification names at least one alert)");
    if (static_cast<std::int64_t>(list->Size()) > max_alerts)
      return sreh::error{errc::too_large,
                         fmt::format("alerts: {} alerts, more than the {} of "
                                     "alertmanager.receiver.max_alerts (set max_alerts in the "
                                     "Alertmanager's webhook_config)",
                                     list->Size(), max_alerts)};
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const auto& a = (*list)[i];
      const auto path = fmt::format("alerts[{}]", i);
      if (!a.IsObject())
        fail(path, std::string{"expected an object, got "} + json::type_of(a));
      alert x;
      x.status = status(a, path);
      x.labels = labels(a, "labels", path);
      x.annotations = labels(a, "annotations", path);
      x.starts_at = time_of(a, "startsAt", path);
      x.ends_at = time_of(a, "endsAt", path);
      x.generator_url = text(a, "generatorURL", path, false);
      x.fingerprint = text(a, "fingerprint", path, true);
      if (x.fingerprint.empty())
        fail(path + ".fingerprint", "must not be empty");
      n.alerts.push_back(std::move(x));
    }
  } catch (const bad_payload& e) {
    return sreh::error{errc::invalid_argument, e.what};
  }
  return n;
}

std::string work_fields(const notification& n, const works::work_template& t, const settings& cfg) {
  const alert* first = &n.alerts.front();
  for (const auto& a : n.alerts)
    if (a.status == "firing") {
      first = &a;
      break;
    }
  auto find = [&](const std::string& name) -> const std::string* {
    for (const auto* set : {&n.common_labels, &n.group_labels, &n.common_annotations,
                            &first->labels, &first->annotations})
      if (auto it = set->find(name); it != set->end() && !it->second.empty())
        return &it->second;
    return nullptr;
  };
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  for (const auto& f : t.fields) {
    const std::string* v = nullptr;
    if (auto m = cfg.fields.find(f.name); m != cfg.fields.end()) {
      v = find(m->second);
    } else {
      v = find(f.name);
      if (v == nullptr && f.name == "alert")
        v = find("alertname");
      if (v == nullptr && f.name == "summary")
        for (const char* k : {"summary", "description", "message", "alertname"})
          if ((v = find(k)) != nullptr)
            break;
    }
    if (v == nullptr)
      continue;
    std::string value = *v;
    using works::field_type;
    switch (f.type) {
    case field_type::string:
      w.Key(f.name.c_str()),
        w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
      break;
    case field_type::choice: {
      auto listed = [&](const std::string& c) {
        return std::find(f.choices.begin(), f.choices.end(), c) != f.choices.end();
      };
      if (!listed(value))
        if (auto s = cfg.severity.find(value); s != cfg.severity.end())
          value = s->second;
      if (listed(value))
        w.Key(f.name.c_str()),
          w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
      break;
    }
    case field_type::integer:
    case field_type::number:
    case field_type::boolean: {
      // Only what the field's type reads; the rest is left to the template's default.
      auto doc = json::parse(value);
      if (doc && ((f.type == field_type::boolean && doc->IsBool()) ||
                  (f.type == field_type::integer && doc->IsInt64()) ||
                  (f.type == field_type::number && doc->IsNumber())))
        w.Key(f.name.c_str()), w.RawValue(value.c_str(), value.size(), rapidjson::kNumberType);
      break;
    }
    }
  }
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::string alert_statuses(const notification& n) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("alerts");
  w.StartObject();
  for (const auto& a : n.alerts) {
    w.Key(a.fingerprint.c_str(), static_cast<rapidjson::SizeType>(a.fingerprint.size()));
    w.String(a.status.c_str(), static_cast<rapidjson::SizeType>(a.status.size()));
  }
  w.EndObject();
  w.Key("truncated");
  w.Int64(n.truncated);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace sreh::plugins::alertmanager
