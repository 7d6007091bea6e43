#define CAF_SUITE reasoner_engine
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/memory/memory_tool.hpp"
#include "actors/tools/tool.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "plugins/models/builtin/reasoner.hpp"
#include "plugins/tools/sandbox/contract.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;

// A small fake environment that answers the sandbox tools (docs/sandbox-tools.md) for a made-up
// system. Its names appear nowhere else in the tree: the reasoner must learn them from results.
// Its tools carry the sandbox tools' contracts (what they provide, how their results read as
// observations); reasoner_observations.cpp runs the reasoner on a toolset that shares nothing
// with the sandbox's.
namespace {

using metrics = std::map<std::string, double>;

struct fake_service {
  std::string name, kind = "service", version = "v1.0.0";
  std::vector<std::string> calls, hosts;
  int replicas = 3;
  double max_connections = 0;
  metrics base, cur;
};

struct fake_host {
  std::string name, kind = "vm";
  std::vector<std::string> services, jobs;
  metrics base, cur;
};

struct fake_job {
  std::string name;
  std::vector<std::string> hosts;
  double base = 1, cur = 1;
  bool stalled = false;
};

struct fake_deploy {
  std::string service, version, previous;
  int minutes_ago;
};

struct fake_flag {
  std::string name;
  bool value = false, def = false;
  int minutes_ago = -1; // -1: never changed
};

std::string at(int minutes_ago) {
  int t = 12 * 60 - minutes_ago;
  return fmt::format("2031-03-04T{:02}:{:02}:00Z", t / 60, t % 60);
}

std::string quote(const std::string& s) {
  return json::quote(s);
}

std::string names(const std::vector<std::string>& v) {
  std::string out = "[";
  for (auto& s : v)
    out += (out.size() > 1 ? "," : "") + quote(s);
  return out + "]";
}

std::string metrics_json(const metrics& m) {
  std::string out = "{";
  for (auto& [k, v] : m)
    out += fmt::format("{}{}:{}", out.size() > 1 ? "," : "", quote(k), v);
  return out + "}";
}

class fake_world {
 public:
  std::vector<fake_service> services;
  std::vector<fake_host> hosts;
  std::vector<fake_job> jobs;
  std::vector<fake_deploy> deploys;
  std::vector<fake_flag> flags;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> logs; // level, text
  std::map<std::string, std::function<void(fake_world&)>> fixes; // "tool {canonical args}"
  std::vector<std::string> mutations;
  std::set<std::string> failing; // tools that always fail

  fake_world() {
    add_service("portal", {"tally", "kiln"}, {"pier-1"});
    add_service("tally", {"tallydb"}, {"pier-1"});
    add_service("kiln", {}, {"pier-2"});
    auto& db = add_service("tallydb", {}, {"pier-2"});
    db.kind = "database";
    db.max_connections = 200;
    db.base["connections"] = db.cur["connections"] = 40;
    db.base["slow_queries"] = db.cur["slow_queries"] = 1;
    hosts.push_back({"pier-1",
                     "vm",
                     {"portal", "tally"},
                     {},
                     {{"disk_used", 0.5}, {"load", 1}},
                     {{"disk_used", 0.5}, {"load", 1}}});
    hosts.push_back({"pier-2",
                     "vm",
                     {"kiln", "tallydb"},
                     {},
                     {{"disk_used", 0.4}, {"load", 1}},
                     {{"disk_used", 0.4}, {"load", 1}}});
    metrics gpu{
      {"disk_used", 0.3}, {"load", 2}, {"gpu_util", 0.9}, {"gpu_ecc_errors", 0}, {"xid_errors", 0}};
    hosts.push_back({"gpu-q1", "gpu", {}, {"fitter"}, gpu, gpu});
    hosts.push_back({"gpu-q2", "gpu", {}, {"fitter"}, gpu, gpu});
    jobs.push_back({"fitter", {"gpu-q1", "gpu-q2"}});
    flags.push_back({"amber-mode", false, false, -1});
    deploys.push_back({"kiln", "v3.0.0", "v2.9.0", 60 * 20});
    for (auto& s : services)
      logs[s.name].push_back({"INFO", "request served in 12 ms"});
  }

  fake_service& add_service(const std::string& name, std::vector<std::string> calls,
                            std::vector<std::string> on) {
    metrics m{{"rps", 100}, {"latency_p99_ms", 50}, {"error_rate", 0.002},
              {"cpu", 0.3}, {"memory", 0.4},        {"restarts", 0}};
    services.push_back({name, "service", "v1.0.0", std::move(calls), std::move(on), 3, 0, m, m});
    return services.back();
  }

  fake_service& svc(const std::string& n) {
    for (auto& s : services)
      if (s.name == n)
        return s;
    throw std::runtime_error("no service " + n);
  }
  fake_host& host(const std::string& n) {
    for (auto& h : hosts)
      if (h.name == n)
        return h;
    throw std::runtime_error("no host " + n);
  }

  void heal(const std::string& n) {
    for (auto& s : services)
      if (s.name == n)
        s.cur = s.base;
    for (auto& h : hosts)
      if (h.name == n)
        h.cur = h.base;
  }

  void log(const std::string& entity, const std::string& level, const std::string& text) {
    logs[entity].insert(logs[entity].begin(), {level, text});
  }

  std::vector<std::string> called_by(const std::string& n) const {
    std::vector<std::string> out;
    for (auto& s : services)
      if (std::find(s.calls.begin(), s.calls.end(), n) != s.calls.end())
        out.push_back(s.name);
    return out;
  }

  std::string service_json(const fake_service& s, bool with_metrics) const {
    auto out = fmt::format(
      R"({{"name":{},"kind":{},"tier":"standard","replicas":{},"version":{},"calls":{},)"
      R"("called_by":{},"hosts":{})",
      quote(s.name), quote(s.kind), s.replicas, quote(s.version), names(s.calls),
      names(called_by(s.name)), names(s.hosts));
    if (s.max_connections > 0)
      out += fmt::format(R"(,"max_connections":{})", s.max_connections);
    if (with_metrics)
      out +=
        fmt::format(R"(,"baseline":{},"current":{})", metrics_json(s.base), metrics_json(s.cur));
    return out + "}";
  }

  std::string job_json(const fake_job& j) const {
    return fmt::format(R"({{"name":{},"kind":"training","gpus":16,"hosts":{},"stalled":{},)"
                       R"("baseline":{{"throughput":{}}},"current":{{"throughput":{}}}}})",
                       quote(j.name), names(j.hosts), j.stalled ? "true" : "false", j.base, j.cur);
  }

  actors::tool_result exec(const std::string& tool, const std::string& args_text) {
    auto args = json::parse(args_text);
    auto arg = [&](const char* k) -> std::string {
      auto it = args->FindMember(k);
      return it != args->MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
    };
    if (failing.contains(tool))
      return actors::tool_result::failure(tool + ": backend unavailable");
    if (tool == "topology.get") {
      std::string s = "[", h = "[", j = "[";
      for (auto& x : services)
        s += (s.size() > 1 ? "," : "") + service_json(x, false);
      for (auto& x : hosts)
        h += fmt::format(R"({}{{"name":{},"kind":{},"services":{},"jobs":{}}})",
                         h.size() > 1 ? "," : "", quote(x.name), quote(x.kind), names(x.services),
                         names(x.jobs));
      for (auto& x : jobs)
        j += fmt::format(R"({}{{"name":{},"kind":"training","hosts":{}}})", j.size() > 1 ? "," : "",
                         quote(x.name), names(x.hosts));
      return actors::tool_result::success(
        fmt::format(R"({{"services":{}],"hosts":{}],"jobs":{}]}})", s, h, j));
    }
    if (tool == "service.describe") {
      for (auto& s : services)
        if (s.name == arg("service"))
          return actors::tool_result::success(service_json(s, true));
      return actors::tool_result::failure(fmt::format("unknown service '{}'", arg("service")));
    }
    if (tool == "host.describe") {
      for (auto& h : hosts)
        if (h.name == arg("host"))
          return actors::tool_result::success(fmt::format(
            R"({{"name":{},"kind":{},"services":{},"jobs":{},"cordoned":false,"drained":false,)"
            R"("baseline":{},"current":{}}})",
            quote(h.name), quote(h.kind), names(h.services), names(h.jobs), metrics_json(h.base),
            metrics_json(h.cur)));
      return actors::tool_result::failure(fmt::format("unknown host '{}'", arg("host")));
    }
    if (tool == "jobs.list") {
      std::string j = "[";
      for (auto& x : jobs)
        j += (j.size() > 1 ? "," : "") + job_json(x);
      return actors::tool_result::success(fmt::format(R"({{"jobs":{}]}})", j));
    }
    if (tool == "logs.search") {
      auto name = arg("service");
      std::string lines = "[";
      int minute = 0;
      for (auto& [level, text] : logs[name])
        lines += fmt::format(R"({}{{"at":{},"level":{},"service":{},"message":{}}})",
                             lines.size() > 1 ? "," : "", quote(at(minute++)), quote(level),
                             quote(name), quote(text));
      return actors::tool_result::success(fmt::format(R"({{"service":{},"total":{},"lines":{}]}})",
                                                      quote(name), logs[name].size(), lines));
    }
    if (tool == "deploys.list") {
      auto w = arg("window");
      int minutes = w.empty() ? 24 * 60 : std::stoi(w) * (w.back() == 'h' ? 60 : 1);
      std::string d = "[";
      for (auto& x : deploys)
        if (x.minutes_ago <= minutes && (arg("service").empty() || arg("service") == x.service))
          d += fmt::format(R"({}{{"service":{},"version":{},"previous":{},"at":{},"by":"ci"}})",
                           d.size() > 1 ? "," : "", quote(x.service), quote(x.version),
                           quote(x.previous), quote(at(x.minutes_ago)));
      return actors::tool_result::success(fmt::format(R"({{"deploys":{}]}})", d));
    }
    if (tool == "flags.list") {
      std::string f = "[";
      for (auto& x : flags)
        f +=
          fmt::format(R"({}{{"name":{},"value":{},"default":{},"changed_at":{},"changed_by":{}}})",
                      f.size() > 1 ? "," : "", quote(x.name), x.value, x.def,
                      x.minutes_ago < 0 ? "null" : quote(at(x.minutes_ago)),
                      x.minutes_ago < 0 ? "null" : "\"alice\"");
      return actors::tool_result::success(fmt::format(R"({{"flags":{}]}})", f));
    }
    if (tool == "alerts.list")
      return actors::tool_result::success(R"({"alerts":[]})");
    // Everything else is a mutating tool: apply the fix registered for exactly these arguments.
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    args->Accept(w);
    auto key = tool + " " + std::string{buf.GetString()};
    mutations.push_back(key);
    if (auto it = fixes.find(key); it != fixes.end())
      it->second(*this);
    return actors::tool_result::success(
      fmt::format(R"({{"ok":true,"action":{},"target":{},"before":{{}},"after":{{}}}})",
                  quote(tool), quote(args_text)));
  }
};

/// A tool of the fake world under a sandbox tool's name: it declares that tool's capabilities
/// and reads its results the way the sandbox tool does (plugins/tools/sandbox/contract.hpp).
class fake_tool final : public actors::tool {
 public:
  fake_tool(std::string name, fake_world& w)
    : name_(std::move(name)), contract_(plugins::sandbox::contract_of(name_)), world_(w) {}
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return name_; }
  const std::string& schema() const override { return schema_; }
  actors::risk_class risk() const override {
    return mutating() ? actors::risk_class::medium : actors::risk_class::read_only;
  }
  bool idempotent() const override { return !mutating(); }
  actors::tool_result execute(const actors::tool_call& c) override {
    return world_.exec(name_, c.args);
  }
  std::vector<obs::capability> provides() const override { return contract_.provides; }
  obs::observations observe(std::string_view args, std::string_view result) const override {
    return plugins::sandbox::observe(contract_, args, result);
  }

 private:
  bool mutating() const {
    return std::any_of(contract_.provides.begin(), contract_.provides.end(),
                       [](auto& c) { return c.kind == obs::capability_kind::remedy; });
  }
  std::string name_;
  std::string schema_ = R"({"type":"object"})";
  plugins::sandbox::tool_contract contract_;
  fake_world& world_;
};

/// The sandbox's tool names that the fake world answers.
void add_fake_tools(actors::tool_registry& reg, fake_world& w) {
  for (auto* name : {"topology.get", "service.describe", "host.describe", "jobs.list",
                     "logs.search", "deploys.list", "flags.list", "alerts.list", "deploy.rollback",
                     "service.restart", "service.scale", "db.set_pool_limit", "host.cleanup_disk",
                     "cert.rotate", "flag.set", "host.cordon", "host.drain", "job.restart"})
    reg.add(std::make_shared<fake_tool>(name, w));
}

struct outcome {
  actors::decision last;
  std::vector<step> steps;
  rapidjson::Document detail;
  const rapidjson::Value& result() const { return detail["result"]; }
  std::vector<std::string> list(const char* key) const {
    std::vector<std::string> out;
    for (auto& v : result()[key].GetArray())
      out.emplace_back(v.GetString());
    return out;
  }
  bool called(const std::string& tool, const std::string& args = {}) const {
    for (auto& s : steps)
      if (s.tool == tool && (args.empty() || s.args == args))
        return true;
    return false;
  }
  std::string ruled_out() const {
    std::string out;
    for (auto& r : result()["ruled_out"].GetArray())
      out += std::string{r["target"].GetString()} + ": " + r["reason"].GetString() + "\n";
    return out;
  }
};

/// Runs decide → tool → decide until a conclusion, checking determinism at every step: the
/// decision with the evidence kept in the run's memory equals the one rebuilt from every step.
outcome run_reasoner(fake_world& w, const std::string& goal, const std::string& labels,
                     std::vector<step> first = {}) {
  auto provider = plugins::make_builtin_reasoner("");
  CAF_REQUIRE(provider.has_value());
  run r;
  r.id = "run_test";
  r.goal = goal;
  r.labels = labels;
  r.budget.max_steps = 40;
  actors::tool_registry reg;
  add_fake_tools(reg, w);
  reg.add(actors::make_memory_tool(nullptr)); // reads the recall steps back
  actors::run_memory_ptr memory;
  outcome o;
  o.steps = std::move(first);
  for (int i = 0; i < 40; ++i) {
    auto d = (*provider)->decide({r, o.steps, reg, &memory});
    auto again = (*provider)->decide({r, o.steps, reg});
    CAF_CHECK_EQUAL(d.tool, again.tool);
    CAF_CHECK_EQUAL(d.args, again.args);
    CAF_CHECK_EQUAL(d.detail, again.detail);
    CAF_CHECK_EQUAL(d.conclusion, again.conclusion);
    CAF_REQUIRE(json::parse_object(d.detail).has_value());
    if (d.kind != actors::decision::call_tool) {
      o.last = d;
      auto doc = json::parse_object(d.detail);
      o.detail = std::move(*doc);
      CAF_REQUIRE(o.detail.HasMember("result"));
      CAF_MESSAGE("conclusion: " << d.conclusion);
      return o;
    }
    step s;
    s.run_id = r.id;
    s.n = static_cast<std::int64_t>(o.steps.size()) + 1;
    s.tool = d.tool;
    s.args = d.args;
    s.idempotency_key = fmt::format("{}:{}", r.id, s.n);
    auto res = w.exec(d.tool, d.args);
    s.state = res.ok ? step_state::succeeded : step_state::failed;
    s.result = res.ok ? res.result : "";
    s.error = res.error;
    CAF_MESSAGE("step " << s.n << ": " << s.tool << " " << s.args << (res.ok ? "" : " FAILED"));
    // No identical read-only call twice before anything changed the world.
    if (w.mutations.empty())
      for (auto& prev : o.steps)
        CAF_CHECK(!(prev.tool == s.tool && prev.args == s.args));
    o.steps.push_back(std::move(s));
  }
  CAF_FAIL("the reasoner did not conclude within 40 steps");
  return o;
}

/// A recall step as the kernel journals it before the first step: memory.search's result with
/// one past case that names `fault`.
step recall_step(const std::string& fault, const std::string& text) {
  step s;
  s.run_id = "run_test";
  s.n = 1;
  s.kind = step_kind::tool;
  s.state = step_state::succeeded;
  s.tool = "memory.search";
  s.args = R"({"query":"portal errors","limit":3})";
  s.idempotency_key = "run_test:1";
  s.decision = json::object("thought", "recall", "recall", true);
  s.result = json::object(
    "memories", json::raw_text{json::array(std::vector<int>{1}, [&](json::writer& w, int) {
      json::write_object(w, "id", "mem_past", "version", 2, "kind", "incident", "score", 0.8,
                         "labels",
                         json::raw_text{json::object("fault", fault, "service", "ledger")},
                         "entities", json::raw_text{"[]"}, "text", text);
    })});
  return s;
}

const std::string frontend_alert = R"({"alert":"HighErrorRate","service":"portal"})";

void errors_up(fake_world& w, const std::string& s, double rate) {
  w.svc(s).cur["error_rate"] = rate;
}

} // namespace

CAF_TEST(a bad deploy is found rolled back and verified and herrings are ruled out) {
  fake_world w;
  errors_up(w, "tally", 0.25);
  errors_up(w, "portal", 0.12);
  w.deploys.push_back({"tally", "v2.2.0", "v2.1.9", 12});
  w.log("tally", "ERROR", "unhandled exception in submit_handler (version v2.2.0)");
  w.log("portal", "ERROR", "upstream returned 502");
  w.log("portal", "WARN", "gc pause 120 ms");            // noisy, harmless
  w.deploys.push_back({"kiln", "v3.0.1", "v3.0.0", 25}); // herring: kiln stays healthy
  w.fixes[R"(deploy.rollback {"service":"tally"})"] = [](fake_world& x) {
    x.heal("tally");
    x.heal("portal");
  };
  auto o =
    run_reasoner(w, "portal is returning errors; find the cause and mitigate", frontend_alert);
  CAF_CHECK_EQUAL(o.last.kind, actors::decision::conclude);
  CAF_CHECK_EQUAL(o.list("root_cause"), std::vector<std::string>{"bad_deploy"});
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"tally"});
  CAF_CHECK(o.result()["detected"].GetBool());
  CAF_CHECK_EQUAL(w.mutations, std::vector<std::string>{R"(deploy.rollback {"service":"tally"})"});
  CAF_REQUIRE_EQUAL(o.result()["remediation"].Size(), 1u);
  CAF_CHECK(o.result()["remediation"][0]["verified"].GetBool());
  CAF_CHECK(o.ruled_out().find("kiln: step") != std::string::npos); // the herring deploy
  CAF_CHECK(o.last.conclusion.find("tally: bad_deploy") == 0);
  CAF_CHECK(o.steps.size() <= 15);
}

CAF_TEST(a healthy system yields no fault found) {
  fake_world w;
  auto o = run_reasoner(w, "portal looks odd, please check", frontend_alert);
  CAF_CHECK_EQUAL(o.result()["outcome"].GetString(), std::string{"no_fault_found"});
  CAF_CHECK(!o.result()["detected"].GetBool());
  CAF_CHECK(w.mutations.empty());
  CAF_CHECK(o.last.conclusion.find("no fault found") == 0);
  CAF_CHECK(o.steps.size() <= 6);
}

CAF_TEST(services named in the goal are the focus when the labels name none) {
  fake_world w;
  errors_up(w, "kiln", 0.3);
  errors_up(w, "portal", 0.1);
  w.svc("kiln").cur["memory"] = 0.95;
  w.svc("kiln").cur["restarts"] = 4;
  w.log("kiln", "ERROR", "OOMKilled: container restarted");
  w.log("kiln", "WARN", "heap usage at 96%");
  w.fixes[R"(service.restart {"service":"kiln"})"] = [](fake_world& x) {
    x.heal("kiln");
    x.svc("kiln").cur["restarts"] = 5; // the counter stays
    x.heal("portal");
  };
  auto o = run_reasoner(w, "errors on portal since 10 minutes", "{}");
  CAF_CHECK_EQUAL(o.list("root_cause"), std::vector<std::string>{"memory_leak"});
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"kiln"});
  // The deploy of kiln 20 hours ago is not recent: the leak is restarted, not rolled back.
  CAF_CHECK(o.called("service.restart", R"({"service":"kiln"})"));
  CAF_CHECK(!o.called("deploy.rollback"));
  CAF_CHECK(o.result()["remediation"][0]["verified"].GetBool());
}

CAF_TEST(anomalies that no failure mode explains yield unknown cause) {
  fake_world w;
  errors_up(w, "tally", 0.3);
  errors_up(w, "portal", 0.1);
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  CAF_CHECK_EQUAL(o.result()["outcome"].GetString(), std::string{"unknown_cause"});
  CAF_CHECK(o.result()["detected"].GetBool());
  CAF_CHECK(o.list("localized").empty());
  CAF_CHECK(w.mutations.empty());
  CAF_REQUIRE_EQUAL(o.result()["unexplained"].Size(), 1u);
  CAF_CHECK(std::string{o.result()["unexplained"][0].GetString()}.find("tally") == 0);
  CAF_CHECK(o.last.conclusion.find("unknown cause") != std::string::npos);
}

CAF_TEST(connection pool exhaustion raises the pool limit and never restarts the database) {
  fake_world w;
  auto& db = w.svc("tallydb");
  db.cur["connections"] = 200;
  errors_up(w, "tally", 0.2);
  errors_up(w, "portal", 0.1);
  w.svc("tally").cur["latency_p99_ms"] = 900;
  w.svc("portal").cur["latency_p99_ms"] = 950;
  w.log("tally", "ERROR", "timeout acquiring connection from pool for tallydb");
  w.fixes[R"(db.set_pool_limit {"database":"tallydb","limit":400})"] = [](fake_world& x) {
    x.svc("tallydb").max_connections = 400;
    x.heal("tally");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  CAF_CHECK_EQUAL(o.list("root_cause"), std::vector<std::string>{"connection_pool_exhaustion"});
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"tallydb"});
  CAF_CHECK(o.called("db.set_pool_limit", R"({"database":"tallydb","limit":400})"));
  CAF_CHECK(!o.called("service.restart", R"({"service":"tallydb"})"));
  CAF_CHECK(o.result()["remediation"][0]["verified"].GetBool());
}

CAF_TEST(a flag flip is toggled back) {
  fake_world w;
  errors_up(w, "tally", 0.2);
  errors_up(w, "portal", 0.1);
  w.flags.push_back({"ripple-pricing", true, false, 15});
  w.log("tally", "ERROR", "feature flag ripple-pricing enabled: division by zero in quote");
  w.deploys.push_back(
    {"portal", "v9.1.0", "v9.0.0", 30}); // herring: portal's errors come from tally
  w.fixes[R"(flag.set {"flag":"ripple-pricing","value":false})"] = [](fake_world& x) {
    x.heal("tally");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  CAF_CHECK_EQUAL(o.list("root_cause"), std::vector<std::string>{"bad_flag"});
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"ripple-pricing"});
  CAF_CHECK_EQUAL(w.mutations,
                  std::vector<std::string>{R"(flag.set {"flag":"ripple-pricing","value":false})"});
  CAF_CHECK(!o.called("deploy.rollback"));
}

CAF_TEST(an expired certificate is found through its callers logs) {
  fake_world w;
  errors_up(w, "portal", 0.4);
  w.svc("kiln").cur["rps"] = 100; // kiln itself looks fine: its callers cannot reach it
  w.log("portal", "ERROR", "TLS handshake with kiln failed: certificate has expired");
  w.fixes[R"(cert.rotate {"service":"kiln"})"] = [](fake_world& x) { x.heal("portal"); };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  CAF_CHECK_EQUAL(o.list("root_cause"), std::vector<std::string>{"cert_expired"});
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"kiln"});
  CAF_CHECK(o.called("cert.rotate", R"({"service":"kiln"})"));
  CAF_CHECK(o.result()["remediation"][0]["verified"].GetBool());
}

CAF_TEST(a slow service off the failing path is ruled out) {
  fake_world w;
  errors_up(w, "tally", 0.25);
  errors_up(w, "portal", 0.12);
  w.deploys.push_back({"tally", "v2.2.0", "v2.1.9", 8});
  w.log("tally", "ERROR", "unhandled exception in submit_handler (version v2.2.0)");
  w.svc("kiln").cur["latency_p99_ms"] = 400; // slow, but portal's symptom is errors
  w.fixes[R"(deploy.rollback {"service":"tally"})"] = [](fake_world& x) {
    x.heal("tally");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"tally"});
  CAF_CHECK(o.ruled_out().find("kiln: anomalous") != std::string::npos);
  CAF_CHECK(!o.called("service.scale"));
}

CAF_TEST(two independent faults get two diagnoses and two remedies) {
  fake_world w;
  errors_up(w, "tally", 0.25);
  errors_up(w, "kiln", 0.3);
  errors_up(w, "portal", 0.2);
  w.deploys.push_back({"tally", "v2.2.0", "v2.1.9", 12});
  w.log("tally", "ERROR", "unhandled exception in submit_handler (version v2.2.0)");
  w.host("pier-2").cur["disk_used"] = 0.99;
  w.log("kiln", "ERROR", "write failed: No space left on device (pier-2)");
  w.fixes[R"(deploy.rollback {"service":"tally"})"] = [](fake_world& x) { x.heal("tally"); };
  w.fixes[R"(host.cleanup_disk {"host":"pier-2"})"] = [](fake_world& x) {
    x.heal("pier-2");
    x.heal("kiln");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  auto causes = o.list("root_cause");
  CAF_CHECK_EQUAL(std::set<std::string>(causes.begin(), causes.end()),
                  (std::set<std::string>{"bad_deploy", "disk_full"}));
  auto where = o.list("localized");
  CAF_CHECK_EQUAL(std::set<std::string>(where.begin(), where.end()),
                  (std::set<std::string>{"tally", "pier-2"}));
  CAF_CHECK_EQUAL(w.mutations.size(), 2u);
  CAF_CHECK(o.steps.size() <= 22);
}

CAF_TEST(a gpu xid stalls a job so the host is cordoned and the job restarted elsewhere) {
  fake_world w;
  auto& h = w.host("gpu-q2");
  h.cur["xid_errors"] = 3;
  h.cur["gpu_util"] = 0;
  w.log("gpu-q2", "ERROR", "NVRM: Xid 79 on gpu-q2: GPU has fallen off the bus");
  w.jobs[0].stalled = true;
  w.jobs[0].cur = 0;
  w.fixes[R"(job.restart {"job":"fitter","exclude_hosts":["gpu-q2"]})"] = [](fake_world& x) {
    x.jobs[0].stalled = false;
    x.jobs[0].cur = 1;
  };
  auto o =
    run_reasoner(w, "training job fitter is stalled", R"({"alert":"JobStalled","job":"fitter"})");
  CAF_CHECK_EQUAL(o.list("root_cause"), std::vector<std::string>{"gpu_xid"});
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"gpu-q2"});
  CAF_CHECK(o.called("host.cordon", R"({"host":"gpu-q2"})"));
  CAF_CHECK(o.called("job.restart", R"({"job":"fitter","exclude_hosts":["gpu-q2"]})"));
  CAF_CHECK(!o.called("host.drain"));
  CAF_CHECK(o.result()["remediation"][1]["verified"].GetBool());
}

CAF_TEST(failing tools are taken into account without looping) {
  fake_world w;
  errors_up(w, "tally", 0.25);
  errors_up(w, "portal", 0.12);
  w.deploys.push_back({"tally", "v2.2.0", "v2.1.9", 12});
  w.failing = {"logs.search", "flags.list"};
  w.fixes[R"(deploy.rollback {"service":"tally"})"] = [](fake_world& x) {
    x.heal("tally");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  // Without logs the evidence is thinner but the recent deploy still points at tally.
  CAF_CHECK(o.steps.size() <= 15);
  std::string obs;
  for (auto& v : o.detail["observations"].GetArray())
    obs += std::string{v.GetString()} + "\n";
  CAF_CHECK(obs.find("logs.search failed") != std::string::npos);
}

CAF_TEST(a failed topology call falls back to the entities the descriptions reveal) {
  fake_world w;
  errors_up(w, "tally", 0.25);
  errors_up(w, "portal", 0.12);
  w.deploys.push_back({"tally", "v2.2.0", "v2.1.9", 12});
  w.log("tally", "ERROR", "unhandled exception in submit_handler (version v2.2.0)");
  w.failing = {"topology.get"};
  w.fixes[R"(deploy.rollback {"service":"tally"})"] = [](fake_world& x) {
    x.heal("tally");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors", frontend_alert);
  CAF_CHECK_EQUAL(o.list("localized"), std::vector<std::string>{"tally"});
}

namespace {

/// 1-based index of the first step calling `tool` (with `args` when given), or 0.
std::size_t step_of(const outcome& o, const std::string& tool, const std::string& args = {}) {
  for (std::size_t i = 0; i < o.steps.size(); ++i)
    if (o.steps[i].tool == tool && (args.empty() || o.steps[i].args == args))
      return i + 1;
  return 0;
}

} // namespace

CAF_TEST(a failed verification sends the engine back to triage where it finds a second fault) {
  fake_world w;
  // tally has more healthy dependencies than the first pass has room to sweep past: kiln, the
  // second faulty dependency of portal, stays unseen until the first remedy is verified.
  w.svc("tally").calls = {"tallydb", "quill", "rivet", "sprocket"};
  for (auto n : {"quill", "rivet", "sprocket"})
    w.add_service(n, {}, {"pier-2"});
  errors_up(w, "tally", 0.25);
  errors_up(w, "kiln", 0.3);
  errors_up(w, "portal", 0.2);
  w.deploys.push_back({"tally", "v2.2.0", "v2.1.9", 12});
  w.deploys.push_back({"kiln", "v3.1.0", "v3.0.0", 9});
  w.log("tally", "ERROR", "unhandled exception in submit_handler (version v2.2.0)");
  w.log("kiln", "ERROR", "unhandled exception in stock_handler (version v3.1.0)");
  w.fixes[R"(deploy.rollback {"service":"tally"})"] = [](fake_world& x) { x.heal("tally"); };
  w.fixes[R"(deploy.rollback {"service":"kiln"})"] = [](fake_world& x) {
    x.heal("kiln");
    x.heal("portal");
  };
  auto o = run_reasoner(w, "portal errors; find the cause and mitigate", frontend_alert);
  auto causes = o.list("root_cause");
  CAF_CHECK_EQUAL(causes, (std::vector<std::string>{"bad_deploy", "bad_deploy"}));
  CAF_CHECK_EQUAL(o.list("localized"), (std::vector<std::string>{"tally", "kiln"}));
  CAF_CHECK_EQUAL(w.mutations, (std::vector<std::string>{R"(deploy.rollback {"service":"tally"})",
                                                         R"(deploy.rollback {"service":"kiln"})"}));
  // kiln was found by the second round, after the first remedy left portal failing.
  auto first_fix = step_of(o, "deploy.rollback", R"({"service":"tally"})");
  auto kiln_seen = step_of(o, "service.describe", R"({"service":"kiln"})");
  CAF_CHECK(first_fix > 0);
  CAF_CHECK(kiln_seen > first_fix);
  // The deploys seen in the first round are reused: no second deploys.list.
  CAF_CHECK_EQUAL(std::count_if(o.steps.begin(), o.steps.end(),
                                [](const step& s) { return s.tool == "deploys.list"; }),
                  1);
  CAF_REQUIRE_EQUAL(o.result()["remediation"].Size(), 2u);
  CAF_CHECK(o.last.conclusion.find("not mitigated") == std::string::npos);
  CAF_CHECK(o.steps.size() <= 20);
}

namespace {

/// A flag flipped on tally, one hop below the alerted portal, with three dependencies to
/// describe (two on another host).
fake_world flag_world() {
  fake_world w;
  w.svc("tally").calls = {"tallydb", "quill", "rivet"};
  for (auto n : {"quill", "rivet"})
    w.add_service(n, {}, {"pier-2"});
  errors_up(w, "tally", 0.2);
  errors_up(w, "portal", 0.1);
  w.flags.push_back({"ripple-pricing", true, false, 15});
  w.log("tally", "ERROR", "feature flag ripple-pricing enabled: division by zero in quote");
  w.fixes[R"(flag.set {"flag":"ripple-pricing","value":false})"] = [](fake_world& x) {
    x.heal("tally");
    x.heal("portal");
  };
  return w;
}

} // namespace

CAF_TEST(a goal cue moves the matching global check before the healthy dependencies) {
  auto world = flag_world;
  auto plain_world = world();
  auto plain =
    run_reasoner(plain_world, "portal errors; find the cause and mitigate", frontend_alert);
  auto cued_world = world();
  auto cued = run_reasoner(cued_world,
                           "portal errors after a config change; find the cause and "
                           "mitigate",
                           frontend_alert);
  for (auto* o : {&plain, &cued}) {
    CAF_CHECK_EQUAL(o->list("root_cause"), std::vector<std::string>{"bad_flag"});
    CAF_CHECK_EQUAL(o->list("localized"), std::vector<std::string>{"ripple-pricing"});
  }
  // Without the cue, tally's dependencies are described before flags.list; with it, flags.list
  // and tally's logs settle the question and the healthy dependencies are never described.
  auto plain_flags = step_of(plain, "flags.list");
  CAF_CHECK(plain_flags > step_of(plain, "service.describe", R"({"service":"rivet"})"));
  auto cued_flags = step_of(cued, "flags.list");
  CAF_CHECK(cued_flags > 0);
  CAF_CHECK(cued_flags < plain_flags);
  auto rivet = step_of(cued, "service.describe", R"({"service":"rivet"})");
  CAF_CHECK(rivet == 0 || rivet > step_of(cued, "flag.set"));
  CAF_CHECK_LESS(cued.steps.size(), plain.steps.size());
  // The cue is recorded as evidence of the diagnosis.
  std::string evidence;
  for (auto& f : cued.result()["diagnoses"][0]["evidence"].GetArray())
    evidence += std::string{f["fact"].GetString()} + "\n";
  CAF_CHECK(evidence.find("the goal mentions 'config change'") != std::string::npos);
}

CAF_TEST(a recalled past case moves the check of its fault first but concludes only on evidence) {
  auto world = flag_world; // the goal-cue case's
  const std::string goal = "portal errors; find the cause and mitigate";
  auto plain_world = world();
  auto plain = run_reasoner(plain_world, goal, frontend_alert);
  // A past case on another service whose cause was a flag: the flags are read first.
  auto helped_world = world();
  auto helped = run_reasoner(helped_world, goal, frontend_alert,
                             {recall_step("bad_flag", "ledger errors after a flag was turned on")});
  // A past case with another cause (a memory leak): checked, not believed.
  auto misled_world = world();
  auto misled = run_reasoner(misled_world, goal, frontend_alert,
                             {recall_step("memory_leak", "portal errors: a memory leak")});
  for (auto* o : {&plain, &helped, &misled}) {
    CAF_CHECK_EQUAL(o->list("root_cause"), std::vector<std::string>{"bad_flag"});
    CAF_CHECK_EQUAL(o->list("localized"), std::vector<std::string>{"ripple-pricing"});
  }
  CAF_CHECK_EQUAL(helped_world.mutations, plain_world.mutations);
  CAF_CHECK_EQUAL(misled_world.mutations, plain_world.mutations);
  auto helped_flags = step_of(helped, "flags.list");
  CAF_CHECK(helped_flags > 0);
  CAF_CHECK_LESS(helped_flags, step_of(plain, "flags.list"));
  CAF_CHECK_LESS(helped.steps.size(), plain.steps.size());
  CAF_CHECK_GREATER_OR_EQUAL(misled.steps.size(), helped.steps.size());
  // The prior is evidence of the diagnosis, weighted below the goal's own words.
  std::string evidence;
  for (auto& f : helped.result()["diagnoses"][0]["evidence"].GetArray())
    if (std::string{f["fact"].GetString()}.find("memory mem_past v2 names bad_flag") == 0)
      evidence = f["fact"].GetString() + std::string{" "} + std::to_string(f["weight"].GetDouble());
  CAF_CHECK(evidence.find("0.5") != std::string::npos);
  // The conclusion says which memories the run had and whether they held.
  const auto& mh = helped.result()["memories"];
  CAF_REQUIRE_EQUAL(mh.Size(), 1u);
  CAF_CHECK_EQUAL(std::string{mh[0]["id"].GetString()}, "mem_past");
  CAF_CHECK(mh[0]["borne_out"].GetBool());
  const auto& mm = misled.result()["memories"];
  CAF_REQUIRE_EQUAL(mm.Size(), 1u);
  CAF_CHECK(!mm[0]["borne_out"].GetBool());
  CAF_CHECK_EQUAL(plain.result()["memories"].Size(), 0u);
}
