#define CAF_SUITE llm_prepare
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "actors/gateway/llm_provider.hpp"
#include "app/serve/plugins.hpp"
#include "core/base/hash.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sreh;

namespace {

std::shared_ptr<actors::llm_provider> openai_provider() {
  config::model_config m;
  m.provider = m.main.provider = "openai";
  m.main.name = "main";
  m.main.base_url = "http://127.0.0.1:9/v1";
  m.main.model = "big";
  m.main.max_input_tokens = 2'000; // small: the longer journals below are trimmed
  auto p = app::registries().providers.make(m);
  CAF_REQUIRE(p.has_value());
  auto llm = std::dynamic_pointer_cast<actors::llm_provider>(*p);
  CAF_REQUIRE(llm != nullptr);
  return llm;
}

/// The request hash as it was defined when first journaled: FNV-1a 64 of one string of every
/// field (recorded journals compare against it, so it must not change).
std::string hash_as_journaled(const llm::chat_request& r) {
  std::string canon = r.system;
  for (const auto& m : r.messages) {
    canon += fmt::format("\x1e{}\x1f{}", llm::to_string(m.role), m.text);
    for (const auto& c : m.tool_calls)
      canon += fmt::format("\x1f{}\x1f{}\x1f{}", c.id, c.name, c.arguments);
    canon +=
      fmt::format("\x1f{}\x1f{}\x1f{}", m.result.tool_call_id, m.result.content, m.result.is_error);
  }
  for (const auto& t : r.tools)
    canon += fmt::format("\x1d{}\x1f{}\x1f{}", t.name, t.description, t.parameters);
  return "fnv1a64:" + fnv1a64_hex(canon);
}

step tool_step(std::int64_t n, std::string result, step_state state = step_state::succeeded) {
  step s;
  s.n = n;
  s.kind = step_kind::tool;
  s.state = state;
  s.tool = "sandbox.logs";
  s.args = fmt::format(R"({{"service":"svc{}"}})", n % 3);
  s.decision = fmt::format(R"({{"thought":"look {}","tool_call_id":"toolu_{}"}})", n, n);
  s.result = std::move(result);
  if (state == step_state::failed)
    s.error = "timed out";
  return s;
}

} // namespace

CAF_TEST(fed in pieces the hash is the hash of the whole) {
  CAF_CHECK_EQUAL(fnv1a64{}.add("ab").add("").add("cd").hex(), fnv1a64_hex("abcd"));
  CAF_CHECK_EQUAL(fnv1a64{}.hex(), fnv1a64_hex(""));
  CAF_CHECK(fnv1a64_hex("abcd") != fnv1a64_hex("abdc"));
}

CAF_TEST(a runs kept prior steps make the same request turn after turn) {
  auto llm = openai_provider();
  auto world =
    sandbox_fixture::make_world("  - {kind: bad_deploy, target: api, version: v1.3.0, at: -10m}\n");
  actors::tool_registry tools;
  sandbox_fixture::sb::add_sandbox_tools(tools, world);
  run r;
  r.id = "run_1";
  r.goal = "api is failing";
  r.labels = R"({"alertname":"ApiDown","service":"api"})";
  llm::prior_steps_cache cache;
  std::vector<step> journal;
  int trimmed = 0;
  for (std::int64_t n = 1; n <= 60; ++n) {
    // A step journaled at its intent, then finished: both as a turn would see them.
    journal.push_back(tool_step(n, "", step_state::intent));
    auto at_intent = llm->prepare(actors::run_context{r, journal, tools}, "", &cache);
    journal.back() = tool_step(n, std::string(static_cast<std::size_t>(40 + 7 * n), 'x'),
                               n % 11 == 0 ? step_state::failed : step_state::succeeded);
    auto kept = llm->prepare(actors::run_context{r, journal, tools}, "", &cache);
    auto fresh = llm->prepare(actors::run_context{r, journal, tools}, "");
    CAF_CHECK_EQUAL(kept.hash, fresh.hash);
    CAF_CHECK_EQUAL(kept.hash, hash_as_journaled(fresh.request));
    CAF_CHECK_EQUAL(kept.request.messages.size(), fresh.request.messages.size());
    CAF_CHECK_EQUAL(kept.report.estimated_tokens, fresh.report.estimated_tokens);
    CAF_CHECK_EQUAL(kept.report.summarized, fresh.report.summarized);
    CAF_CHECK_EQUAL(kept.report.omitted, fresh.report.omitted);
    CAF_CHECK(at_intent.hash != kept.hash);
    trimmed += kept.report.omitted > 0 ? 1 : 0;
  }
  CAF_CHECK_GREATER(trimmed, 0); // the budget was met by leaving steps out, too
  // Read again shorter (a recovered run's journal): the same as assembling it afresh.
  journal.resize(5);
  auto kept = llm->prepare(actors::run_context{r, journal, tools}, "note", &cache);
  auto fresh = llm->prepare(actors::run_context{r, journal, tools}, "note");
  CAF_CHECK_EQUAL(kept.hash, fresh.hash);
  CAF_CHECK_EQUAL(kept.hash, hash_as_journaled(kept.request));
}
