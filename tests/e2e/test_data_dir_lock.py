"""One node per data dir: a second `sreh serve` on a data dir that a running node holds exits
non-zero at once, naming the holder's pid and node id, and changes nothing; the first node keeps
serving. A node killed with -9 leaves no stale lock: the next start on the dir succeeds."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import SREH, Node, TempDir, free_port, run_tests  # noqa: E402

PLAN = "model:\n  provider: scripted\n  script:\n    - {tool: test.echo, args: {}}\n"
FIRST = None
DIR = None


def second_serve(node_id):
    """`sreh serve` on FIRST's config and data dir, another port and node id: (rc, output)."""
    p = subprocess.run([SREH, "serve", "--config", FIRST.config, "--listen",
                        f"127.0.0.1:{free_port()}", "--node-id", node_id],
                       capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout + p.stderr


def test_second_node_on_a_held_data_dir_is_refused():
    rid = FIRST.submit("before the second node")
    FIRST.wait_run(rid)
    runs_before = FIRST.json("GET", "/v1/runs")[2]["runs"]
    rc, out = second_serve("intruder")
    assert rc != 0, f"a second node on a held data dir started: {out}"
    assert f"pid {FIRST.proc.pid}" in out and "node 'node-1'" in out, f"holder not named: {out}"
    assert FIRST.data in out and "in use" in out, f"data dir not named: {out}"
    # the first node is untouched and still answers; nothing of its store changed
    assert FIRST.proc.poll() is None, "the first node died"
    assert FIRST.json("GET", "/v1/runs")[2]["runs"] == runs_before
    status, _, _ = FIRST.request("GET", "/healthz")
    assert status == 200


def test_kill9_leaves_no_stale_lock():
    FIRST.kill9()
    again = Node(DIR, PLAN).start()  # same dir, same data: would fail on a stale lock
    try:
        rid = again.submit("after the restart")
        again.wait_run(rid, states=("succeeded",))
        with open(os.path.join(again.data, "LOCK")) as f:
            assert f"pid {again.proc.pid}" in f.read()
    finally:
        again.stop()


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        DIR = d
        FIRST = Node(d, PLAN).start()
        try:
            run_tests([test_second_node_on_a_held_data_dir_is_refused,
                       test_kill9_leaves_no_stale_lock])
        except SystemExit as e:
            code = e.code
        FIRST.stop()
    sys.exit(code)
