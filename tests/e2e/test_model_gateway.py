"""The model gateway end to end: runs driven by a language model behind the `openai` and the
`anthropic` provider, the model being a local test server (model_server.py) that speaks each
wire format, checks every request against the official shapes and replays a tool-calling
conversation from a script.

Shows: a run through each provider to a conclusion with tool calls (streamed and not, two calls
in one response); a retry after 429 with Retry-After and after 529; fallback to the next route
when one is down, and to builtin when all are; bad tool arguments turned into a tool result the
model sees; a planted API key absent from the log, events, journal, problem responses and
`sreh config check`; kill -9 during a model call: recovery calls again, the run finishes, and no
committed response is requested twice; a person's message said while the model thinks reaches
its next request as a user turn, and that reason step journals it as seen.
"""

import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import (SREH, TOKEN, Node, TempDir, run_tests, sreh_cli,  # noqa: E402
                     sse_events)
from model_server import ModelServer  # noqa: E402

KEY = "sk-e2e-PLANTED-key-7f3a9c1d2b4e6f80"
ENV = {"E2E_MODEL_KEY": KEY}

CONVERSATION = [
    {"text": "Checking the service first.", "calls": [("test_echo", '{"check": "cpu"}')]},
    {"calls": [("test_record", '{"action": "restart checkout"}')]},
    {"text": "Cause: checkout was wedged; restarted it and the check is healthy."},
]


def model_config(provider, url, stream=False, extra=""):
    base = url + "/v1" if provider == "openai" else url
    return (f"model:\n  provider: {provider}\n  base_url: {base}\n  model: test-model\n"
            f"  api_key: ${{E2E_MODEL_KEY}}\n  stream: {'true' if stream else 'false'}\n"
            f"  price: {{input: 3.0, output: 15.0}}\n" + extra)


def run_to_end(node, goal="checkout is failing: find out why and fix it"):
    run_id = node.submit(goal)
    r = node.wait_run(run_id)
    return run_id, r, node.steps(run_id)


def kinds(steps):
    return [f"{s['kind']}:{s['state']}" for s in steps]


def records(node):
    try:
        with open(node.record) as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def conversation_run(provider, stream):
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        node = Node(d, model_config(provider, srv.url, stream), env_extra=ENV).start()
        run_id, r, steps = run_to_end(node)
        assert not srv.violations, srv.violations
        assert r["state"] == "succeeded", (r, steps)
        assert kinds(steps) == ["reason:succeeded", "tool:succeeded", "reason:succeeded",
                                "tool:succeeded", "reason:succeeded", "conclude:succeeded"], \
            kinds(steps)
        assert "checkout was wedged" in r["conclusion"], r["conclusion"]
        assert steps[1]["tool"] == "test.echo" and steps[3]["tool"] == "test.record"
        assert records(node) == [f"{run_id}:4"], records(node)
        assert srv.count() == 3, srv.count()
        assert len(set(srv.clients)) == 1, f"not one kept-alive connection: {srv.clients}"
        first = json.loads(json.dumps(steps[0]["args"]))
        assert first["request_hash"].startswith("fnv1a64:") and first["context"]["tools"] > 0
        out = steps[4]["result"]
        assert out["answered_by"] == "main" and out["provider"] == provider, out
        assert out["usage"]["input_tokens"] > 0
        per_call = out["usage"]["input_tokens"] + out["usage"]["output_tokens"]
        assert r["tokens"] == 3 * per_call, r["tokens"]
        assert r["cost"] > 0, r
        # The second request carries the first tool call and its result back to the model.
        second = srv.requests[1][2]
        if provider == "openai":
            roles = [m["role"] for m in second["messages"]]
            assert roles[:4] == ["system", "user", "assistant", "tool"], roles
        else:
            assert second["messages"][1]["content"][-1]["type"] == "tool_use"
            assert second["system"]
        node.stop()


def test_openai_conversation():
    conversation_run("openai", stream=False)


def test_openai_streamed_conversation():
    conversation_run("openai", stream=True)


def test_anthropic_conversation():
    conversation_run("anthropic", stream=False)


def test_anthropic_streamed_conversation():
    conversation_run("anthropic", stream=True)


def test_retry_after_429_and_529_two_calls_in_one_response():
    script = [{"status": 429, "headers": {"retry-after": "1"}, "error": "slow down"},
              {"calls": [("test_echo", '{"a": 1}'), ("test_echo", '{"b": 2}')]},
              {"status": 529, "error": "Overloaded"},
              {"text": "All checks pass."}]
    for provider in ("openai", "anthropic"):
        with TempDir() as d, ModelServer(script, KEY) as srv:
            node = Node(d, model_config(provider, srv.url, stream=provider == "anthropic"),
                        env_extra=ENV).start()
            run_id, r, steps = run_to_end(node)
            assert not srv.violations, srv.violations
            assert r["state"] == "succeeded", (r, steps)
            assert kinds(steps) == ["reason:succeeded", "tool:succeeded", "tool:succeeded",
                                    "reason:succeeded", "conclude:succeeded"], kinds(steps)
            assert [s["args"] for s in steps[1:3]] == [{"a": 1}, {"b": 2}]
            log = " | ".join(steps[0]["result"]["attempts"])
            assert "HTTP 429" in log and "after the 1000 ms" in log, log
            assert "HTTP 529" in " | ".join(steps[3]["result"]["attempts"])
            assert srv.count() == 4, srv.count()
            node.stop()


def test_streamed_text_reaches_watchers_as_model_delta():
    script = [dict(CONVERSATION[0], gate=True), CONVERSATION[1], CONVERSATION[2]]
    for provider in ("openai", "anthropic"):
        with TempDir() as d, ModelServer(script, KEY) as srv:
            node = Node(d, model_config(provider, srv.url, stream=True), env_extra=ENV).start()
            run_id = node.submit("checkout is failing: find out why and fix it")
            assert srv.gated.wait(30)
            deltas, kinds_seen = [], []
            for eid, kind, data in sse_events(node.port, f"/v1/runs/{run_id}/events"):
                kinds_seen.append(kind)
                if len(kinds_seen) == 1:
                    srv.gate.set()  # the stream is live: let the model answer
                if kind == "model.delta":
                    assert eid is None, "a model.delta has an id (it is never stored)"
                    deltas.append(json.loads(data))
            text = "".join(x["data"]["text"] for x in deltas)
            assert text == CONVERSATION[0]["text"] + CONVERSATION[2]["text"], (text, kinds_seen)
            assert {x["data"]["step"] for x in deltas} == {1, 5}, deltas
            stored = [k for k in kinds_seen if k != "model.delta"]
            again = [k for _, k, _ in sse_events(node.port, f"/v1/runs/{run_id}/events")]
            assert again == stored, "model.delta was journaled or the stream differs"
            node.stop()


def test_sreh_watch_shows_the_model_thinking():
    script = [dict(CONVERSATION[0], gate=True), CONVERSATION[1], CONVERSATION[2]]
    with TempDir() as d, ModelServer(script, KEY) as srv:
        node = Node(d, model_config("openai", srv.url, stream=True), env_extra=ENV).start()
        run_id = node.submit("checkout is failing: find out why and fix it")
        assert srv.gated.wait(30)
        env = dict(os.environ, SREH_TOKEN=TOKEN, NO_COLOR="1")
        watch = subprocess.Popen([SREH, "watch", run_id, "--server", f"127.0.0.1:{node.port}"],
                                 stdout=subprocess.PIPE, text=True, env=env)
        try:
            lines = [watch.stdout.readline()]  # the replayed "created": the stream is live
            srv.gate.set()
            lines += watch.stdout.readlines()
            assert watch.wait(30) == 0
        finally:
            watch.kill()
        out = "".join(lines)
        assert "model  " + CONVERSATION[0]["text"] in out, out
        assert "model  " + CONVERSATION[2]["text"] in out, out
        node.stop()


def test_timeout_and_cut_stream_are_retried():
    script = [{"hang": True}, CONVERSATION[0], {"cut": True}, CONVERSATION[1], CONVERSATION[2]]
    for provider in ("openai", "anthropic"):
        with TempDir() as d, ModelServer(script, KEY) as srv:
            node = Node(d, model_config(provider, srv.url, stream=True,
                                        extra="  read_timeout_ms: 300\n"), env_extra=ENV).start()
            run_id, r, steps = run_to_end(node)
            assert not srv.violations, srv.violations
            assert r["state"] == "succeeded", (r, steps)
            first = " | ".join(steps[0]["result"]["attempts"])
            assert "timed out (read_timeout)" in first, first
            second = " | ".join(steps[2]["result"]["attempts"])
            assert "main: attempt 1:" in second and "answered (attempt 2" in second, second
            assert srv.count() == 5, srv.count()
            node.stop()


def test_fallback_when_a_route_is_down():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        down = "http://127.0.0.1:9"  # discard port: connection refused
        extra = ("  max_attempts: 1\n  fallback: [backup]\n"
                 f"models:\n  backup:\n    provider: anthropic\n    base_url: {srv.url}\n"
                 "    model: backup-model\n    api_key: ${E2E_MODEL_KEY}\n")
        node = Node(d, model_config("openai", down + "/v1", extra=extra), env_extra=ENV).start()
        run_id, r, steps = run_to_end(node)
        assert not srv.violations, srv.violations
        assert r["state"] == "succeeded", (r, steps)
        reasons = [s for s in steps if s["kind"] == "reason"]
        assert all(s["result"]["answered_by"] == "backup" for s in reasons), reasons
        assert "main: attempt 1" in reasons[0]["result"]["attempts"][0]
        code, out, err = sreh_cli(["models", "--server", f"127.0.0.1:{node.port}"])
        assert code == 0, err
        lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
        assert lines["main"][1] == "openai" and int(lines["main"][5]) == 3, out  # 3 failures
        assert lines["backup"][1] == "anthropic" and int(lines["backup"][4]) == 3, out
        assert lines["backup"][3] == "closed", out
        assert KEY not in out
        node.stop()


def test_all_down_builtin_answers():
    with TempDir() as d:
        extra = "  max_attempts: 1\n  fallback: [builtin]\n"
        node = Node(d, model_config("openai", "http://127.0.0.1:9/v1", extra=extra),
                    env_extra=ENV).start()
        run_id, r, steps = run_to_end(node)
        reasons = [s for s in steps if s["kind"] == "reason"]
        assert reasons and all(s["result"]["answered_by"] == "builtin" for s in reasons), steps
        assert r["state"] in ("succeeded", "failed"), r
        node.stop()


def test_bad_tool_arguments_are_repaired():
    script = [{"calls": [("test_record", '{"action": ')]},          # not JSON
              {"calls": [("no_such_tool", "{}")]},                   # unknown tool
              {"calls": [("test_record", '{"action": 42}')]},        # fails the schema
              {"calls": [("test_record", '{"action": "restart"}')]},
              {"text": "Restarted."}]
    with TempDir() as d, ModelServer(script, KEY) as srv:
        node = Node(d, model_config("openai", srv.url), env_extra=ENV).start()
        run_id, r, steps = run_to_end(node)
        assert not srv.violations, srv.violations
        assert r["state"] == "succeeded", (r, steps)
        tools = [s for s in steps if s["kind"] == "tool"]
        assert [s["state"] for s in tools] == ["failed", "failed", "failed", "succeeded"], tools
        assert "not a JSON object" in tools[0]["error"], tools[0]
        assert "unknown tool 'no_such_tool'" in tools[1]["error"], tools[1]
        assert "invalid arguments" in tools[2]["error"], tools[2]
        assert records(node) == [f"{run_id}:{tools[3]['n']}"], records(node)
        # The model was told: the second request carries the first call's error as its result.
        tool_msgs = [m for m in srv.requests[1][2]["messages"] if m["role"] == "tool"]
        assert tool_msgs and "not a JSON object" in tool_msgs[-1]["content"], tool_msgs
        node.stop()


def test_repairs_are_bounded():
    script = [{"text": ""}] * 6
    with TempDir() as d, ModelServer(script, KEY) as srv:
        node = Node(d, model_config("openai", srv.url, extra="  max_repairs: 2\n"),
                    env_extra=ENV).start()
        run_id, r, steps = run_to_end(node)
        assert r["state"] == "failed" and "unusable 3 times" in r["error"], r
        assert srv.count() == 3, srv.count()
        notes = [m for m in srv.requests[1][2]["messages"] if m["role"] == "user"]
        assert "could not be used: the answer was empty" in notes[-1]["content"], notes
        node.stop()


def test_api_key_never_leaks():
    script = [{"status": 401, "error": "bad key"}] + CONVERSATION
    with TempDir() as d, ModelServer(script, KEY) as srv:
        node = Node(d, model_config("openai", srv.url), env_extra=ENV)
        node.start()
        run_id, r, steps = run_to_end(node)
        assert r["state"] == "failed" and "HTTP 401" in r["error"], r  # a 401 is not retried
        run2, r2, _ = run_to_end(node)
        assert r2["state"] == "succeeded", r2
        texts = []
        for rid in (run_id, run2):
            texts.append(json.dumps(node.run(rid)) + json.dumps(node.steps(rid)))
            texts.append("".join(data for _, _, data in
                                 sse_events(node.port, f"/v1/runs/{rid}/events", timeout=20)))
        for path in ("/v1/runs/nope", "/v1/runs/nope/steps"):
            texts.append(node.request("GET", path)[2].decode())
        texts.append(node.request("POST", "/v1/goals", b"{not json",
                                  {"Content-Type": "application/json"})[2].decode())
        code, out, err = sreh_cli(["config", "check", node.config], env_extra=ENV)
        assert code == 0, err
        texts.append(out + err)
        node.stop()
        with open(node.log_path, "rb") as f:
            texts.append(f.read().decode(errors="replace"))
        db = sqlite3.connect(os.path.join(node.data, "sreh.db"))
        for table, in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            for row in db.execute(f"SELECT * FROM {table}"):
                texts.append(repr(row))
        with open(os.path.join(node.data, "sreh.db"), "rb") as f:
            raw = f.read()
        assert KEY.encode() not in raw, "the key is in the store file"
        for t in texts:
            assert KEY not in t and KEY[8:24] not in t, t[max(0, t.find(KEY[8:24]) - 200):][:400]
        assert srv.requests[0][1]["authorization"] == f"Bearer {KEY}"  # it was sent, though


def test_kill9_during_model_call():
    script = [CONVERSATION[0], {"hang": True}, CONVERSATION[1], CONVERSATION[2]]
    with TempDir() as d, ModelServer(script, KEY) as srv:
        node = Node(d, model_config("openai", srv.url), env_extra=ENV).start()
        run_id = node.submit("checkout is failing: find out why and fix it")
        assert srv.hung.wait(30), "the second model call never came"
        node.kill9()
        srv.release()
        assert srv.count() == 2
        node.start()
        r = node.wait_run(run_id)
        steps = node.steps(run_id)
        assert not srv.violations, srv.violations
        assert r["state"] == "succeeded", (r, steps)
        assert kinds(steps) == ["reason:succeeded", "tool:succeeded", "reason:succeeded",
                                "tool:succeeded", "reason:succeeded", "conclude:succeeded"], \
            kinds(steps)
        assert steps[2]["attempts"] == 2, steps[2]
        # Four requests: turn 1 once (its committed response was reused), turn 2 twice (the
        # first call died with the node), turn 3 once.
        assert srv.count() == 4, srv.count()
        bodies = [json.dumps(b["messages"], sort_keys=True) for _, _, b in srv.requests]
        assert bodies[1] == bodies[2] and len(set(bodies)) == 3, "a turn was asked twice"
        assert records(node) == [f"{run_id}:4"], records(node)
        node.stop()


def test_kill9_during_the_tool_call_it_chose():
    for point in ("after_intent", "after_effect"):
        with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
            node = Node(d, model_config("anthropic", srv.url, stream=True), env_extra=ENV)
            node.start(env_extra={"SREH_FAILPOINT": f"{point}:4"})  # step 4: test.record
            run_id = node.submit("checkout is failing: find out why and fix it")
            assert node.wait_exit(timeout=30) == -9, node.log_text()
            assert srv.count() == 2, srv.count()
            node.start()
            r = node.wait_run(run_id)
            steps = node.steps(run_id)
            assert r["state"] == "succeeded", (point, r, steps)
            assert kinds(steps)[-2:] == ["reason:succeeded", "conclude:succeeded"], kinds(steps)
            assert srv.count() == 3, f"{point}: {srv.count()} model calls, wanted 3"
            assert records(node) == [f"{run_id}:4"], (point, records(node))  # once
            node.stop()


def test_a_model_run_gets_the_recalled_memories_in_its_context():
    """The recall is the run's first step; the model's first request carries the memories with
    their ids, and the catalog offers memory.search for more."""
    answer = [{"text": "Cause: checkout's pool is too small, as in the past case; raise it."}]
    with TempDir() as d, ModelServer(answer, KEY) as srv:
        node = Node(d, model_config("openai", srv.url), env_extra=ENV).start()
        status, _, doc = node.json("POST", "/v1/memory", {
            "kind": "incident", "labels": {"service": "checkout", "fault": "pool"},
            "text": "checkout failing: the connection pool to orders-db was too small"})
        assert status == 201, doc
        mem = doc["memory"]["id"]
        run_id, r, steps = run_to_end(node)
        assert not srv.violations, srv.violations
        assert r["state"] == "succeeded", (r, steps)
        assert kinds(steps) == ["tool:succeeded", "reason:succeeded", "conclude:succeeded"], \
            kinds(steps)
        assert steps[0]["tool"] == "memory.search" and steps[0]["decision"]["recall"] is True
        assert [m["id"] for m in steps[0]["result"]["memories"]] == [mem], steps[0]["result"]
        first = srv.requests[0][2]
        opening = first["messages"][1]["content"]
        assert "long-term memory" in opening and f"- {mem} v1 (incident" in opening, opening
        assert "connection pool to orders-db was too small" in opening, opening
        # The recall is not shown as a call the model made.
        assert [m["role"] for m in first["messages"]] == ["system", "user"], first["messages"]
        names = [t["function"]["name"] for t in first["tools"]]
        assert "memory_search" in names, names
        node.stop()


def test_a_message_reaches_a_model_run_as_a_user_turn_at_its_next_reason_step():
    """docs/conversation.md: a message said while the model thinks is journaled as a step of its
    own, sent to the model as a user turn (who said it and when) in the next request, and that
    reason step journals which messages it had seen."""
    answers = [{"gate": True, "text": "Checking the service first.",
                "calls": [("test_echo", '{"check": "cpu"}')]},
               {"text": "Cause: checkout was wedged; left the database alone as asked."}]
    with TempDir() as d, ModelServer(answers, KEY) as srv:
        node = Node(d, model_config("openai", srv.url), env_extra=ENV).start()
        run_id = node.submit("checkout is failing: find out why and fix it")
        assert srv.gated.wait(30), "the model was never asked"
        status, _, doc = node.json("POST", f"/v1/runs/{run_id}/messages",
                                   {"text": "leave the database alone, it is being failed over"})
        assert status == 201, doc
        said = doc["message"]
        srv.gate.set()
        r = node.wait_run(run_id)
        steps = node.steps(run_id)
        assert not srv.violations, srv.violations
        assert r["state"] == "succeeded", (r, steps)
        [m] = [s for s in steps if s["kind"] == "message"]
        reasons = [s for s in steps if s["kind"] == "reason"]
        assert reasons[0]["n"] < m["n"] < reasons[1]["n"], kinds(steps)
        assert reasons[0]["args"]["context"]["messages_seen"] == [], reasons[0]["args"]
        assert reasons[1]["args"]["context"]["messages_seen"] == [said["seq"]], reasons[1]["args"]
        first, second = srv.requests[0][2], srv.requests[1][2]
        turn = (f"[journal step {m['n']}] {said['author']} said to this run at {said['at']}: "
                "leave the database alone, it is being failed over")
        assert not any(turn == x.get("content") for x in first["messages"]), first["messages"]
        users = [x["content"] for x in second["messages"] if x["role"] == "user"]
        assert turn in users, users
        node.stop()


def test_a_question_to_a_model_run_is_answered_by_its_model_with_the_runs_context():
    """docs/conversation.md, "Questions": a model run's question goes to the model with the
    run's context and the question as the last user turn; the reply is the model's text, a step
    it cites that the journal lacks is named as such and not cited, and when no model answers
    the reply comes from the journal and says so."""
    answers = [{"text": "Checking the service first.",
                "calls": [("test_echo", '{"check": "cpu"}')]},
               {"text": "Cause: checkout was wedged."},
               {"text": "Because step 2 showed checkout wedged, as did step 40."},
               {"status": 400, "error": "the model is away"}]
    with TempDir() as d, ModelServer(answers, KEY) as srv:
        node = Node(d, model_config("openai", srv.url), env_extra=ENV).start()
        run_id, r, steps = run_to_end(node)
        assert r["state"] == "succeeded", (r, kinds(steps))
        last = max(s["n"] for s in steps)
        assert last < 40, kinds(steps)
        status, _, doc = node.json("POST", f"/v1/runs/{run_id}/messages",
                                   {"text": "why checkout?"})
        assert status == 201, doc
        reply = doc["reply"]
        assert reply["author"] == "agent" and reply["kind"] == "reply", reply
        assert reply["text"] == ("Because step 2 showed checkout wedged, as did step 40.\n\n"
                                 f"(Not in the journal, which has {last} steps: step 40.)"), reply
        asked = srv.requests[2][2]
        users = [x["content"] for x in asked["messages"] if x["role"] == "user"]
        assert users[-1].startswith(f"{doc['message']['author']} asks about this run at "), users
        assert "why checkout?" in users[-1] and "do not call a tool" in users[-1], users[-1]
        # The run's own context came with it: its tool call and its result, numbered.
        tool_n = [s["n"] for s in steps if s["kind"] == "tool"][-1]
        tools = [x["content"] for x in asked["messages"] if x["role"] == "tool"]
        assert any(t.startswith(f"[journal step {tool_n}]") for t in tools), asked["messages"]
        # The model is away: the journal answers, saying so.
        status, _, doc = node.json("POST", f"/v1/runs/{run_id}/messages",
                                   {"text": "what did you do?"})
        assert status == 201, doc
        text = doc["reply"]["text"]
        assert text.startswith("(no model answered: "), text
        assert "This answer is from the run's journal.)" in text, text
        assert len(srv.requests) == 4, len(srv.requests)
        _, _, listed = node.json("GET", f"/v1/runs/{run_id}/messages")
        assert [(m["author"], m["kind"]) for m in listed["messages"]][1::2] == \
            [("agent", "reply")] * 2, listed
        # The ended run's journal is untouched by its conversation.
        assert node.steps(run_id) == steps
        assert not srv.violations, srv.violations
        node.stop()


def test_config_errors_name_the_place():
    with TempDir() as d:
        node = Node(d, "model:\n  provider: openai\n  model: m\n", env_extra=ENV)
        msg = node.start_fails()
        assert "sreh.yaml:" in msg and "needs base_url" in msg, msg
        node = Node(d, "model:\n  provider: anthropic\n  base_url: http://x\n  model: m\n"
                       "  fallback: [nowhere]\n", env_extra=ENV)
        msg = node.start_fails()
        assert "no route 'nowhere'" in msg and "sreh.yaml:" in msg, msg


if __name__ == "__main__":
    run_tests([test_a_model_run_gets_the_recalled_memories_in_its_context,
               test_a_message_reaches_a_model_run_as_a_user_turn_at_its_next_reason_step,
               test_a_question_to_a_model_run_is_answered_by_its_model_with_the_runs_context,
               test_openai_conversation, test_openai_streamed_conversation,
               test_anthropic_conversation, test_anthropic_streamed_conversation,
               test_retry_after_429_and_529_two_calls_in_one_response,
               test_streamed_text_reaches_watchers_as_model_delta,
               test_sreh_watch_shows_the_model_thinking, test_timeout_and_cut_stream_are_retried, test_fallback_when_a_route_is_down, test_all_down_builtin_answers,
               test_bad_tool_arguments_are_repaired, test_repairs_are_bounded,
               test_api_key_never_leaks, test_kill9_during_model_call,
               test_kill9_during_the_tool_call_it_chose, test_config_errors_name_the_place])
