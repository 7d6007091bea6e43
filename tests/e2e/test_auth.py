"""Bearer-token auth against a real node: 401 for missing/malformed/unknown tokens (and nothing
changes), 403 for a role too low, identities as submitter and canceller, the generated
<data_dir>/admin.token (mode 0600), the CLI's token sources, and `auth: none` (loopback only).
"""

import json
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Node, TempDir, auth_block, raw_exchange, parse_http_response,  # noqa: E402
                     run_tests, sreh_cli, sse_events, SREH)

PLAN = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {service: checkout}}
"""
LONG = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {service: payments}}
    - {tool: test.sleep, args: {ms: 30000}}
"""
TOKENS = {
    "vera": ("viewer", "vera-secret-token"),
    "otto": ("operator", "otto-secret-token"),
    "alice": ("approver", "alice-secret-token"),
    "root": ("admin", "root-secret-token"),
}
N = None
FAKE_APR = "apr_01ARZ3NDEKTSV4RRFFQ69G5FAV"


def scratch():
    """A temp dir that (unlike harness.TempDir) leaves the shared node running."""
    return tempfile.TemporaryDirectory(prefix="sreh-e2e-auth-")


def tok(name):
    return TOKENS[name][1]


def runs_count():
    return N.stats()["store"]["runs"]


def problem(status, doc, fragment=None):
    assert doc and doc.get("status") == status, doc
    if fragment:
        assert fragment in doc.get("detail", ""), doc


# -- 401 -----------------------------------------------------------------------------------------

def test_health_needs_no_token():
    for path in ("/healthz", "/readyz"):
        status, _, _ = N.request("GET", path, token=None)
        assert status == 200, (path, status)


def test_missing_or_bad_token_is_401_and_changes_nothing():
    before = runs_count()
    cases = [None, "", "Basic dXNlcjpwYXNz", "Bearer", "Bearer wrong-token",
             f"Bearer {tok('root')}x"]
    for auth in cases:
        headers = {} if auth is None else {"Authorization": auth}
        for method, path, body in (("GET", "/v1/runs", None), ("GET", "/v1/stats", None),
                                   ("POST", "/v1/goals", {"goal": "nope"}),
                                   ("GET", "/v1/approvals", None)):
            status, hdrs, doc = N.json(method, path, body, headers=headers, token=None)
            assert status == 401, (auth, method, path, status, doc)
            assert hdrs.get("www-authenticate") == 'Bearer realm="sreh"', hdrs
            assert hdrs.get("content-type") == "application/problem+json"
            problem(401, doc)
    assert runs_count() == before, "a 401 created a run"


def test_sse_needs_a_token():
    status, hdrs, _ = N.request("GET", "/v1/events", token=None)
    assert status == 401 and "www-authenticate" in hdrs
    raw = raw_exchange(N.port, b"GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n", timeout=3, token=None)
    assert parse_http_response(raw)[0] == 401


# -- 403 and identities --------------------------------------------------------------------------

def test_viewer_reads_but_may_not_submit():
    before = runs_count()
    status, _, doc = N.json("POST", "/v1/goals", {"goal": "viewer tries"}, token=tok("vera"))
    assert status == 403, (status, doc)
    problem(403, doc, "role viewer may not POST /v1/goals (needs operator)")
    assert runs_count() == before, "a 403 created a run"
    for path in ("/v1/runs", "/v1/stats", "/v1/approvals"):
        assert N.request("GET", path, token=tok("vera"))[0] == 200, path


def test_operator_submits_as_itself_and_viewer_sees_it():
    status, _, doc = N.json("POST", "/v1/goals", {"goal": "operator goal"}, token=tok("otto"))
    assert status == 201, (status, doc)
    run = doc["run"]
    assert run["submitter"] == "otto", run
    evs = [(k, json.loads(d)) for _, k, d in
           sse_events(N.port, f"/v1/runs/{run['id']}/events", timeout=20, stop_after=1,
                      token=tok("vera"))]
    created = [d for k, d in evs if k == "run.created"]
    assert created and created[0]["data"]["submitter"] == "otto", created
    status, _, got = N.json("GET", f"/v1/runs/{run['id']}", token=tok("vera"))
    assert status == 200 and got["submitter"] == "otto"


def test_cancel_needs_operator_and_records_who():
    status, _, doc = N.json("POST", "/v1/goals", {"goal": "long one"}, token=tok("otto"))
    assert status == 201
    rid = doc["run"]["id"]
    status, _, doc = N.json("POST", f"/v1/runs/{rid}/cancel", token=tok("vera"))
    assert status == 403, (status, doc)
    problem(403, doc, "needs operator")
    assert N.json("GET", f"/v1/runs/{rid}", token=tok("vera"))[2]["state"] != "cancelled"
    status, _, doc = N.json("POST", f"/v1/runs/{rid}/cancel", token=tok("alice"))
    assert status == 200 and doc["run"]["state"] == "cancelled", (status, doc)
    evs = [(k, json.loads(d)) for _, k, d in
           sse_events(N.port, f"/v1/runs/{rid}/events", timeout=20, token=tok("root"))]
    cancelled = [d for k, d in evs if k == "run.cancelled"]
    assert cancelled, evs
    assert "alice" in json.dumps(cancelled[0]), cancelled[0]


def test_decision_needs_approver():
    body = {"decision": "approve"}
    for who in ("vera", "otto"):
        status, _, doc = N.json("POST", f"/v1/approvals/{FAKE_APR}/decision", body, token=tok(who))
        assert status == 403, (who, status, doc)
        problem(403, doc, "(needs approver)")
    for who in ("alice", "root"):  # past auth: the approval does not exist
        status, _, doc = N.json("POST", f"/v1/approvals/{FAKE_APR}/decision", body, token=tok(who))
        assert status == 404, (who, status, doc)
    status, _, doc = N.json("POST", "/v1/approvals/apr_nope/decision", body, token=tok("alice"))
    assert status == 400, (status, doc)


# -- the CLI -------------------------------------------------------------------------------------

def test_cli_uses_sreh_token():
    server = f"127.0.0.1:{N.port}"
    code, out, err = sreh_cli(["runs", "--server", server], token=tok("vera"))
    assert code == 0, (code, out, err)
    code, out, err = sreh_cli(["submit", "from cli", "--server", server], token=tok("vera"))
    assert code == 1 and "needs operator" in err, (code, out, err)
    code, out, err = sreh_cli(["submit", "from cli", "--server", server], token=tok("otto"))
    assert code == 0 and out.startswith("run_"), (code, out, err)
    code, out, err = sreh_cli(["runs", "--server", server], token="wrong")
    assert code == 1 and "not accepted" in err, (code, out, err)


def test_cli_without_token_says_how_to_get_one():
    with scratch() as d:
        code, out, err = sreh_cli(["runs", "--server", f"127.0.0.1:{N.port}"], token=None, cwd=d)
        assert code == 1, (code, out, err)
        assert "set SREH_TOKEN or pass --token-file" in err, err


def test_cli_token_file_option():
    with scratch() as d:
        path = os.path.join(d, "t")
        with open(path, "w") as f:
            f.write(tok("vera") + "\n")
        code, out, err = sreh_cli(["runs", "--server", f"127.0.0.1:{N.port}", "--token-file", path],
                                  token=None, cwd=d)
        assert code == 0, (code, out, err)


def test_token_subcommands():
    code, out, _ = sreh_cli(["token", "hash", "abc"], token=None)
    assert code == 0 and out.strip() == \
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    code, out, _ = sreh_cli(["token", "new"], token=None)
    lines = dict(ln.split(":", 1) for ln in out.strip().splitlines())
    token, digest = lines["token"].strip(), lines["sha256"].strip()
    assert code == 0 and len(token) == 64 and len(digest) == 64
    assert sreh_cli(["token", "hash", token], token=None)[1].strip() == digest


# -- the generated admin token -------------------------------------------------------------------

def test_generated_admin_token():
    with scratch() as d:
        node = Node(d, PLAN, auth="", token=None)
        try:
            generated_admin_token(node, d)
        finally:
            node.stop()


def generated_admin_token(node, d):
    node.start()
    path = os.path.join(node.data, "admin.token")
    assert os.path.exists(path), node.log_text()
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600, oct(mode)
    assert "generated an admin token in" in node.log_text()
    token = open(path).read().strip()
    assert len(token) == 64
    assert node.request("GET", "/v1/runs")[0] == 401
    status, _, doc = node.json("POST", "/v1/goals", {"goal": "admin goal"}, token=token)
    assert status == 201 and doc["run"]["submitter"] == "admin", (status, doc)
    # the CLI finds ./data/admin.token relative to its working directory
    code, out, err = sreh_cli(["runs", "--server", f"127.0.0.1:{node.port}"], token=None, cwd=d)
    assert code == 0 and "admin goal" in out, (code, out, err)
    # a restart reuses the same token
    node.stop()
    node.start()
    assert open(path).read().strip() == token
    assert node.request("GET", "/v1/runs", token=token)[0] == 200
    node.stop()
    # a token file others may read is refused
    os.chmod(path, 0o644)
    node.start(wait=False)
    assert node.wait_exit(20) != 0
    assert "group or others may read it" in node.log_text(), node.log_text()


# -- auth: none ----------------------------------------------------------------------------------

def test_auth_none_on_loopback():
    with scratch() as d:
        node = Node(d, PLAN, auth="auth: none\n", token=None).start()
        try:
            auth_none(node)
        finally:
            node.stop()


def auth_none(node):
    status, _, doc = node.json("POST", "/v1/goals", {"goal": "local goal"})
    assert status == 201 and doc["run"]["submitter"] == "local", (status, doc)
    assert "auth is off" in node.log_text(), node.log_text()
    assert not os.path.exists(os.path.join(node.data, "admin.token"))


def test_auth_none_off_loopback_is_a_config_error():
    with scratch() as d:
        cfg = os.path.join(d, "c.yaml")
        with open(cfg, "w") as f:
            f.write(f"listen: 0.0.0.0:0\ndata_dir: {d}/data\nauth:\n  mode: none\n")
        code, out, err = sreh_cli(["config", "check", cfg], token=None)
        assert code == 1, (code, out, err)
        assert f"{cfg}:4:9: auth.mode: none is allowed only when listen is a loopback" in err, err
        code, out, err = sreh_cli(["serve", "--config", cfg], token=None, timeout=20)
        assert code == 1 and "auth.mode" in err, (code, out, err)
        # --listen cannot sneak past it either
        ok = os.path.join(d, "ok.yaml")
        with open(ok, "w") as f:
            f.write(f"listen: 127.0.0.1:0\ndata_dir: {d}/data\nauth: none\n")
        code, out, err = sreh_cli(["serve", "--config", ok, "--listen", "0.0.0.0:0"], token=None,
                                  timeout=20)
        assert code == 1 and "auth.mode" in err, (code, out, err)


def test_bad_token_config_names_the_place():
    with scratch() as d:
        cfg = os.path.join(d, "c.yaml")
        with open(cfg, "w") as f:
            f.write("auth:\n  tokens:\n    - {name: a, role: viewer, sha256: abc}\n")
        code, _, err = sreh_cli(["config", "check", cfg], token=None)
        assert code == 1 and f"{cfg}:3:39: auth.tokens[0].sha256: expected exactly 64 hex" in err, err


if __name__ == "__main__":
    code = 0
    with TempDir() as d:
        N = Node(d, LONG, auth=auth_block(TOKENS), token=tok("root")).start()
        try:
            run_tests([test_health_needs_no_token, test_missing_or_bad_token_is_401_and_changes_nothing,
                   test_sse_needs_a_token, test_viewer_reads_but_may_not_submit,
                   test_operator_submits_as_itself_and_viewer_sees_it,
                   test_cancel_needs_operator_and_records_who, test_decision_needs_approver,
                   test_cli_uses_sreh_token, test_cli_without_token_says_how_to_get_one,
                   test_cli_token_file_option, test_token_subcommands,
                   test_generated_admin_token, test_auth_none_on_loopback,
                   test_auth_none_off_loopback_is_a_config_error,
                   test_bad_token_config_names_the_place])
        except SystemExit as e:
            code = e.code
        N.stop()
    sys.exit(code)
