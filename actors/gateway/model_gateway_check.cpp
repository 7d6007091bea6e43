// `sreh models check`: one tiny request to every route of the chain at once, outside the
// breakers and the figures, so that an operator sees which servers answer and why the others
// do not.
#include <fmt/format.h>

#include <atomic>

#include "actors/gateway/model_gateway.hpp"
#include "actors/gateway/route_call.hpp"

namespace sreh::actors {

namespace {

/// What the routes' checks share until the last one reports.
struct check_join {
  std::vector<route_check> results;
  std::atomic<std::size_t> left{0};
  model_gateway::check_fn done;

  void report() {
    if (left.fetch_sub(1) == 1) {
      auto d = std::move(done);
      d(std::move(results));
    }
  }
};

llm::chat_request ping_request() {
  llm::chat_request req;
  req.system = "Answer with one word.";
  req.messages.push_back(llm::message::user("ping"));
  return req;
}

} // namespace

void model_gateway::check(std::chrono::milliseconds timeout, check_fn done) {
  auto join = std::make_shared<check_join>();
  join->done = std::move(done);
  join->results.resize(chain_.size());
  join->left = chain_.size() + 1; // + 1: this function, so that done runs once all are posted
  for (std::size_t i = 0; i < chain_.size(); ++i) {
    auto r = chain_[i];
    auto& out = join->results[i];
    out.route = r.name;
    out.provider = r.provider;
    out.model = r.model;
    out.base_url = r.base_url;
    if (r.provider == "builtin") {
      out.ok = true;
      join->report();
      continue;
    }
    r.max_tokens = std::min<std::int64_t>(r.max_tokens, 16);
    auto total = std::min(timeout, std::chrono::milliseconds{r.total_timeout_ms});
    r.connect_timeout_ms = std::min<std::int64_t>(r.connect_timeout_ms, total.count());
    r.read_timeout_ms = std::min<std::int64_t>(r.read_timeout_ms, total.count());
    auto made = route_call::make(r, ping_request(), total);
    if (!made) {
      out.error = made.error().message;
      join->report();
      continue;
    }
    auto wire = std::make_shared<route_call>(std::move(*made));
    auto started = clock_.now_us();
    chunk_fn on_chunk;
    if (wire->streamed())
      on_chunk = [wire](std::string_view bytes) {
        (void)wire->feed(bytes);
        return true;
      };
    transport_->post(wire->take_request(), std::move(on_chunk),
                     [this, join, i, wire, started](transport_reply reply) {
                       auto& out = join->results[i];
                       out.latency_ms = (clock_.now_us() - started) / 1000;
                       out.http_status = reply.error ? 0 : reply.status;
                       std::string what;
                       auto parsed = wire->finish(reply, what);
                       out.ok = parsed.has_value();
                       if (!out.ok)
                         out.error = std::move(what);
                       join->report();
                     });
  }
  join->report();
}

} // namespace sreh::actors
