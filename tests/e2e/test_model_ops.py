"""Operating the model gateway: `sreh models check` (and POST /v1/models/check) against a
chain with a healthy route, one down and one refusing the key, never the key in what it shows;
a model server over HTTPS (a certificate of scripts/dev-ca.sh, the route's `ca_file`), plain and
streamed, and the clear error of a wrong CA.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import SREH, TOKEN, Node, TempDir, auth_block, run_tests, sreh_cli  # noqa: E402
from model_server import ModelServer  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEV_CA = os.path.join(SOURCE, "scripts", "dev-ca.sh")
CONVERSATION = [
    {"text": "Checking first.", "calls": [("test_echo", '{"check": "cpu"}')]},
    {"text": "Cause: none; the check is healthy."},
]

KEY = "sk-e2e-PLANTED-key-5d1e9a7c3b2f4e60"
ENV = {"E2E_MODEL_KEY": KEY}
VIEWER = "e2e-viewer-token-0123456789abcdef"
AUTH = auth_block({"e2e-admin": ("admin", TOKEN), "vera": ("viewer", VIEWER)})


def route(provider, url, stream=False, indent="  "):
    base = url + "/v1" if provider == "openai" else url
    return (f"{indent}provider: {provider}\n{indent}base_url: {base}\n{indent}model: m-{provider}\n"
            f"{indent}api_key: ${{E2E_MODEL_KEY}}\n{indent}stream: {'true' if stream else 'false'}\n")


def check(node, *extra):
    return sreh_cli(["models", "check", "--server", f"127.0.0.1:{node.port}"] + list(extra))


def test_check_names_each_route_and_its_cause():
    refusal = {"status": 401, "error": f"Incorrect API key provided: {KEY}"}
    with TempDir() as d, ModelServer([{"text": "pong"}] * 2, KEY) as good, \
            ModelServer([refusal] * 2, KEY) as bad:
        cfg = ("model:\n" + route("openai", good.url) +
               "  fallback: [down, unauth, builtin]\nmodels:\n"
               "  down:\n" + route("openai", "http://127.0.0.1:9", indent="    ") +
               "  unauth:\n" + route("anthropic", bad.url, stream=True, indent="    "))
        node = Node(d, cfg, env_extra=ENV, auth=AUTH).start()
        code, out, err = check(node, "--json")
        assert code == 1, (code, out, err)
        doc = json.loads(out)
        assert doc["ok"] is False, doc
        routes = {r["route"]: r for r in doc["routes"]}
        assert [r["route"] for r in doc["routes"]] == ["main", "down", "unauth", "builtin"], doc
        main, down, unauth = routes["main"], routes["down"], routes["unauth"]
        assert main["ok"] and main["http_status"] == 200 and main["latency_ms"] >= 0, main
        assert main["provider"] == "openai" and main["model"] == "m-openai", main
        assert main["base_url"] == good.url + "/v1" and "error" not in main, main
        assert not down["ok"] and "http_status" not in down, down
        assert "127.0.0.1:9: connect: Connection refused" in down["error"], down
        assert not unauth["ok"] and unauth["http_status"] == 401, unauth
        assert unauth["error"].startswith("HTTP 401 authentication_error: Incorrect API key"), \
            unauth
        assert "[redacted]" in unauth["error"], unauth
        assert routes["builtin"]["ok"], doc
        # The request was the tiny one, in the route's own format.
        assert not good.violations and not bad.violations, (good.violations, bad.violations)
        body = good.requests[0][2]
        assert [m for m in body["messages"] if m["role"] == "user"] == \
            [{"role": "user", "content": "ping"}], body
        assert body["max_tokens"] <= 16 and "tools" not in body, body
        assert bad.requests[0][2]["stream"] is True
        # The table names each failed route with its cause; exit 1.
        code, out, err = check(node)
        assert code == 1, (code, out, err)
        lines = out.splitlines()
        assert lines[0].split()[:4] == ["ROUTE", "PROVIDER", "MODEL", "RESULT"], out
        assert lines[1].split()[:4] == ["main", "openai", "m-openai", "ok"], out
        assert lines[2].split()[:4] == ["down", "openai", "m-openai", "FAILED"], out
        assert "down: 127.0.0.1:9: connect: Connection refused" in out, out
        assert "unauth: HTTP 401 authentication_error: Incorrect API key provided" in out, out
        assert lines[-1].split()[:2] == ["builtin", "builtin"], out
        # A check changes no breaker and no figure.
        status, _, models = node.json("GET", "/v1/models")
        assert status == 200
        for r in models["routes"]:
            assert r["calls"] == 0 and r["breaker"] == "closed", models
        texts = [out, err, json.dumps(doc), json.dumps(models), node.log_text()]
        assert all(KEY not in t for t in texts), "the key leaked"
        # A viewer may look but not check (a check costs tokens).
        status, _, problem = node.json("POST", "/v1/models/check", token=VIEWER)
        assert status == 403 and "needs operator" in problem["detail"], problem
        status, _, problem = node.json("POST", "/v1/models/check?timeout_ms=0")
        assert status == 400 and "timeout_ms" in problem["detail"], problem
        node.stop()


def test_check_exits_0_when_every_route_answers():
    with TempDir() as d, ModelServer([{"text": "pong"}], KEY) as good:
        node = Node(d, "model:\n" + route("anthropic", good.url) + "  fallback: [builtin]\n",
                    env_extra=ENV).start()
        code, out, err = check(node)
        assert code == 0, (code, out, err)
        assert out.splitlines()[1].split()[:4] == ["main", "anthropic", "m-anthropic", "ok"], out
        assert not good.violations, good.violations
        node.stop()
    with TempDir() as d:
        node = Node(d, "").start()  # the builtin reasoner: nothing to call
        code, out, err = check(node, "--json")
        assert code == 0, (code, out, err)
        assert json.loads(out)["routes"][0]["ok"] is True, out
        node.stop()


def test_check_times_out_a_route_that_never_answers():
    with TempDir() as d, ModelServer([{"hang": True}], KEY) as srv:
        node = Node(d, "model:\n" + route("openai", srv.url), env_extra=ENV).start()
        code, out, err = check(node, "--timeout", "300", "--json")
        srv.release()
        assert code == 1, (code, out, err)
        main = json.loads(out)["routes"][0]
        assert not main["ok"] and "timed out" in main["error"], main
        assert 250 <= main["latency_ms"] < 5000, main
        node.stop()


def make_ca(d):
    subprocess.run([DEV_CA, d, "model"], check=True, capture_output=True)
    return os.path.join(d, "ca.pem"), (os.path.join(d, "model.pem"), os.path.join(d, "model.key"))


def test_https_model_server_with_ca_file():
    with TempDir() as d:
        ca, cert = make_ca(os.path.join(d, "ca"))
        for provider, stream in (("openai", False), ("openai", True), ("anthropic", True)):
            with TempDir() as w, ModelServer(CONVERSATION, KEY, tls=cert) as srv:
                assert srv.url.startswith("https://127.0.0.1:")
                cfg = "model:\n" + route(provider, srv.url, stream) + f"  ca_file: {ca}\n"
                node = Node(w, cfg, env_extra=ENV).start()
                run_id = node.submit("checkout is failing: find out why and fix it")
                r = node.wait_run(run_id)
                steps = node.steps(run_id)
                assert r["state"] == "succeeded", (provider, stream, r, steps)
                assert not srv.violations, srv.violations
                assert [s["kind"] for s in steps] == ["reason", "tool", "reason", "conclude"], steps
                assert "the check is healthy" in r["conclusion"], r
                assert len(set(srv.clients)) == 1, f"not one kept-alive connection: {srv.clients}"
                node.stop()


def test_https_with_a_wrong_ca_names_the_route_and_the_cause():
    with TempDir() as d:
        _, cert = make_ca(os.path.join(d, "right"))
        wrong, _ = make_ca(os.path.join(d, "wrong"))
        with ModelServer([], KEY, tls=cert) as srv:
            cfg = ("model:\n" + route("openai", srv.url) + f"  ca_file: {wrong}\n"
                   "  max_attempts: 1\n")
            node = Node(d, cfg, env_extra=ENV).start()
            code, out, err = check(node)
            assert code == 1, (code, out, err)
            assert f"main: 127.0.0.1:{srv.port}: TLS handshake: certificate verify failed" in out, \
                out
            run_id = node.submit("checkout is failing: find out why and fix it")
            r = node.wait_run(run_id)
            assert r["state"] == "failed", r
            assert "main: attempt 1:" in r["error"] and "certificate verify failed" in r["error"], r
            assert srv.count() == 0  # no request got through
            node.stop()


def test_a_run_label_routes_its_model_calls():
    """model.by_label: runs labelled team=ml go to the `ml` route first (in place of main), then
    down the fallback chain; other runs go to main. The reason step's intent names the order."""
    answer = [{"text": "Cause: none; the check is healthy."}]
    with TempDir() as d, ModelServer(answer * 2, KEY) as main, \
            ModelServer(answer * 2, KEY) as ml:
        cfg = ("model:\n" + route("openai", main.url) +
               "  fallback: [builtin]\n"
               "  by_label:\n    - {label: team, value: ml, route: ml}\n"
               "models:\n  ml:\n" + route("anthropic", ml.url, indent="    "))
        node = Node(d, cfg, env_extra=ENV, auth=AUTH).start()
        status, _, doc = node.json("POST", "/v1/goals",
                                   {"goal": "is the trainer healthy?", "labels": {"team": "ml"}})
        assert status == 201, (status, doc)
        r = node.wait_run(doc["run"]["id"])
        assert r["state"] == "succeeded", r
        assert (main.count(), ml.count()) == (0, 1), (main.count(), ml.count())
        intent = node.steps(r["id"])[0]["args"]
        assert intent["route"] == "ml" and intent["chain"] == ["ml", "builtin"], intent
        assert node.steps(r["id"])[0]["result"]["answered_by"] == "ml"
        status, _, doc = node.json("POST", "/v1/goals",
                                   {"goal": "is checkout healthy?", "labels": {"team": "shop"}})
        r = node.wait_run(doc["run"]["id"])
        assert r["state"] == "succeeded", r
        assert (main.count(), ml.count()) == (1, 1), (main.count(), ml.count())
        intent = node.steps(r["id"])[0]["args"]
        assert intent["route"] == "main" and intent["chain"] == ["main", "builtin"], intent
        node.stop()
        bad = Node(d, "model:\n" + route("openai", main.url) +
                   "  by_label:\n    - {label: team, value: ml, route: nowhere}\n",
                   env_extra=ENV, auth=AUTH)
        msg = bad.start_fails()
        assert "sreh.yaml:" in msg and "no route 'nowhere'" in msg, msg


def test_example_configs_pass_config_check():
    examples = os.path.join(SOURCE, "examples", "configs")
    env = {"OPENAI_API_KEY": "sk-example-openai-0123456789",
           "ANTHROPIC_API_KEY": "sk-ant-example-0123456789"}
    for name, provider in (("ollama", "openai"), ("vllm", "openai"), ("llamacpp", "openai"),
                           ("openai", "openai"), ("anthropic", "anthropic"),
                           ("fallback", "openai")):
        path = os.path.join(examples, f"{name}.yaml")
        code, out, err = sreh_cli(["config", "check", path], env_extra=env)
        assert code == 0, (name, out, err)
        assert provider in out, (name, out)
        assert all(k not in out + err for k in env.values()), (name, out, err)


def test_example_configs_without_their_keys_check_with_a_warning_and_do_not_serve():
    """`config check` on a config whose key variable is unset passes, saying which variable serve
    needs; serve refuses it naming the variable, before its data dir exists."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SREH_TOKEN")}
    examples = os.path.join(SOURCE, "examples", "configs")
    for name, var in (("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
                      ("fallback", "ANTHROPIC_API_KEY")):
        path = os.path.join(examples, f"{name}.yaml")
        p = subprocess.run([SREH, "config", "check", path], env=env, capture_output=True,
                           text=True, timeout=30)
        warning = f"warning: {path}:"
        assert p.returncode == 0, (name, p.stdout, p.stderr)
        assert warning in p.stderr and f"environment variable '{var}' is not set" in p.stderr \
            and "`sreh serve` refuses to start until it is set" in p.stderr, (name, p.stderr)
        assert "not set (its variable is unset)" in p.stdout, (name, p.stdout)
        with TempDir() as d:
            data = os.path.join(d, "data")
            p = subprocess.run([SREH, "serve", "--config", path, "--listen", "127.0.0.1:1",
                                "--data-dir", data], env=env, capture_output=True, text=True,
                               timeout=30)
            assert p.returncode == 1 and f"environment variable '{var}' is not set" in p.stderr \
                and f"{path}:" in p.stderr, (name, p.returncode, p.stderr)
            assert not os.path.exists(data), (name, os.listdir(data))


if __name__ == "__main__":
    run_tests([test_check_names_each_route_and_its_cause,
               test_check_exits_0_when_every_route_answers,
               test_check_times_out_a_route_that_never_answers,
               test_https_model_server_with_ca_file,
               test_https_with_a_wrong_ca_names_the_route_and_the_cause,
               test_a_run_label_routes_its_model_calls,
               test_example_configs_pass_config_check,
               test_example_configs_without_their_keys_check_with_a_warning_and_do_not_serve])
