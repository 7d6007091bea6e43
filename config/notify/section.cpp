#include "config/notify/section.hpp"

#include <fmt/format.h>

#include <regex>

#include "core/base/http_url.hpp"
#include "core/notify/settings.hpp"

namespace sreh::config {

namespace {

using notify::receiver;
using notify::receiver_kind;
using notify::route;
using yaml::entry;
using yaml::reader;

std::string read_url(reader& r, const entry& e) {
  auto url = r.non_empty_string(e);
  if (auto u = parse_client_url(url); !u)
    r.fail(e, u.error().message);
  return url;
}

/// `smtp: host:port` (port 587 when none).
void read_smtp(reader& r, const entry& e, receiver& out) {
  auto s = r.non_empty_string(e);
  auto u = parse_http_url("http://" + s, false, true);
  if (!u || !u->path.empty())
    r.fail(e, "expected host[:port]");
  out.smtp_host = u->host;
  out.smtp_port = s.find(':') == std::string::npos ? 587 : u->port;
}

void read_email(reader& r, const entry& e, receiver& out) {
  bool smtp = false;
  for (const auto& x : r.entries(
         e, {"smtp", "from", "to", "starttls", "username", "password", "ca_file", "timeout_ms"})) {
    if (x.key == "smtp") {
      read_smtp(r, x, out);
      smtp = true;
    } else if (x.key == "from") {
      out.from = r.non_empty_string(x);
    } else if (x.key == "to") {
      for (const auto& t : r.non_empty_items(x))
        out.to.push_back(r.non_empty_string(t));
    } else if (x.key == "starttls") {
      out.starttls = r.one_of(x, {"required", "opportunistic", "off"});
    } else if (x.key == "username") {
      out.username = r.string(x);
    } else if (x.key == "password") {
      out.password = r.string(x);
    } else if (x.key == "ca_file") {
      out.ca_file = r.non_empty_string(x);
    } else {
      out.timeout_ms = r.integer(x, 1, 600'000);
    }
  }
  if (!smtp || out.from.empty() || out.to.empty())
    r.fail(e, "an email receiver needs smtp, from and to");
}

/// The body of `webhook:`, `slack:` or `pagerduty:`.
void read_http_receiver(reader& r, const entry& e, receiver& out) {
  std::vector<std::string_view> keys{"url", "ca_file", "timeout_ms"};
  if (out.kind == receiver_kind::webhook)
    keys.push_back("secret");
  else if (out.kind == receiver_kind::pagerduty)
    keys.push_back("routing_key");
  for (const auto& x : r.entries(e, keys)) {
    if (x.key == "url")
      out.url = read_url(r, x);
    else if (x.key == "secret")
      out.secret = r.string(x);
    else if (x.key == "routing_key")
      out.routing_key = r.non_empty_string(x);
    else if (x.key == "ca_file")
      out.ca_file = r.non_empty_string(x);
    else
      out.timeout_ms = r.integer(x, 1, 600'000);
  }
  if (out.url.empty())
    r.fail(e, "needs a url");
  if (out.kind == receiver_kind::pagerduty && out.routing_key.empty())
    r.fail(e, "a pagerduty receiver needs a routing_key");
}

receiver read_receiver(reader& r, const entry& e) {
  receiver out;
  bool kind = false;
  for (const auto& x : r.entries(e, {"name", "webhook", "slack", "pagerduty", "email"})) {
    if (x.key == "name") {
      out.name = r.non_empty_string(x);
      continue;
    }
    if (kind)
      r.fail(x, "a receiver has one of webhook, slack, pagerduty or email");
    kind = true;
    if (x.key == "email") {
      out.kind = receiver_kind::email;
      read_email(r, x, out);
      continue;
    }
    out.kind = x.key == "webhook" ? receiver_kind::webhook
               : x.key == "slack" ? receiver_kind::slack
                                  : receiver_kind::pagerduty;
    read_http_receiver(r, x, out);
  }
  if (out.name.empty() || !kind)
    r.fail(e, "a receiver needs a name and one of webhook, slack, pagerduty or email");
  return out;
}

void read_matchers(reader& r, const entry& e, bool regex,
                   std::map<std::string, std::string, std::less<>>& out) {
  for (const auto& p : r.pairs(e)) {
    auto v = r.string(p);
    if (regex) {
      try {
        std::regex re{v, std::regex::ECMAScript};
      } catch (const std::regex_error& err) {
        r.fail(p, fmt::format("not a regular expression: {}", err.what()));
      }
    }
    out[p.key] = std::move(v);
  }
}

route read_route(reader& r, const entry& e, int depth) {
  if (depth > 16)
    r.fail(e, "routes nest deeper than 16 levels");
  route out;
  for (const auto& x : r.entries(e, {"match", "match_re", "receiver", "continue", "group_by",
                                     "repeat_interval", "routes"})) {
    if (x.key == "match" || x.key == "match_re") {
      read_matchers(r, x, x.key == "match_re", x.key == "match" ? out.match : out.match_re);
    } else if (x.key == "receiver") {
      out.receiver = r.non_empty_string(x);
    } else if (x.key == "continue") {
      out.continue_ = r.boolean(x);
    } else if (x.key == "group_by") {
      for (const auto& g : r.items(x))
        out.group_by.push_back(r.non_empty_string(g));
    } else if (x.key == "repeat_interval") {
      out.repeat_interval_s = r.duration_s(x);
    } else {
      for (const auto& c : r.items(x))
        out.routes.push_back(read_route(r, c, depth + 1));
    }
  }
  return out;
}

const int_field<notify::settings> int_fields[] = {
  {"max_attempts", &notify::settings::max_attempts, 1, 1'000},
  {"min_backoff_ms", &notify::settings::min_backoff_ms, 1, 3'600'000},
  {"max_backoff_ms", &notify::settings::max_backoff_ms, 1, 86'400'000},
  {"poll_ms", &notify::settings::poll_ms, 10, 600'000},
};

notify::settings read_settings(reader& r, const entry& section, const section_context&) {
  notify::settings out;
  for (const auto& e : r.entries(section, {"receivers", "routes", "link_base", "max_attempts",
                                           "min_backoff_ms", "max_backoff_ms", "poll_ms"})) {
    if (e.key == "receivers") {
      for (const auto& x : r.items(e)) {
        auto rc = read_receiver(r, x);
        if (out.find(rc.name) != nullptr)
          r.fail(x, fmt::format("a second receiver named '{}'", rc.name));
        out.receivers.push_back(std::move(rc));
      }
    } else if (e.key == "routes") {
      for (const auto& x : r.items(e))
        out.routes.push_back(read_route(r, x, 0));
    } else if (e.key == "link_base") {
      out.link_base = read_url(r, e);
      while (out.link_base.ends_with('/'))
        out.link_base.pop_back();
    } else {
      read_int_field(r, e, int_fields, out);
    }
  }
  if (out.min_backoff_ms > out.max_backoff_ms)
    r.fail(section, "min_backoff_ms is more than max_backoff_ms");
  return out;
}

sreh::error check_routes(const std::vector<route>& routes, const notify::settings& s,
                         const std::string& path) {
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const auto at = fmt::format("{}[{}]", path, i);
    const auto& rt = routes[i];
    if (!rt.receiver.empty() && s.find(rt.receiver) == nullptr)
      return field_error(at + ".receiver",
                         fmt::format("no receiver '{}' in notify.receivers", rt.receiver));
    if (auto err = check_routes(rt.routes, s, at + ".routes"))
      return err;
  }
  return {};
}

sreh::error check_settings(const notify::settings& s, const node_config&) {
  return check_routes(s.routes, s, "notify.routes");
}

} // namespace

void register_notify_section(section_registry& r) {
  r.add<notify::settings>(read_settings, check_settings);
}

} // namespace sreh::config
