#define CAF_SUITE evolve_versions
// actors/evolve/versions: the reasoner a run's pinned knowledge base, prompt and model route make
// together, and config's reader of a model-route candidate (no secret, no file, no ${NAME}).
#include "actors/evolve/versions.hpp"

#include <string>

#include "actors/gateway/llm_provider.hpp"
#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace ev = sreh::evolve;

namespace {

const app::node_registries& regs() {
  static const auto r = app::registries();
  return r;
}

/// A node's model section calling an OpenAI-compatible server with a key.
config::model_config openai_node() {
  config::model_config m;
  m.provider = m.main.provider = "openai";
  m.main.name = "main";
  m.main.base_url = "http://127.0.0.1:9/v1";
  m.main.model = "big";
  m.main.api_key = "sk-node";
  return m;
}

std::string error_of(std::string_view text, const config::model_config& node = openai_node()) {
  auto m = config::load_model_candidate(text, "cnd_r", node);
  return m ? std::string{"(ok)"} : m.error().message;
}

std::shared_ptr<actors::version_registry> registry(const config::model_config& m) {
  auto provider = regs().providers.make(m);
  CAF_REQUIRE(provider.has_value());
  return std::make_shared<actors::version_registry>(
    m, *provider, [](const config::model_config& x) { return regs().providers.make(x); },
    std::make_shared<const policy::policy_set>(), nullptr);
}

ev::candidate candidate(std::string id, ev::artefact kind, std::string body) {
  ev::candidate c;
  c.id = std::move(id);
  c.kind = kind;
  c.body = std::move(body);
  return c;
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

const char* small_route = "model:\n  provider: openai\n  base_url: http://127.0.0.1:9/v1\n"
                          "  model: small\n  max_tokens: 512\n";

} // namespace

CAF_TEST(a route candidate borrows the key of the node route to the same server) {
  auto m = config::load_model_candidate(small_route, "cnd_r", openai_node());
  CAF_REQUIRE(m.has_value());
  CAF_CHECK_EQUAL(m->main.model, std::string{"small"});
  CAF_CHECK_EQUAL(m->main.max_tokens, 512);
  CAF_CHECK_EQUAL(m->main.api_key, std::string{"sk-node"});
  auto other = config::load_model_candidate(
    "model:\n  provider: openai\n  base_url: http://10.0.0.1/v1\n  model: m\n", "cnd_r",
    openai_node());
  CAF_REQUIRE(other.has_value());
  CAF_CHECK(other->main.api_key.empty()); // another server: no key of the node's goes there
  auto chain = config::load_model_candidate(
    "models:\n  spare: {provider: anthropic, base_url: 'http://127.0.0.1:8', model: c}\n"
    "model:\n  provider: openai\n  base_url: http://127.0.0.1:9/v1\n  model: big\n"
    "  fallback: [spare, builtin]\n",
    "cnd_r", openai_node());
  CAF_REQUIRE(chain.has_value());
  CAF_CHECK_EQUAL(chain->fallback.size(), 2u);
  CAF_CHECK_EQUAL(chain->routes.at("spare").model, std::string{"c"});
}

CAF_TEST(a route candidate carries no secret file or environment) {
  auto e = error_of("model:\n  provider: openai\n  base_url: http://x/v1\n  model: m\n"
                    "  api_key: sk-mine\n");
  CAF_CHECK(has(e, "cnd_r:5:") && has(e, "model.api_key") && has(e, "no secret"));
  CAF_CHECK(has(error_of("model:\n  provider: builtin\n  kb: /etc/passwd\n"), "model.kb"));
  CAF_CHECK(has(error_of("models:\n  x: {provider: openai, base_url: 'http://x/v1', model: m, "
                         "api_key_file: /etc/shadow}\nmodel: {provider: builtin}\n"),
                "models.x.api_key_file"));
  e = error_of("model:\n  provider: openai\n  base_url: http://x/${HOME}/v1\n  model: m\n");
  CAF_CHECK(has(e, "cnd_r:3:") && has(e, "${NAME}"));
  CAF_CHECK(has(error_of("model:\n  provider: builtin\n  system_prompt: hi\n"), "kind prompt"));
  CAF_CHECK(has(error_of("model:\n  provider: oracle\n"), "model.provider"));
  CAF_CHECK(has(error_of("models: {}\n"), "missing key 'model'"));
  CAF_CHECK(has(error_of("model:\n  provider: openai\n"), "needs base_url"));
  CAF_CHECK(has(error_of("- a\n"), "expected a mapping"));
  CAF_CHECK(has(error_of("model:\n  provider: scripted\n"), "scripted"));
}

CAF_TEST(what a candidate kind means depends on the current route) {
  config::model_config builtin;
  auto v = registry(builtin);
  CAF_CHECK(!v->takes(ev::artefact::knowledge_base));
  CAF_CHECK(!v->takes(ev::artefact::model_route));
  auto no_prompt = v->takes(ev::artefact::prompt);
  CAF_CHECK(no_prompt.code == errc::conflict && has(no_prompt.message, "builtin"));
  CAF_REQUIRE(!v->add(candidate("cnd_r", ev::artefact::model_route, small_route)));
  CAF_CHECK(v->has(ev::artefact::model_route, "cnd_r"));
  v->make_current(ev::artefact::model_route, "cnd_r");
  CAF_CHECK(!v->takes(ev::artefact::prompt));
  auto no_kb = v->takes(ev::artefact::knowledge_base);
  CAF_CHECK(no_kb.code == errc::conflict && has(no_kb.message, "openai small"));
  // A route falling back to the builtin reasoner reasons with a knowledge base too.
  std::string with_fallback = std::string{small_route} + "  fallback: [builtin]\n";
  CAF_REQUIRE(!v->add(candidate("cnd_f", ev::artefact::model_route, with_fallback)));
  v->make_current(ev::artefact::model_route, "cnd_f");
  CAF_CHECK(!v->takes(ev::artefact::knowledge_base));
}

CAF_TEST(pinned versions make one reasoner and a missing one is named) {
  auto v = registry(openai_node());
  CAF_REQUIRE(!v->add(candidate("cnd_p", ev::artefact::prompt, "You are terse.")));
  actors::reasoner_pins pins;
  pins.prompt = "cnd_p";
  auto a = v->provider(pins);
  auto b = v->provider(pins);
  CAF_REQUIRE(a.has_value() && b.has_value());
  CAF_CHECK(a->get() == b->get()); // made once
  auto llm = std::dynamic_pointer_cast<actors::llm_provider>(*a);
  CAF_REQUIRE(llm != nullptr);
  CAF_CHECK_EQUAL(llm->system_prompt_version(), std::string{"cnd_p"});
  auto config = v->provider({});
  CAF_REQUIRE(config.has_value());
  CAF_CHECK(config->get() != a->get());
  pins.model_route = "cnd_gone";
  auto missing = v->provider(pins);
  CAF_REQUIRE(!missing.has_value());
  CAF_CHECK(missing.error().code == errc::not_found);
  CAF_CHECK(has(missing.error().message, "no model_route version cnd_gone"));
  // A candidate under evaluation makes a reasoner without being added.
  auto with = v->provider_with(candidate("cnd_q", ev::artefact::prompt, "Be thorough."));
  CAF_REQUIRE(with.has_value());
  CAF_CHECK(!v->has(ev::artefact::prompt, "cnd_q"));
  CAF_CHECK(v->check(ev::artefact::prompt, " \n", "body").code == errc::invalid_argument);
  CAF_CHECK(has(v->check(ev::artefact::model_route, "model: {provider: oracle}\n", "body").message,
                "body:1:"));
}

CAF_TEST(a run spec pins every kind) {
  auto v = registry(openai_node());
  v->make_current(ev::artefact::prompt, "cnd_p");
  v->make_current(ev::artefact::model_route, "cnd_r");
  auto spec = v->pin("{}");
  auto pins = actors::reasoner_pins::pinned_in(spec);
  CAF_CHECK_EQUAL(pins.prompt, std::string{"cnd_p"});
  CAF_CHECK_EQUAL(pins.model_route, std::string{"cnd_r"});
  CAF_CHECK_EQUAL(pins.knowledge_base, std::string{"config"});
  CAF_CHECK_EQUAL(ev::pinned_version(spec, ev::artefact::policy), std::string{"config"});
}
