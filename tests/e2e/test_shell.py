"""The shell toolset on a real node: an allow-listed command runs without a shell (a `;` or
`$(...)` in an argument is text, not code), with only the configured environment (sreh's own
variables, such as a token, never reach it), its output capped, killed at its timeout; an
argument that breaks the command's pattern, or one too many, is refused; a mutating command
that exits non-zero fails its step, and each command carries its own risk class."""

import json

from harness import Node, TempDir, run_tests

CONFIG = """tools:
  testkit: true
  shell:
    max_output_bytes: 100
    commands:
      - {name: echo, argv: [/bin/echo], max_args: 3, arg_pattern: '^.{1,64}$'}
      - {name: env, argv: [/usr/bin/env]}
      - {name: spam, argv: [/usr/bin/seq, '1', '1000']}
      - {name: nap, argv: [/bin/sleep, '30'], timeout_ms: 300}
      - {name: fail, argv: [/bin/false], risk: medium}
      - {name: ls, argv: [/bin/ls], max_args: 1}
"""
STEPS = [
    ("shell.echo", {"args": ["a;b", "$(id)", "`x`"]}),
    ("shell.env", {}),
    ("shell.spam", {}),
    ("shell.nap", {}),
    ("shell.fail", {}),
    ("shell.ls", {"args": ["-la; rm -rf /"]}),
    ("shell.ls", {"args": ["/", "/tmp"]}),
]


def script(steps):
    return "model:\n  provider: scripted\n  script:\n" + "".join(
        f"    - {{tool: {t}, args: {json.dumps(a)}}}\n" for t, a in steps)


def test_commands_run_as_configured_and_nothing_more():
    with TempDir() as d:
        node = Node(d, config_extra=script(STEPS) + CONFIG, testkit=False,
                    env_extra={"SREH_SECRET_TOKEN": "do-not-leak"}).start()
        status, _, tools = node.json("GET", "/v1/tools")
        risk = {t["name"]: (t["risk"], t["mutating"]) for t in tools["tools"]}
        assert risk["shell.echo"] == ("read_only", False), risk
        assert risk["shell.fail"] == ("medium", True), risk
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "run the commands"})
        assert status == 201, doc
        node.wait_run(doc["run"]["id"], timeout=60)
        got = [s for s in node.steps(doc["run"]["id"]) if s["kind"] == "tool"]
        assert [s["tool"] for s in got] == [t for t, _ in STEPS], got
        echo, env, spam, nap, fail, injected, too_many = got
        assert echo["state"] == "succeeded", echo
        assert echo["result"]["stdout"] == "a;b $(id) `x`\n", echo["result"]
        assert env["result"]["stdout"].split() == ["PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                                   "LANG=C.UTF-8"], env["result"]
        assert "do-not-leak" not in json.dumps(env["result"])
        assert spam["result"]["truncated"] and len(spam["result"]["stdout"]) == 100, spam["result"]
        assert nap["state"] == "failed" and "timed out after 300 ms (killed)" in nap["error"], nap
        assert fail["state"] == "failed" and "exit code 1" in fail["error"], fail
        assert injected["state"] == "failed", injected
        assert "argument '-la; rm -rf /' does not match" in injected["error"], injected
        assert too_many["state"] == "failed" and "args" in too_many["error"], too_many
        node.stop()


def test_a_relative_argv_is_refused():
    with TempDir() as d:
        out = Node(d, config_extra="tools:\n  testkit: true\n  shell:\n    commands:\n"
                                   "      - {name: df, argv: [df, -h]}\n", testkit=False).start_fails()
        assert "argv[0] 'df' must be an absolute path (no PATH search)" in out, out


if __name__ == "__main__":
    run_tests([test_commands_run_as_configured_and_nothing_more, test_a_relative_argv_is_refused])
