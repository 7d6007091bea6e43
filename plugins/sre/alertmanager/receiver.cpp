// POST /v1/alerts/alertmanager: Alertmanager's webhook receiver (docs/alertmanager.md). A
// firing group opens one incident Work (or updates the one it opened), a resolved alert
// annotates it; the answer is 2xx only once the Work and its alert statuses are committed, 5xx
// (which Alertmanager retries) when the store is away, 4xx (which it drops) for a payload or a
// mapping that can never succeed.

#include <fmt/format.h>

#include "core/base/failpoint.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/logger.hpp"
#include "net/http/auth.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"
#include "plugins/register.hpp"
#include "plugins/sre/alertmanager/webhook.hpp"

namespace sreh::plugins {

namespace {

using alertmanager::notification;

const alertmanager::settings& settings_of(const net::server_context& ctx) {
  return ctx.cfg.section<alertmanager::settings>();
}

const works::work_template* receiver_template(const net::server_context& ctx) {
  for (const auto& t : ctx.cfg.works.loaded)
    if (t.name == settings_of(ctx).receiver_template)
      return &t;
  return nullptr;
}

std::string answer(const works::work& w, bool created, const char* what) {
  auto work = json::object("id", w.id, "state", works::to_string(w.state), "title", w.title);
  return json::object("work", json::raw_text{work}, "created", created, "did", what);
}

/// Merges the notification's alert statuses into Work `id`, then answers.
void annotate(net::server_context* c, const net::request& req, net::responder res,
              const std::string& id, const std::string& statuses, bool created) {
  c->works->command(id, works::work_command::alerts, "alertmanager", statuses,
                    [req, res, created](actors::work_reply r) {
                      res.post([req, res, created, r = std::move(r)] {
                        if (r.err)
                          return res.send(net::problem(r.err, req));
                        // Crash tests: everything committed, nothing answered yet.
                        failpoint("alertmanager_committed", 1);
                        res.send(
                          net::json_reply(created ? 201 : 200,
                                          answer(r.w, created, created ? "opened" : "updated")));
                      });
                    });
}

void receive(net::server_context& ctx, const net::request& req, net::responder res) {
  const auto* t = receiver_template(ctx);
  if (ctx.works == nullptr || t == nullptr)
    return res.send(net::problem(503, "unavailable", "this node runs no Works control plane", req));
  auto n = alertmanager::parse_webhook(req.body, settings_of(ctx).max_alerts,
                                       static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!n) {
    logger("alertmanager")
      ->warn("alertmanager webhook refused (request {}): {}", req.request_id, n.error().message);
    return res.send(net::problem(n.error(), req));
  }
  const auto group =
    net::sha256_hex(fmt::format("{}\n{}", n->receiver, n->group_key)).substr(0, 32);
  const auto statuses = alertmanager::alert_statuses(*n);
  // The group's newest Work: an open one takes the notification.
  persistence::work_filter f;
  f.label_key = "alert_group";
  f.label_value = group;
  f.limit = 1;
  auto page = ctx.store.list_works(f);
  if (!page)
    return res.send(net::problem(page.error(), req));
  const works::work* newest = page->works.empty() ? nullptr : &page->works.front();
  if (newest != nullptr && !works::is_closed(newest->state))
    return annotate(&ctx, req, res, newest->id, statuses, false);
  bool firing = false;
  timestamp_us first = 0;
  for (const auto& a : n->alerts)
    if (a.status == "firing") {
      firing = true;
      if (a.starts_at != 0 && (first == 0 || a.starts_at < first))
        first = a.starts_at;
    }
  if (!firing) {
    if (newest != nullptr) // resolved alerts of a closed Work: recorded on it
      return annotate(&ctx, req, res, newest->id, statuses, false);
    return res.send(
      net::json_reply(200, json::object("work", nullptr, "created", false, "did",
                                        "nothing: no Work for this group and no alert firing")));
  }
  actors::new_work w;
  w.template_name = t->name;
  w.fields = alertmanager::work_fields(*n, *t, settings_of(ctx));
  w.idempotency_key = fmt::format("alertmanager/{}/{}", group, first);
  w.creator = req.who.name;
  std::string alertname;
  if (auto a = n->common_labels.find("alertname"); a != n->common_labels.end())
    alertname = a->second;
  w.labels = json::object("alert_group", group, "alertname", alertname);
  auto* c = &ctx;
  ctx.works->create(std::move(w), [c, req, res, statuses](actors::work_reply r) {
    res.post([c, req, res, statuses, r = std::move(r)] {
      if (r.err) {
        if (r.err.code != errc::invalid_argument)
          return res.send(net::problem(r.err, req));
        // A field the alerts cannot give: no retry helps (Alertmanager drops a 4xx).
        auto why = fmt::format("the alerts do not make a Work of template '{}': {} (map the "
                               "field to a label or annotation in alertmanager.receiver.fields)",
                               settings_of(*c).receiver_template, r.err.message);
        logger("alertmanager")
          ->warn("alertmanager webhook refused (request {}): {}", req.request_id, why);
        return res.send(net::problem(422, "unprocessable", why, req));
      }
      // Crash tests: the Work committed, the alerts not merged into it yet.
      failpoint("alertmanager_created", 1);
      annotate(c, req, res, r.w.id, statuses, r.created);
    });
  });
}

} // namespace

void register_alertmanager(std::vector<net::route_group>& routes) {
  routes.push_back([](net::router& r, net::server_context& ctx) {
    if (settings_of(ctx).receiver_template.empty())
      return;
    auto* c = &ctx;
    r.add("POST", "/v1/alerts/alertmanager", net::access::operator_,
          [c](const net::request& q, net::responder s) { receive(*c, q, std::move(s)); });
  });
}

} // namespace sreh::plugins
