#define CAF_SUITE llm_gateway
#include <caf/test/unit_test.hpp>

// The gateway over a scripted transport: each post is answered at once by the next reply of the
// script (and recorded), timers fire at once with their delay recorded.

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "actors/gateway/model_gateway.hpp"
#include "core/base/clock.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

class scripted_transport final : public model_transport {
 public:
  std::deque<transport_reply> replies;
  std::vector<transport_request> posts;
  std::vector<std::int64_t> delays;

  void post(transport_request req, chunk_fn on_chunk, done_fn on_done) override {
    posts.push_back(req);
    CAF_REQUIRE(!replies.empty());
    auto r = std::move(replies.front());
    replies.pop_front();
    if (on_chunk && r.status >= 200 && r.status < 300) {
      on_chunk(r.body);
      r.body.clear();
      r.streamed = true;
    }
    on_done(std::move(r));
  }
  void after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    delays.push_back(delay.count());
    fn();
  }
};

transport_reply status(int code, std::string body = "{}", llm::headers h = {}) {
  transport_reply r;
  r.status = code;
  r.body = std::move(body);
  r.headers = std::move(h);
  return r;
}

transport_reply refused() {
  transport_reply r;
  r.error = sreh::error{errc::unavailable, "127.0.0.1:9: connect: Connection refused"};
  return r;
}

const char* openai_ok =
  R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[)"
  R"({"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],)"
  R"("usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})";

const char* anthropic_ok =
  R"({"id":"msg_1","type":"message","role":"assistant","model":"c","content":[)"
  R"({"type":"text","text":"fine"}],"stop_reason":"end_turn","stop_sequence":null,)"
  R"("usage":{"input_tokens":7,"output_tokens":3}})";

config::model_route route(std::string name, std::string provider, std::string url) {
  config::model_route r;
  r.name = std::move(name);
  r.provider = std::move(provider);
  r.base_url = std::move(url);
  r.model = "m-" + r.name;
  r.api_key = "secret-" + r.name;
  return r;
}

struct fixture {
  std::shared_ptr<scripted_transport> t = std::make_shared<scripted_transport>();
  sreh::test_clock clock;

  gateway_result call(std::vector<config::model_route> chain) {
    model_gateway g{std::move(chain), t, clock};
    llm::chat_request req;
    req.messages.push_back(llm::message::user("hello"));
    gateway_result out;
    bool called = false;
    g.call(req, [&](gateway_result r) {
      out = std::move(r);
      called = true;
    });
    CAF_REQUIRE(called);
    return out;
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v)
    s += x + " | ";
  return s;
}

const std::string* header(const transport_request& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name)
      return &v;
  return nullptr;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(gateway_tests, fixture)

CAF_TEST(openai request goes to chat completions with a bearer key) {
  t->replies.push_back(status(200, openai_ok));
  auto r = call({route("main", "openai", "http://h:1/v1")});
  CAF_REQUIRE(r.ok);
  CAF_CHECK_EQUAL(r.response.text, "done");
  CAF_CHECK_EQUAL(r.route, "main");
  CAF_REQUIRE_EQUAL(t->posts.size(), 1u);
  CAF_CHECK_EQUAL(t->posts[0].url, "http://h:1/v1/chat/completions");
  CAF_REQUIRE(header(t->posts[0], "Authorization") != nullptr);
  CAF_CHECK_EQUAL(*header(t->posts[0], "Authorization"), "Bearer secret-main");
  CAF_CHECK(t->posts[0].body.find("\"model\":\"m-main\"") != std::string::npos);
  CAF_CHECK(t->posts[0].body.find("\"max_tokens\":1024") != std::string::npos);
  auto o_series = route("main", "openai", "http://h:1/v1");
  o_series.max_completion_tokens = true; // OpenAI's reasoning models refuse max_tokens
  t->replies.push_back(status(200, openai_ok));
  CAF_REQUIRE(call({o_series}).ok);
  CAF_CHECK(t->posts[1].body.find("\"max_completion_tokens\":1024") != std::string::npos);
  CAF_CHECK(t->posts[1].body.find("\"max_tokens\"") == std::string::npos);
}

CAF_TEST(anthropic request goes to messages with x - api - key and the version) {
  t->replies.push_back(status(200, anthropic_ok));
  auto r = call({route("main", "anthropic", "https://api.example")});
  CAF_REQUIRE(r.ok);
  CAF_CHECK_EQUAL(r.response.text, "fine");
  CAF_CHECK_EQUAL(t->posts[0].url, "https://api.example/v1/messages");
  CAF_CHECK_EQUAL(*header(t->posts[0], "x-api-key"), "secret-main");
  CAF_CHECK_EQUAL(*header(t->posts[0], "anthropic-version"), "2023-06-01");
}

CAF_TEST(a 429 with retry-after is retried after the delay it asks for) {
  t->replies.push_back(
    status(429, R"({"error":{"message":"slow","type":"rate_limit"}})", {{"retry-after", "2"}}));
  t->replies.push_back(status(200, openai_ok));
  auto r = call({route("main", "openai", "http://h/v1")});
  CAF_REQUIRE(r.ok);
  CAF_CHECK_EQUAL(t->posts.size(), 2u);
  CAF_REQUIRE_EQUAL(t->delays.size(), 1u);
  CAF_CHECK_EQUAL(t->delays[0], 2000);
  CAF_CHECK(joined(r.log).find("HTTP 429") != std::string::npos);
}

CAF_TEST(a 529 and a cut body are retried a 400 is not ) {
  t->replies.push_back(status(529, R"({"type":"error","error":{"type":"overloaded_error",)"
                                   R"("message":"Overloaded"}})"));
  t->replies.push_back(status(200, R"({"id":"msg_1","type":"mess)")); // cut
  t->replies.push_back(status(200, anthropic_ok));
  auto r = call({route("main", "anthropic", "http://h")});
  CAF_REQUIRE(r.ok);
  CAF_CHECK_EQUAL(t->posts.size(), 3u);
  t->posts.clear();
  t->replies.push_back(
    status(400, R"({"error":{"message":"bad","type":"invalid_request_error"}})"));
  auto bad = call({route("main", "openai", "http://h/v1")});
  CAF_CHECK(!bad.ok);
  CAF_CHECK_EQUAL(t->posts.size(), 1u);
  CAF_CHECK(bad.error.find("HTTP 400") != std::string::npos);
}

CAF_TEST(the next route answers when one is down and builtin ends the chain) {
  auto main = route("main", "openai", "http://127.0.0.1:9/v1");
  main.max_attempts = 1;
  t->replies.push_back(refused());
  t->replies.push_back(status(200, anthropic_ok));
  auto r = call({main, route("backup", "anthropic", "http://b")});
  CAF_REQUIRE(r.ok);
  CAF_CHECK_EQUAL(r.route, "backup");
  CAF_CHECK(joined(r.log).find("main: attempt 1: 127.0.0.1:9: connect") != std::string::npos);
  config::model_route builtin;
  builtin.name = builtin.provider = "builtin";
  t->replies.push_back(refused());
  auto last = call({main, builtin});
  CAF_CHECK(!last.ok);
  CAF_CHECK(last.reached_builtin);
}

CAF_TEST(a call sent to a route first goes on down the chain without the chain head) {
  config::model_route builtin;
  builtin.name = builtin.provider = "builtin";
  auto main = route("main", "openai", "http://127.0.0.1:9/v1");
  auto backup = route("backup", "anthropic", "http://b");
  auto ml = route("ml", "openai", "http://ml/v1"); // only for runs routed to it (by label)
  model_gateway g{{main, backup, builtin, ml}, t, clock, 3};
  CAF_CHECK_EQUAL(joined(g.order_names()), "main | backup | builtin | ");
  CAF_CHECK_EQUAL(joined(g.order_names("ml")), "ml | backup | builtin | ");
  CAF_CHECK_EQUAL(joined(g.order_names("backup")), "backup | builtin | ");
  CAF_CHECK_EQUAL(joined(g.order_names("nowhere")), "main | backup | builtin | ");
  // Sent to ml: it answers, and main is never asked.
  t->replies.push_back(status(200, openai_ok));
  llm::chat_request req;
  req.messages.push_back(llm::message::user("hello"));
  gateway_result out;
  g.call(
    req, [&](gateway_result r) { out = std::move(r); }, {}, "ml");
  CAF_REQUIRE(out.ok);
  CAF_CHECK_EQUAL(out.route, "ml");
  CAF_REQUIRE_EQUAL(t->posts.size(), 1u);
  CAF_CHECK_EQUAL(t->posts.front().url, "http://ml/v1/chat/completions");
  // ml down: the call goes on to backup, not to main.
  t->replies.push_back(refused());
  t->replies.push_back(refused());
  t->replies.push_back(refused());
  t->replies.push_back(status(200, anthropic_ok));
  g.call(
    req, [&](gateway_result r) { out = std::move(r); }, {}, "ml");
  CAF_REQUIRE(out.ok);
  CAF_CHECK_EQUAL(out.route, "backup");
  for (const auto& r : t->posts)
    CAF_CHECK(r.url.find("127.0.0.1:9") == std::string::npos);
}

CAF_TEST(an open breaker skips its route) {
  auto main = route("main", "openai", "http://h/v1");
  main.max_attempts = 1;
  model_gateway g{{main}, t, clock};
  llm::chat_request req;
  req.messages.push_back(llm::message::user("x"));
  for (int i = 0; i < 5; ++i)
    t->replies.push_back(refused());
  for (int i = 0; i < 5; ++i)
    g.call(req, [](gateway_result r) { CAF_CHECK(!r.ok); });
  auto routes = g.status(); // not inside the check: it would read a destroyed temporary
  CAF_CHECK_EQUAL(routes.at(0).breaker, "open");
  std::string why;
  g.call(req, [&](gateway_result r) { why = r.error; });
  CAF_CHECK(why.find("circuit breaker open") != std::string::npos);
  CAF_CHECK_EQUAL(t->posts.size(), 5u);
}

CAF_TEST(a check calls every route once whatever its breaker and changes nothing) {
  auto main = route("main", "openai", "http://h/v1");
  main.max_attempts = 1;
  main.max_tokens = 4096;
  auto down = route("down", "anthropic", "http://d");
  down.max_attempts = 1;
  config::model_route builtin;
  builtin.name = builtin.provider = "builtin";
  model_gateway g{{main, down, builtin}, t, clock};
  llm::chat_request req;
  req.messages.push_back(llm::message::user("x"));
  for (int i = 0; i < 5; ++i) {
    t->replies.push_back(refused());
    t->replies.push_back(refused());
    g.call(req, [](gateway_result r) { CAF_CHECK(!r.ok); });
  }
  auto before = g.status();
  CAF_REQUIRE_EQUAL(before.at(0).breaker, "open");
  CAF_REQUIRE_EQUAL(before.at(1).breaker, "open");
  t->posts.clear();
  t->replies.push_back(status(200, openai_ok));
  t->replies.push_back(status(401, R"({"type":"error","error":{"type":"authentication_error",)"
                                   R"("message":"invalid x-api-key secret-down"}})"));
  std::vector<route_check> checks;
  g.check(std::chrono::milliseconds{2000}, [&](std::vector<route_check> c) { checks = c; });
  CAF_REQUIRE_EQUAL(checks.size(), 3u);
  CAF_CHECK(checks[0].ok);
  CAF_CHECK_EQUAL(checks[0].http_status, 200);
  CAF_CHECK(!checks[1].ok);
  CAF_CHECK_EQUAL(checks[1].http_status, 401);
  CAF_CHECK_EQUAL(checks[1].error, "HTTP 401 authentication_error: invalid x-api-key [redacted]");
  CAF_CHECK(checks[2].ok);
  CAF_CHECK_EQUAL(checks[2].route, "builtin");
  CAF_REQUIRE_EQUAL(t->posts.size(), 2u);
  CAF_CHECK(t->posts[0].body.find(R"("content":"ping")") != std::string::npos);
  CAF_CHECK(t->posts[0].body.find(R"("max_tokens":16)") != std::string::npos);
  CAF_CHECK_EQUAL(t->posts[0].total_timeout.count(), 2000);
  auto after = g.status();
  for (std::size_t i = 0; i < 2; ++i) {
    CAF_CHECK_EQUAL(after.at(i).breaker, before.at(i).breaker);
    CAF_CHECK_EQUAL(after.at(i).calls, before.at(i).calls);
    CAF_CHECK_EQUAL(after.at(i).consecutive_failures, before.at(i).consecutive_failures);
  }
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

/// Holds every post until the test answers it; keeps timers until the test fires them.
class holding_transport final : public model_transport {
 public:
  struct held_call {
    transport_request req;
    done_fn done;
  };
  std::deque<held_call> held;
  std::size_t max_held = 0;
  std::vector<std::pair<std::int64_t, std::function<void()>>> timers;

  void post(transport_request req, chunk_fn, done_fn on_done) override {
    held.push_back({std::move(req), std::move(on_done)});
    max_held = std::max(max_held, held.size());
  }
  void after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    timers.emplace_back(delay.count(), std::move(fn));
  }
  /// Answers the oldest call in flight.
  void answer_oldest(transport_reply r) {
    CAF_REQUIRE(!held.empty());
    auto c = std::move(held.front());
    held.pop_front();
    c.done(std::move(r));
  }
};

llm::chat_request numbered(int i) {
  llm::chat_request req;
  req.messages.push_back(llm::message::user("call " + std::to_string(i)));
  return req;
}

} // namespace

CAF_TEST(calls over max_concurrency wait in FIFO order) {
  auto t = std::make_shared<holding_transport>();
  sreh::test_clock clock;
  auto main = route("main", "openai", "http://h/v1");
  main.max_concurrency = 2;
  model_gateway g{{main}, t, clock};
  std::vector<int> answered;
  for (int i = 0; i < 5; ++i)
    g.call(numbered(i), [&answered, i](gateway_result r) {
      CAF_CHECK(r.ok);
      answered.push_back(i);
    });
  CAF_CHECK_EQUAL(t->held.size(), 2u);
  auto s = g.status();
  CAF_CHECK_EQUAL(s.at(0).in_flight, 2);
  CAF_CHECK_EQUAL(s.at(0).queued, 3);
  std::vector<std::string> sent;
  while (!t->held.empty()) {
    CAF_CHECK_LESS_OR_EQUAL(t->held.size(), 2u);
    sent.push_back(t->held.front().req.body);
    t->answer_oldest(status(200, openai_ok));
  }
  CAF_CHECK_EQUAL(t->max_held, 2u);
  CAF_CHECK_EQUAL(answered, (std::vector<int>{0, 1, 2, 3, 4}));
  CAF_REQUIRE_EQUAL(sent.size(), 5u);
  for (int i = 0; i < 5; ++i)
    CAF_CHECK(sent[i].find("call " + std::to_string(i)) != std::string::npos);
  auto after = g.status();
  CAF_CHECK_EQUAL(after.at(0).in_flight, 0);
  CAF_CHECK_EQUAL(after.at(0).queued, 0);
}

CAF_TEST(a full queue sends the call to the next route and a wait counts toward the timeout) {
  auto t = std::make_shared<holding_transport>();
  sreh::test_clock clock;
  auto main = route("main", "openai", "http://h/v1");
  main.max_concurrency = 1;
  main.max_queue = 1;
  main.total_timeout_ms = 1000;
  config::model_route builtin;
  builtin.name = builtin.provider = "builtin";
  model_gateway g{{main, builtin}, t, clock};
  std::vector<gateway_result> results(3);
  for (int i = 0; i < 3; ++i)
    g.call(numbered(i), [&results, i](gateway_result r) { results[i] = std::move(r); });
  // The third finds one in flight and one waiting: overloaded, builtin answers at once.
  CAF_CHECK(results[2].reached_builtin);
  CAF_CHECK(joined(results[2].log).find("main: overloaded: 1 calls in flight and 1 waiting") !=
            std::string::npos);
  // The second waited 300 ms: it is sent with what is left of its total timeout.
  clock.advance_us(300'000);
  t->answer_oldest(status(200, openai_ok));
  CAF_CHECK(results[0].ok);
  CAF_REQUIRE_EQUAL(t->held.size(), 1u);
  CAF_CHECK_EQUAL(t->held.front().req.total_timeout.count(), 700);
  t->answer_oldest(status(200, openai_ok));
  CAF_CHECK(results[1].ok);
  // A call still waiting when its total timeout passes leaves the queue for the next route.
  std::vector<gateway_result> more(2);
  for (int i = 0; i < 2; ++i)
    g.call(numbered(i), [&more, i](gateway_result r) { more[i] = std::move(r); });
  CAF_REQUIRE_EQUAL(t->timers.size(), 2u); // one per wait; the first wait ended by its slot
  CAF_CHECK_EQUAL(t->timers.back().first, 1000);
  t->timers.back().second();
  CAF_CHECK(more[1].reached_builtin);
  CAF_CHECK(joined(more[1].log).find("waited 1000 ms in the queue") != std::string::npos);
  auto after_expiry = g.status();
  CAF_CHECK_EQUAL(after_expiry.at(0).queued, 0);
  t->timers.front().second(); // the first wait's timer: its call was sent long ago, nothing
  t->answer_oldest(status(200, openai_ok));
  CAF_CHECK(more[0].ok);
  auto at_end = g.status();
  CAF_CHECK_EQUAL(at_end.at(0).in_flight, 0);
}
