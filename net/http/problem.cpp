#include "net/http/problem.hpp"

#include "core/base/json.hpp"

namespace sreh::net {

int http_status(errc c) {
  switch (c) {
  case errc::ok:
    return 200;
  case errc::invalid_argument:
    return 400;
  case errc::not_found:
    return 404;
  case errc::conflict:
    return 409;
  case errc::too_large:
    return 413;
  case errc::unavailable:
    return 503;
  case errc::internal:
    return 500;
  case errc::deadline:
    return 504;
  case errc::unauthorized:
    return 401;
  case errc::forbidden:
    return 403;
  case errc::too_many:
    return 429;
  }
  return 500;
}

namespace {

/// The problem type's slug: the error code's name with dashes ("not-found"); "" for ok.
std::string slug_of(errc c) {
  if (c == errc::ok)
    return {};
  std::string s = to_string(c);
  for (auto& ch : s)
    if (ch == '_')
      ch = '-';
  return s;
}

} // namespace

std::string problem_type(errc c) {
  auto slug = slug_of(c);
  return slug.empty() ? std::string("about:blank")
                      : "https://sreh.dev/problems/" + std::string(slug);
}

std::string_view reason_phrase(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 201:
    return "Created";
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 409:
    return "Conflict";
  case 413:
    return "Content Too Large";
  case 415:
    return "Unsupported Media Type";
  case 422:
    return "Unprocessable Content";
  case 429:
    return "Too Many Requests";
  case 431:
    return "Request Header Fields Too Large";
  case 500:
    return "Internal Server Error";
  case 503:
    return "Service Unavailable";
  case 504:
    return "Gateway Timeout";
  default:
    return status < 500 ? "Client Error" : "Server Error";
  }
}

reply make_problem(int status, std::string_view slug, std::string_view title,
                   std::string_view detail, std::string_view instance,
                   std::string_view request_id) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("type");
  if (slug.empty()) {
    w.String("about:blank");
  } else {
    auto type = "https://sreh.dev/problems/" + std::string(slug);
    w.String(type.data(), static_cast<rapidjson::SizeType>(type.size()));
  }
  auto str = [&w](const char* key, std::string_view v) {
    w.Key(key);
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  str("title", title.empty() ? reason_phrase(status) : title);
  w.Key("status");
  w.Int(status);
  str("detail", detail);
  str("instance", instance);
  str("request_id", request_id);
  w.EndObject();
  reply r;
  r.status = status;
  r.content_type = "application/problem+json";
  r.body.assign(buf.GetString(), buf.GetSize());
  // Every 503 is temporary (store away, overload, shutting down): clients and Alertmanager
  // back off and retry.
  if (status == 503)
    r.headers.emplace_back("Retry-After", "1");
  return r;
}

reply problem(const sreh::error& e, const request& req) {
  auto status = http_status(e.code);
  return make_problem(status, slug_of(e.code), reason_phrase(status), e.message, req.path,
                      req.request_id);
}

reply problem(int status, std::string_view slug, std::string_view detail, const request& req) {
  return make_problem(status, slug, reason_phrase(status), detail, req.path, req.request_id);
}

} // namespace sreh::net
