"""Bad input of every kind gets a clear application/problem+json error and changes nothing.

Every HTTP case checks: the status; Content-Type application/problem+json; a problem body with
title/status/detail/instance/request_id; `detail` naming the culprit (field, id, parameter,
header); the X-Request-Id header (equal to the body's request_id); and that the store did not
change (GET /v1/stats store counts before == after). The node holds one finished run and one
idempotent submission so "nothing changed" is measured against a non-empty store.

Invalid config files: `sreh config check` exits 1 naming FILE:LINE:COL and the field, and
`sreh serve --config` exits non-zero with the same message without creating the data dir; the
same for a broken file a valid config names (policy, scenario, TLS certificate).
"""

import json
import os
import re
import select
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Node, TempDir, parse_http_response, raw_exchange, run_tests,  # noqa: E402
                     sreh_cli)

PLAN = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {k: 1}}
"""
UNKNOWN_RUN = "run_00000000000000000000000000"  # well-formed, never issued
N = None  # the shared node, started in __main__
SEED_RUN = None


def store_counts():
    st = N.stats()["store"]
    return {k: st[k] for k in ("runs", "steps", "events", "last_event_seq")}


def check_problem(status, hdrs, body, want_status, mentions, what):
    """Asserts a well-formed problem response; `mentions` is a list of alternatives lists: each
    inner list needs at least one (case-insensitive) substring present in `detail`."""
    assert status == want_status, f"{what}: status {status}, wanted {want_status}: {body[:300]!r}"
    ctype = hdrs.get("content-type", "")
    assert ctype.split(";")[0].strip() == "application/problem+json", \
        f"{what}: content-type {ctype!r}, wanted application/problem+json"
    rid = hdrs.get("x-request-id")
    assert rid, f"{what}: no X-Request-Id header ({hdrs})"
    try:
        doc = json.loads(body)
    except ValueError:
        raise AssertionError(f"{what}: problem body is not JSON: {body[:300]!r}")
    for k in ("title", "status", "detail", "instance", "request_id"):
        assert k in doc, f"{what}: problem without '{k}': {doc}"
    assert doc["status"] == want_status, f"{what}: body status {doc['status']}"
    assert doc["request_id"] == rid, f"{what}: body request_id {doc['request_id']} != header {rid}"
    assert isinstance(doc["title"], str) and doc["title"], f"{what}: empty title"
    detail = doc["detail"]
    assert isinstance(detail, str) and detail, f"{what}: empty detail"
    for alts in mentions:
        if isinstance(alts, str):
            alts = [alts]
        assert any(a.lower() in detail.lower() for a in alts), \
            f"{what}: detail {detail!r} does not mention any of {alts}"
    return doc


def expect(method, path, want_status, mentions, body=None, headers=None, what=None):
    """One request through http.client; checks the problem and that the store did not change."""
    what = what or f"{method} {path}"
    before = store_counts()
    status, hdrs, data = N.request(method, path, body=body, headers=headers)
    doc = check_problem(status, hdrs, data, want_status, mentions, what)
    after = store_counts()
    assert before == after, f"{what}: store changed {before} -> {after}"
    return hdrs, doc


def post_raw(body_bytes, want_status, mentions, ctype="application/json", what=None):
    return expect("POST", "/v1/goals", want_status, mentions, body=body_bytes,
                  headers={"Content-Type": ctype}, what=what or f"POST /v1/goals {body_bytes[:60]!r}")


def post_json(obj, want_status, mentions, what=None):
    return post_raw(json.dumps(obj).encode(), want_status, mentions, what=what)


# -- malformed JSON ------------------------------------------------------------------------------

def test_malformed_json():
    cases = [
        b'{"goal": "restart checkout"',            # truncated
        b'{"goal": "restart ch',                   # truncated inside a string
        b'{"goal": "x"} trailing',                 # trailing garbage
        b'{"goal": "x"}{"goal": "y"}',             # two documents
        b"{'goal': 'x'}",                          # single quotes
        b'{"goal": NaN}',                          # NaN is not JSON
        b'{"goal": "x", "budget": {"max_steps": Infinity}}',
        b'{"goal": "x",}',                         # trailing comma
        b'{goal: "x"}',                            # unquoted key
        b'',                                       # empty body
        b'   ',
    ]
    for body in cases:
        post_raw(body, 400, [["json", "body"]])


def test_not_an_object():
    for body in (b'[]', b'"goal"', b'42', b'null', b'[{"goal": "x"}]'):
        post_raw(body, 400, [["object", "json", "body"]])


# -- wrong types, missing / empty fields, unknown fields ----------------------------------------

def test_wrong_types():
    post_json({"goal": 42}, 400, ["goal"])
    post_json({"goal": None}, 400, ["goal"])
    post_json({"goal": ["x"]}, 400, ["goal"])
    post_json({"goal": "x", "labels": ["a", "b"]}, 400, ["labels"])
    post_json({"goal": "x", "labels": "env=prod"}, 400, ["labels"])
    post_json({"goal": "x", "labels": {"env": 3}}, 400, ["labels.env"])
    post_json({"goal": "x", "budget": {"max_steps": "5"}}, 400, ["budget.max_steps"])
    post_json({"goal": "x", "budget": {"max_steps": 1.5}}, 400, ["budget.max_steps"])
    post_json({"goal": "x", "budget": {"max_steps": 0}}, 400, ["budget.max_steps"])
    post_json({"goal": "x", "budget": {"max_steps": -3}}, 400, ["budget.max_steps"])
    post_json({"goal": "x", "budget": {"max_steps": 10 ** 30}}, 400, ["budget.max_steps"])
    post_json({"goal": "x", "budget": "lots"}, 400, ["budget"])


def test_missing_and_empty_goal():
    post_json({}, 400, ["goal"])
    post_json({"labels": {"a": "b"}}, 400, ["goal"])
    post_json({"goal": ""}, 400, ["goal"])
    post_json({"goal": "   \t\n "}, 400, ["goal"])
    post_json({"goal": "x" * 5000}, 400, ["goal"])  # over the 4096-byte goal limit


def test_unknown_fields():
    post_json({"goal": "x", "colour": "red"}, 400, ["colour"])
    post_json({"goal": "x", "budget": {"max_steps": 3, "max_coffee": 1}}, 400, ["max_coffee"])
    # a duplicate key is ambiguous: rejected rather than picking one
    post_raw(b'{"goal": "a", "goal": "b"}', 400, ["goal"])


def test_invalid_label_keys():
    post_json({"goal": "x", "labels": {"bad key!": "v"}}, 400, ["labels"])
    post_json({"goal": "x", "labels": {f"k{i}": "v" for i in range(40)}}, 400, ["labels"])


def test_invalid_utf8():
    for body in (b'{"goal": "caf\xc3\x28 is broken"}',  # bad continuation byte
                 b'{"goal": "\xff\xfe restart"}',       # bytes never valid in UTF-8
                 b'{"goal": "\xc0\xaf overlong"}',      # overlong encoding of '/'
                 b'{"goal": "\xed\xa0\x80 surrogate"}',  # UTF-8-encoded surrogate
                 b'{"goal": "x", "labels": {"env": "pr\x80d"}}',
                 b'{"goal": "lone \\ud800 surrogate escape"}'):
        post_raw(body, 400, [["utf-8", "utf8", "unicode", "surrogate", "encoding"]])


# -- limits: body size, nesting, header size -------------------------------------------------

def send_oversize(head, body_len, chunk=64 * 1024):
    """Sends `head` then `body_len` bytes of body in chunks, stopping as soon as the server
    answers; returns the parsed response."""
    s = socket.create_connection(("127.0.0.1", N.port), timeout=20)
    raw = b""
    try:
        s.sendall(head)
        sent = 0
        piece = b"{" + b"a" * (chunk - 1)
        deadline = time.time() + 30
        while sent < body_len and time.time() < deadline:
            r, _, _ = select.select([s], [], [], 0)
            if r:
                break  # the server answered before reading everything
            try:
                n = s.send(piece[:min(chunk, body_len - sent)])
            except OSError:
                break
            sent += n
        while True:
            try:
                c = s.recv(65536)
            except OSError:
                break
            if not c:
                break
            raw += c
            if b"\r\n\r\n" in raw:
                st, h, b = parse_http_response(raw)
                if len(b) >= int(h.get("content-length", "0")):
                    break
    finally:
        s.close()
    assert raw, "no response to the oversize request"
    return parse_http_response(raw)


def test_body_10mb():
    before = store_counts()
    size = 10 * 1024 * 1024
    head = (f"POST /v1/goals HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n").encode()
    status, hdrs, body = send_oversize(head, size)
    check_problem(status, hdrs, body, 413, [["body", "bytes", "large", "1048576"]], "10 MB body")
    assert N.request("GET", "/healthz")[0] == 200, "unhealthy after a 10 MB body"
    assert N.proc.poll() is None, "server died"
    assert store_counts() == before


def test_body_just_over_limit():
    # a valid JSON document of 1 MiB + a few bytes, sent by http.client
    goal = "x" * 100
    pad = " " * (1024 * 1024)
    body = ('{"goal": "' + goal + '"' + pad + '}').encode()
    post_raw(body, 413, [["body", "bytes", "large", "1048576"]], what="1 MiB + body")
    assert N.request("GET", "/healthz")[0] == 200


def test_limits_positive_controls():
    """Just under the limits is accepted: a 15 KiB header, a body of 1 MiB minus a little."""
    status, _, _ = N.request("GET", "/v1/runs?limit=1", headers={"X-Big": "a" * (15 * 1024)})
    assert status == 200, f"15 KiB header: {status}"
    body = b'{"goal": "padded body"' + b" " * (1024 * 1024 - 200) + b"}"
    status, _, doc = N.request("POST", "/v1/goals", body=body,
                               headers={"Content-Type": "application/json"})
    assert status == 201, f"1 MiB - 200 B body: {status} {doc[:200]!r}"
    N.wait_run(json.loads(doc)["run"]["id"])


def test_deep_nesting():
    deep = b'{"goal": "x", "labels": ' + b'[' * 10000 + b']' * 10000 + b'}'
    post_raw(deep, 400, [["depth", "deep", "nest"]], what="labels nested 10,000 deep")
    deep_obj = b'{"a":' * 10000 + b'1' + b'}' * 10000
    post_raw(deep_obj, 400, [["depth", "deep", "nest"]], what="object nested 10,000 deep")
    # 33 levels: just over the default limit of 32
    d33 = b'{"goal": "x", "labels": ' + b'[' * 32 + b']' * 32 + b'}'
    post_raw(d33, 400, [["depth", "deep", "nest"]], what="33 levels")
    assert N.request("GET", "/healthz")[0] == 200


def test_header_too_large():
    before = store_counts()
    big = "a" * (17 * 1024)
    req = (f"GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {big}\r\n"
           "Connection: close\r\n\r\n").encode()
    status, hdrs, body = parse_http_response(raw_exchange(N.port, req))
    check_problem(status, hdrs, body, 431, [["header"]], "17 KiB header")
    # many moderate headers adding up to more than 16 KiB
    many = "".join(f"X-H{i}: {'b' * 200}\r\n" for i in range(100))
    req = (f"POST /v1/goals HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}Content-Type: application/json\r\n"
           'Content-Length: 13\r\nConnection: close\r\n\r\n{"goal": "x"}').encode()
    status, hdrs, body = parse_http_response(raw_exchange(N.port, req))
    check_problem(status, hdrs, body, 431, [["header"]], "100 headers of 200 bytes")
    assert store_counts() == before
    assert N.request("GET", "/healthz")[0] == 200


# -- routes, methods, content types ------------------------------------------------------------

def test_unknown_routes():
    for path in ("/v1/nope", "/nope", "/v1/runs/" + SEED_RUN + "/nope", "/v2/runs", "/v1/goals/x"):
        expect("GET", path, 404, [[path, "route", "not found", "no such"]])


def test_wrong_methods():
    for method, path, allow in (("DELETE", "/v1/runs", "GET"),
                                ("GET", "/v1/goals", "POST"),
                                ("PUT", "/v1/goals", "POST"),
                                ("GET", f"/v1/runs/{SEED_RUN}/cancel", "POST"),
                                ("POST", f"/v1/runs/{SEED_RUN}", "GET"),
                                ("DELETE", f"/v1/runs/{SEED_RUN}", "GET"),
                                ("POST", "/healthz", "GET")):
        body = b'{"goal": "x"}' if method in ("POST", "PUT") else None
        headers = {"Content-Type": "application/json"} if body else None
        hdrs, _ = expect(method, path, 405, [[method, "method"]], body=body, headers=headers)
        got = [m.strip() for m in hdrs.get("allow", "").split(",")]
        assert allow in got, f"{method} {path}: Allow {hdrs.get('allow')!r}, wanted {allow}"
        assert method not in got, f"{method} {path}: Allow {got} lists the rejected method"


def test_wrong_content_type():
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "application/xml",
                  "multipart/form-data; boundary=x"):
        post_raw(b'{"goal": "x"}', 415, [["content-type", "content type", "json"]], ctype=ctype,
                 what=f"POST with {ctype}")
    # no Content-Type at all
    expect("POST", "/v1/goals", 415, [["content-type", "content type", "json"]],
           body=b'{"goal": "x"}', headers={}, what="POST without Content-Type")


# -- run ids -----------------------------------------------------------------------------------

def malformed_ids():
    return ("run_x", "abc", "run_123", "job_" + SEED_RUN[4:],
            "run_0000000000000000000000000U",   # U is not Crockford base32
            "run_000000000000000000000000000",  # one character too long
            "run_90000000000000000000000000")   # first character over 7


def test_malformed_run_ids():
    for rid in malformed_ids():
        expect("GET", f"/v1/runs/{rid}", 400, [rid])
        expect("GET", f"/v1/runs/{rid}/steps", 400, [rid])
        expect("POST", f"/v1/runs/{rid}/cancel", 400, [rid])
        expect("GET", f"/v1/runs/{rid}/events", 400, [rid],
               headers={"Accept": "text/event-stream"})


def test_unknown_run_ids():
    rid = UNKNOWN_RUN
    expect("GET", f"/v1/runs/{rid}", 404, [rid])
    expect("GET", f"/v1/runs/{rid}/steps", 404, [rid])
    expect("POST", f"/v1/runs/{rid}/cancel", 404, [rid])
    expect("GET", f"/v1/runs/{rid}/events", 404, [rid], headers={"Accept": "text/event-stream"})


# -- SSE resume points, query parameters -------------------------------------------------------

def test_bad_last_event_id():
    for bad in ("abc", "-1", "1e9999", "9" * 400, "1.5", "0x10", "99999999999999999999"):
        for path in (f"/v1/runs/{SEED_RUN}/events", "/v1/events"):
            expect("GET", path, 400, ["Last-Event-ID"],
                   headers={"Accept": "text/event-stream", "Last-Event-ID": bad},
                   what=f"GET {path} Last-Event-ID {bad[:20]}")
    expect("GET", "/v1/events?last_event_id=abc", 400, ["last_event_id"],
           headers={"Accept": "text/event-stream"})
    expect("GET", "/v1/events?run=bogus", 400, [["run", "bogus"]],
           headers={"Accept": "text/event-stream"})


def test_bad_list_params():
    for bad in ("0", "-1", "abc", "501", "1.5", "", "3x", "99999999999999999999"):
        expect("GET", f"/v1/runs?limit={bad}", 400, ["limit"])
    for bad in ("bogus", "SUCCEEDED", "done"):
        expect("GET", f"/v1/runs?state={bad}", 400, ["state", bad])
    expect("GET", "/v1/runs?cursor=notarun", 400, ["cursor"])


def test_bad_idempotency_key():
    expect("POST", "/v1/goals", 400, ["Idempotency-Key"], body=b'{"goal": "x"}',
           headers={"Content-Type": "application/json", "Idempotency-Key": "k" * 256})


def test_idempotency_key_reuse():
    key = "reuse-key-1"
    before = store_counts()
    status, _, doc = N.json("POST", "/v1/goals", {"goal": "first goal"}, {"Idempotency-Key": key})
    assert status == 201, f"first submit {status} {doc}"
    rid = doc["run"]["id"]
    N.wait_run(rid)
    mid = store_counts()
    assert mid["runs"] == before["runs"] + 1
    _, pdoc = expect("POST", "/v1/goals", 422, [["idempotency"], [rid]],
                     body=json.dumps({"goal": "second, different goal"}).encode(),
                     headers={"Content-Type": "application/json", "Idempotency-Key": key})
    status, _, again = N.json("POST", "/v1/goals", {"goal": "first goal"}, {"Idempotency-Key": key})
    assert status == 200 and again["run"]["id"] == rid, f"same key, same goal: {status} {again}"
    assert store_counts() == mid, "a replayed submission changed the store"
    status, _, page = N.json("GET", "/v1/runs?limit=500")
    goals = [r["goal"] for r in page["runs"]]
    assert goals.count("first goal") == 1 and "second, different goal" not in goals, goals


def raw_problem(req, want_status, mentions, what):
    before = store_counts()
    status, hdrs, body = parse_http_response(raw_exchange(N.port, req))
    check_problem(status, hdrs, body, want_status, mentions, what)
    assert store_counts() == before, f"{what}: store changed"
    assert N.request("GET", "/healthz")[0] == 200


def test_chunked_body_over_limit():
    chunk = b"x" * 65536
    body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(20)) + b"0\r\n\r\n"
    raw_problem(b"POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n" + body, 413, [["body", "1048576"]],
                "1.25 MiB chunked body")


def test_malformed_http():
    raw_problem(b"GARBAGE\r\n\r\n", 400, [["malformed", "method", "request"]], "garbage line")
    raw_problem(b"POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: abc\r\n\r\n{}", 400, ["Content-Length"], "bad Content-Length")
    # request smuggling shapes: both Content-Length and chunked; two different Content-Lengths
    raw_problem(b"POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 13\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                b'd\r\n{"goal": "x"}\r\n0\r\n\r\n', 400, [["Transfer-Encoding", "Content-Length"]],
                "Content-Length with chunked")
    raw_problem(b"POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 13\r\nContent-Length: 14\r\nConnection: close\r\n\r\n"
                b'{"goal": "x"}', 400, ["Content-Length"], "two Content-Lengths")
    raw_problem(b"GET /v1/runs?limit=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                400, ["%zz"], "bad percent-encoding")
    raw_problem(b"GET /v1/runs/run_%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                400, ["run id"], "NUL in the run id")


def test_truncated_body_creates_nothing():
    """Content-Length promises 100 bytes, the client sends 12 and half-closes: no run."""
    before = store_counts()
    raw_exchange(N.port, b"POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b'Content-Length: 100\r\n\r\n{"goal":"x"}', timeout=3, shut_write=True)
    assert store_counts() == before, "a truncated body created something"
    assert N.request("GET", "/healthz")[0] == 200


def test_connection_usable_after_400():
    import http.client
    import harness
    c = http.client.HTTPConnection("127.0.0.1", N.port, timeout=10)
    try:
        c.request("POST", "/v1/goals", body=b"{bad", headers={"Content-Type": "application/json",
                                                        "Authorization": f"Bearer {harness.TOKEN}"})
        r = c.getresponse()
        r.read()
        assert r.status == 400
        c.request("GET", "/healthz")
        r = c.getresponse()
        assert r.status == 200 and b"ok" in r.read(), "keep-alive connection broken after a 400"
    finally:
        c.close()


def test_nul_in_goal_round_trips_or_is_rejected():
    status, _, doc = N.json("POST", "/v1/goals", {"goal": "a\u0000b"})
    if status == 400:
        assert "goal" in doc["detail"]
        return
    assert status == 201, f"NUL goal: {status} {doc}"
    rid = doc["run"]["id"]
    N.wait_run(rid)
    assert N.run(rid)["goal"] == "a\u0000b", f"stored goal {N.run(rid)['goal']!r}"


def test_concurrent_idempotency_key_reuse():
    """10 concurrent submissions with one key, half of them with another goal: exactly one run,
    one 201, the same goal gets 200 with that run, the other goal 422."""
    import threading
    before = store_counts()
    results = []

    def go(goal):
        s, _, d = N.json("POST", "/v1/goals", {"goal": goal}, {"Idempotency-Key": "concurrent-key"})
        results.append((goal, s, d))

    threads = [threading.Thread(target=go, args=("alpha" if i % 2 else "beta",)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    statuses = sorted(s for _, s, _ in results)
    assert len(results) == 10 and statuses.count(201) == 1, f"statuses {statuses}"
    winner_goal = [g for g, s, _ in results if s == 201][0]
    rid = [d for _, s, d in results if s == 201][0]["run"]["id"]
    for g, s, d in results:
        if g == winner_goal:
            assert s in (200, 201) and d["run"]["id"] == rid, f"{g}: {s} {d}"
        else:
            assert s == 422 and rid in d["detail"], f"{g}: {s} {d}"
    N.wait_run(rid)
    assert store_counts()["runs"] == before["runs"] + 1


# -- config files ------------------------------------------------------------------------------

BROKEN_CONFIGS = {
    # name: (text, line, col regexp, field that must be named)
    "unknown_key": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nbogus_key: 1\n",
                    3, "bogus_key"),
    "wrong_type": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nlimits:\n  max_body_bytes: lots\n",
                   4, "limits.max_body_bytes"),
    "bad_listen": ("data_dir: {data}\nlisten: not-an-address\n", 2, "listen"),
    "bad_port": ("listen: 127.0.0.1:99999\ndata_dir: {data}\n", 1, "listen"),
    "nested_unknown": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nlimits:\n  sse_heartbeat: 5\n",
                       4, "sse_heartbeat"),
    "syntax_error": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nmodel: {{provider: scripted\n"
                     "  script: [\n", None, "yaml"),
    "bad_indent": ("listen: 127.0.0.1:{port}\n  data_dir: {data}\n", 2, "yaml"),
    "unknown_provider": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nmodel:\n  provider: nope\n",
                         4, "model.provider"),
    "script_args_type": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nmodel:\n  provider: scripted\n"
                         "  script:\n    - {{tool: test.echo, args: [1, 2]}}\n",
                         6, "model.script[0].args"),
    "out_of_range": ("listen: 127.0.0.1:{port}\ndata_dir: {data}\nlimits:\n  max_json_depth: 100000\n",
                     4, "limits.max_json_depth"),
}


def check_broken_config(d, name, text, line, field):
    data = os.path.join(d, f"data-{name}")
    path = os.path.join(d, f"{name}.yaml")
    with open(path, "w") as f:
        f.write(text.format(port=1, data=data))
    rc, out, err = sreh_cli(["config", "check", path], timeout=20)
    msg = out + err
    assert rc == 1, f"{name}: config check exited {rc}, wanted 1: {msg!r}"
    m = re.search(re.escape(path) + r":(\d+):(\d+)", msg)
    assert m, f"{name}: message does not name {path}:LINE:COL: {msg!r}"
    if line is not None:
        assert int(m.group(1)) == line, f"{name}: line {m.group(1)}, wanted {line}: {msg!r}"
    if field is not None:
        assert field.lower() in msg.lower(), f"{name}: message does not name {field}: {msg!r}"
    rc2, out2, err2 = sreh_cli(["serve", "--config", path], timeout=20)
    msg2 = out2 + err2
    assert rc2 != 0, f"{name}: serve exited 0 with a broken config"
    assert m.group(0) in msg2, f"{name}: serve message {msg2!r} lacks {m.group(0)}"
    first = [ln for ln in msg.splitlines() if m.group(0) in ln][0]
    assert first.split(m.group(0), 1)[1] in msg2, f"{name}: serve says {msg2!r}, check said {msg!r}"
    assert not os.path.exists(data), f"{name}: serve created the data dir {data}"


def scratch_dir():
    """A temp dir that, unlike TempDir, does not kill the shared node on exit."""
    return tempfile.mkdtemp(prefix="sreh-e2e-cfg-")


def test_broken_configs():
    d = scratch_dir()
    try:
        for name, (text, line, field) in BROKEN_CONFIGS.items():
            check_broken_config(d, name, text, line, field)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_missing_config_file():
    d = scratch_dir()
    try:
        path = os.path.join(d, "nope.yaml")
        rc, out, err = sreh_cli(["config", "check", path], timeout=20)
        assert rc == 1 and path in out + err, f"missing file: rc {rc}: {out + err!r}"
        rc, out, err = sreh_cli(["serve", "--config", path], timeout=20)
        assert rc != 0 and path in out + err, f"serve with missing file: rc {rc}: {out + err!r}"
        assert os.listdir(d) == [], f"serve created {os.listdir(d)}"
    finally:
        shutil.rmtree(d, ignore_errors=True)


# A config whose files are good YAML to the config loader but broken themselves: name: (the file
# it names, that file's text, the config line naming it, a regexp of what the message must say).
BROKEN_NAMED_FILES = {
    "policy_syntax": ("policy.yaml", "mode: review\nrules:\n  - id: a\n    when: {tools: [x]\n",
                      "policy_file: policy.yaml\n",
                      r"policy_file: {file}:\d+:\d+: invalid YAML"),
    "policy_field": ("policy.yaml", "mode: sometimes\n", "policy_file: policy.yaml\n",
                     r"policy_file: {file}:1:7: mode: "),
    "scenario": ("scenario.yaml", "scenario: s\nworld: {world: w, services: [{name: a}]}\n"
                 "faults:\n  - {kind: bad_luck, target: a, at: -1m}\nalert: {name: A}\n"
                 "goal: fix a\nexpect: {detected: true}\n",
                 "sandbox: {scenario: scenario.yaml}\n",
                 r"sandbox.scenario: {file}:4:\d+: faults\[0\].kind: unknown fault kind 'bad_luck'"),
    "tls_cert": ("cert.pem", "not a certificate\n",
                 "tls: {cert_file: cert.pem, key_file: cert.pem}\n",
                 r"tls.cert_file: cannot use '{file}'"),
}


def test_broken_named_files_fail_the_check_and_serve_writes_nothing():
    """Every file a config names is parsed by `config check` as by `serve`, and serve refuses
    it before it writes anything to its data dir (no lock, no tokens)."""
    d = scratch_dir()
    try:
        for name, (file, text, line, expect) in BROKEN_NAMED_FILES.items():
            sub = os.path.join(d, name)
            os.mkdir(sub)
            path, data = os.path.join(sub, file), os.path.join(sub, "data")
            with open(path, "w") as f:
                f.write(text)
            config = os.path.join(sub, "sreh.yaml")
            with open(config, "w") as f:
                f.write(f"listen: 127.0.0.1:1\ndata_dir: {data}\n" + line)
            want = re.compile(expect.replace("{file}", re.escape(path)))
            rc, out, err = sreh_cli(["config", "check", config], timeout=20)
            assert rc == 1 and want.search(err), f"{name}: config check: rc {rc}: {out + err!r}"
            rc, out, err = sreh_cli(["serve", "--config", config], timeout=20)
            assert rc == 1 and want.search(err), f"{name}: serve: rc {rc}: {out + err!r}"
            assert not os.path.exists(data), f"{name}: serve wrote {os.listdir(data)} to {data}"
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_good_config_checks_ok():
    rc, out, err = sreh_cli(["config", "check", N.config], timeout=20)
    assert rc == 0, f"a valid config failed the check: {rc} {out + err!r}"
    assert N.proc.poll() is None and N.request("GET", "/healthz")[0] == 200, "the node died"


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        N = Node(d, PLAN).start()
        SEED_RUN = N.submit("seed run")
        N.wait_run(SEED_RUN, states=("succeeded",))
        try:
            run_tests([test_malformed_json, test_not_an_object, test_wrong_types,
                       test_missing_and_empty_goal, test_unknown_fields, test_invalid_label_keys,
                       test_invalid_utf8, test_body_10mb, test_body_just_over_limit,
                       test_limits_positive_controls,
                       test_deep_nesting, test_header_too_large, test_unknown_routes,
                       test_wrong_methods, test_wrong_content_type, test_malformed_run_ids,
                       test_unknown_run_ids, test_bad_last_event_id, test_bad_list_params,
                       test_bad_idempotency_key, test_idempotency_key_reuse,
                       test_chunked_body_over_limit, test_malformed_http,
                       test_truncated_body_creates_nothing, test_connection_usable_after_400,
                       test_nul_in_goal_round_trips_or_is_rejected,
                       test_concurrent_idempotency_key_reuse,
                       test_broken_configs, test_missing_config_file,
                       test_broken_named_files_fail_the_check_and_serve_writes_nothing,
                       test_good_config_checks_ok])
        except SystemExit as e:
            code = e.code
        N.stop()
    sys.exit(code)
