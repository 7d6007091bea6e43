"""kill -9 at every step boundary of a run with several mutating steps; after each restart the
run finishes and every side effect happened exactly once.

The node runs a scripted plan: record, echo, record, record (test.record appends its
idempotency key to a file with fsync — it is the side effect we count). SREH_FAILPOINT makes the
node SIGKILL itself at an exact moment: after the intent of step N committed (effect not
started), after the effect of step N (outcome not committed), after the outcome of step N
committed. The client submits with an Idempotency-Key, so it finds its run again after the
crash even when the crash ate the HTTP response.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, run_tests, sse_events  # noqa: E402

PLAN = """model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: drain}}
    - {tool: test.echo, args: {check: 1}}
    - {tool: test.record, args: {action: restart}}
    - {tool: test.record, args: {action: scale}}
"""
MUTATING_STEPS = (1, 3, 4)


def submit_through_crash(node, key):
    """Submits; the node may die before answering. Returns the run id once it is known."""
    try:
        return node.submit("crash test", key=key)
    except (OSError, AssertionError, ValueError):
        return None


def check_exactly_once(node, run_id, point):
    with open(node.record) as f:
        lines = [line.strip() for line in f if line.strip()]
    want = sorted(f"{run_id}:{n}" for n in MUTATING_STEPS)
    assert sorted(lines) == want, f"{point}: side effects {lines}, wanted each of {want} once"


def check_events(node, run_id, point):
    seqs, run_seqs, kinds = [], [], []
    for eid, kind, data in sse_events(node.port, f"/v1/runs/{run_id}/events", timeout=20):
        seqs.append(int(eid))
        run_seqs.append(json.loads(data)["run_seq"])
        kinds.append(kind)
    assert run_seqs == list(range(1, len(run_seqs) + 1)), f"{point}: run_seq {run_seqs}"
    assert seqs == sorted(set(seqs)), f"{point}: delivery order {seqs}"
    assert kinds.count("step.intent") == 4, f"{point}: intents {kinds}"
    assert kinds[-1] == "run.succeeded", f"{point}: last event {kinds[-1]}"


def crash_at(point, n):
    with TempDir() as d:
        node = Node(d, PLAN)
        node.start(env_extra={"SREH_FAILPOINT": f"{point}:{n}"})
        key = f"crash-{point}-{n}"
        run_id = submit_through_crash(node, key)
        rc = node.wait_exit(timeout=30)
        assert rc == -9, f"{point}:{n}: node exited {rc}, expected SIGKILL at the failpoint\n" \
                         f"{node.log_text()}"
        node.start()  # no failpoint: recovers the run from the store
        again = node.submit("crash test", key=key)
        assert run_id in (None, again), f"{point}:{n}: the key now names {again}, was {run_id}"
        r = node.wait_run(again, states=("succeeded",))
        steps = node.steps(again)
        assert [s["state"] for s in steps] == ["succeeded"] * 5, f"{point}:{n}: {steps}"
        check_exactly_once(node, again, f"{point}:{n}")
        if n in MUTATING_STEPS and point in ("after_intent", "after_effect"):
            # Recovery asked the tool: after the effect it had happened (reconciled, not re-run);
            # after the intent alone it had not (executed now, a second attempt).
            want = 1 if point == "after_effect" else 2
            got = steps[n - 1]["attempts"]
            assert got == want, f"{point}:{n}: step {n} attempts {got}, wanted {want}"
        check_events(node, again, f"{point}:{n}")
        assert r["steps"] == 5
        node.stop()


def make_case(point, n):
    def case():
        crash_at(point, n)
    case.__name__ = f"kill9_{point}_step{n}"
    return case


if __name__ == "__main__":
    cases = [make_case(p, n) for p in ("after_intent", "after_effect", "after_outcome")
             for n in (1, 2, 3, 4)]
    cases.append(make_case("after_outcome", 5))  # after the conclusion committed
    run_tests(cases)
