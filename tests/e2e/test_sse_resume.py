"""SSE resume: a client that keeps disconnecting mid-run and reconnecting with Last-Event-ID gets
every event exactly once and in order — on the per-run stream and on the firehose with two
concurrent runs. Also: a late client gets the whole history and then the end; a resume point past
the end of a finished run ends at once; heartbeats arrive while idle and do not break parsing.

The node runs a scripted plan of 12 test.sleep steps of 50 ms (28 events per run: created,
started, 12 x (intent, outcome), the conclude outcome, succeeded).
"""

import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import TOKEN, Node, TempDir, run_tests, sse_events  # noqa: E402

STEPS = 12
PLAN = ("limits: {sse_heartbeat_ms: 100}\nmodel:\n  provider: scripted\n  script:\n"
        + "    - {tool: test.sleep, args: {ms: 50}}\n" * STEPS)
EVENTS_PER_RUN = 2 + 2 * STEPS + 2
TERMINAL = ("run.succeeded", "run.failed", "run.cancelled")
N = None


def parse(ev):
    eid, kind, data = ev
    doc = json.loads(data)
    assert eid is not None, f"event without id: {ev}"
    assert doc["kind"] == kind, f"event: kind {kind} but data says {doc['kind']}"
    assert doc["seq"] == int(eid), f"event: id {eid} but data seq {doc['seq']}"
    return int(eid), kind, doc


def check_run_events(events, rid, what):
    """`events`: [(id, kind, doc)] for one run. Exactly once, in order, complete."""
    seqs = [e[0] for e in events]
    run_seqs = [e[2]["run_seq"] for e in events]
    kinds = [e[1] for e in events]
    assert all(e[2]["run_id"] == rid for e in events), f"{what}: events of another run"
    assert run_seqs == list(range(1, len(run_seqs) + 1)), f"{what}: run_seq {run_seqs}"
    assert all(a < b for a, b in zip(seqs, seqs[1:])), f"{what}: ids not increasing {seqs}"
    assert len(events) == EVENTS_PER_RUN, f"{what}: {len(events)} events, wanted {EVENTS_PER_RUN}"
    assert kinds[0] == "run.created" and kinds[-1] == "run.succeeded", f"{what}: {kinds}"
    assert kinds.count("step.intent") == STEPS, f"{what}: {kinds}"
    outcomes = [e[2]["data"] for e in events if e[1] == "step.outcome"]
    assert [o["state"] for o in outcomes] == ["succeeded"] * (STEPS + 1), \
        f"{what}: step outcomes {[(o.get('state'), o.get('error')) for o in outcomes]}"


def full_history(rid, last_event_id=None, timeout=20):
    """A catch-up read of a finished run's stream; the server must end it by itself."""
    t0 = time.time()
    evs = [parse(e) for e in sse_events(N.port, f"/v1/runs/{rid}/events",
                                        last_event_id=last_event_id, timeout=timeout)]
    return evs, time.time() - t0


def resume_reader(path, want_runs, chunk, last_event_id=None, mid_run_probe=None, timeout=40):
    """Reads `path` in pieces of `chunk` events, reconnecting with the last id seen, until every
    run in `want_runs` has sent its terminal event (or, for a per-run stream, the server ends the
    stream). Returns (all events in arrival order, connections made, mid-run disconnects)."""
    got = []
    done = set()
    connections = mid_run = 0
    last = last_event_id
    firehose = path.startswith("/v1/events")
    deadline = time.time() + timeout
    while time.time() < deadline:
        connections += 1
        n = 0
        for ev in sse_events(N.port, path, last_event_id=last, timeout=timeout, stop_after=chunk):
            e = parse(ev)
            got.append(e)
            last = e[0]
            n += 1
            if e[1] in TERMINAL and e[2]["run_id"] in want_runs:
                done.add(e[2]["run_id"])
            if firehose and done == set(want_runs):
                break  # the firehose never ends by itself
        if done == set(want_runs) and (firehose or n < chunk):
            return got, connections, mid_run
        if n < chunk and not firehose:
            raise AssertionError(f"{path}: stream ended after {n} events without the terminal "
                                 f"event (last kinds {[e[1] for e in got][-5:]})")
        if mid_run_probe and mid_run_probe():
            mid_run += 1
    raise AssertionError(f"{path}: runs {set(want_runs) - done} not finished after {timeout}s")


def running(*rids):
    return lambda: any(N.run(r)["state"] not in ("succeeded", "failed", "cancelled") for r in rids)


def test_per_run_resume():
    rid = N.submit("per-run resume")
    got, conns, mid = resume_reader(f"/v1/runs/{rid}/events", [rid], chunk=3,
                                    mid_run_probe=running(rid))
    check_run_events(got, rid, "resumed per-run stream")
    assert conns >= EVENTS_PER_RUN // 3, f"only {conns} connections"
    assert mid >= 2, f"only {mid} disconnects happened while the run was still going"
    full, _ = full_history(rid)
    assert [(e[0], e[1], e[2]) for e in full] == got, "resumed union != full catch-up read"


def test_per_run_resume_varied_chunks():
    """Chunks of 1, 2, 5 and 7 events: exactly once whatever the disconnect rhythm."""
    rids = []
    for chunk in (1, 2, 5, 7):
        rid = N.submit(f"resume chunk {chunk}")
        rids.append(rid)
        got, _, _ = resume_reader(f"/v1/runs/{rid}/events", [rid], chunk=chunk)
        check_run_events(got, rid, f"chunk {chunk}")
        full, _ = full_history(rid)
        assert full == got, f"chunk {chunk}: resumed union != full catch-up"


def test_firehose_resume_two_runs():
    start = N.stats()["store"]["last_event_seq"]
    r1 = N.submit("firehose A")
    r2 = N.submit("firehose B")
    got, conns, mid = resume_reader("/v1/events", [r1, r2], chunk=4, last_event_id=start,
                                    mid_run_probe=running(r1, r2))
    ids = [e[0] for e in got]
    # the node-wide order is gap-free: nothing else runs, so every id after `start` shows up once
    assert ids == list(range(start + 1, start + 1 + len(ids))), f"firehose ids {ids}"
    for rid in (r1, r2):
        mine = [e for e in got if e[2]["run_id"] == rid]
        check_run_events(mine, rid, f"firehose {rid}")
        full, _ = full_history(rid)
        assert full == mine, f"firehose events of {rid} != its full catch-up read"
    assert mid >= 2, f"only {mid} disconnects while the runs were going"
    # the runs did overlap (two concurrent runs, interleaved on the firehose)
    owners = [e[2]["run_id"] for e in got if e[2]["run_id"] in (r1, r2)]
    switches = sum(1 for a, b in zip(owners, owners[1:]) if a != b)
    assert switches >= 2, f"runs did not interleave on the firehose ({switches} switches)"
    # a catch-up read of the firehose from the same point equals the resumed union
    catch = [parse(e) for e in sse_events(N.port, "/v1/events", last_event_id=start,
                                          stop_after=len(got), timeout=20)]
    assert catch == got, "firehose catch-up != resumed union"


def test_firehose_resume_six_runs_chunk_1_to_3():
    """Six concurrent runs (group commit batches their events) while a firehose client
    reconnects after every 1-3 events: the node-wide order stays gap-free and exactly once."""
    start = N.stats()["store"]["last_event_seq"]
    rids = [N.submit(f"busy {i}") for i in range(6)]
    got = []
    last = start
    done = set()
    deadline = time.time() + 40
    i = 0
    while done != set(rids):
        assert time.time() < deadline, f"runs not finished: {set(rids) - done}"
        i += 1
        for ev in sse_events(N.port, "/v1/events", last_event_id=last, timeout=20,
                             stop_after=1 + i % 3):
            e = parse(ev)
            got.append(e)
            last = e[0]
            if e[1] in TERMINAL:
                done.add(e[2]["run_id"])
            if done == set(rids):
                break
    ids = [e[0] for e in got]
    assert ids == list(range(start + 1, start + 1 + len(ids))), f"gaps or duplicates: {ids}"
    for rid in rids:
        mine = [e for e in got if e[2]["run_id"] == rid]
        check_run_events(mine, rid, f"busy run {rid}")
        assert mine == full_history(rid)[0], f"{rid}: firehose != per-run catch-up"


def test_firehose_run_filter_resume():
    """/v1/events?run=ID with resume delivers only that run, exactly once."""
    start = N.stats()["store"]["last_event_seq"]
    r1 = N.submit("filter A")
    r2 = N.submit("filter B")
    got, _, _ = resume_reader(f"/v1/events?run={r2}", [r2], chunk=5, last_event_id=start)
    assert all(e[2]["run_id"] == r2 for e in got), "run filter let other runs through"
    check_run_events(got, r2, "filtered firehose")
    N.wait_run(r1)


def test_late_client_gets_history_then_end():
    rid = N.submit("late client")
    N.wait_run(rid, states=("succeeded",))
    full, took = full_history(rid)
    check_run_events(full, rid, "late client")
    assert took < 5, f"the stream of a finished run took {took:.1f}s to end"
    zero, _ = full_history(rid, last_event_id=0)
    assert zero == full, "Last-Event-ID 0 differs from no Last-Event-ID"
    # resuming from the middle gives exactly the suffix
    mid = full[10][0]
    tail, _ = full_history(rid, last_event_id=mid)
    assert tail == full[11:], f"resume from {mid}: {[e[0] for e in tail]}"
    # the query-parameter form resumes the same way
    q = [parse(e) for e in sse_events(N.port, f"/v1/runs/{rid}/events?last_event_id={mid}",
                                      timeout=20)]
    assert q == full[11:], "?last_event_id= resume differs from the header"


def test_resume_past_end_ends_at_once():
    rid = N.submit("past the end")
    N.wait_run(rid)
    full, _ = full_history(rid)
    last = full[-1][0]
    for lei in (last, last + 1, last + 1000, 10 ** 15):
        evs, took = full_history(rid, last_event_id=lei, timeout=10)
        assert evs == [], f"Last-Event-ID {lei}: got {[e[1] for e in evs]}"
        assert took < 3, f"Last-Event-ID {lei}: stream took {took:.1f}s to end"


def dechunk_lines(buf):
    """Decodes a chunked body prefix; returns the complete lines of the payload so far."""
    out = b""
    i = 0
    while True:
        j = buf.find(b"\r\n", i)
        if j < 0:
            break
        size = int(buf[i:j].split(b";")[0] or b"0", 16)
        if size == 0 or len(buf) < j + 2 + size + 2:
            break
        out += buf[j + 2:j + 2 + size]
        i = j + 2 + size + 2
    return out.split(b"\n")[:-1] if out else []


def test_heartbeats_while_idle():
    """With sse_heartbeat_ms 100 a comment line arrives on an idle stream within a few seconds;
    then events still parse between heartbeats (raw socket, de-chunked by hand)."""
    N.wait_ready()
    start = N.stats()["store"]["last_event_seq"]
    s = socket.create_connection(("127.0.0.1", N.port), timeout=5)
    try:
        s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                  f"Authorization: Bearer {TOKEN}\r\n"
                  f"Last-Event-ID: {start}\r\n\r\n".encode())
        buf = b""
        deadline = time.time() + 5
        while b"\r\n\r\n" not in buf and time.time() < deadline:
            buf += s.recv(4096)
        head, _, body = buf.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head[:100]
        assert b"text/event-stream" in head.lower(), head
        chunked = b"transfer-encoding: chunked" in head.lower()

        def lines():
            return dechunk_lines(body) if chunked else body.split(b"\n")[:-1]

        # idle: only heartbeats, at least two of them
        while sum(1 for ln in lines() if ln.startswith(b":")) < 2:
            assert time.time() < deadline, f"no heartbeat comment within 5 s: {body[:300]!r}"
            body += s.recv(4096)
        assert not any(ln.startswith(b"data:") for ln in lines()), "events on an idle stream"
        # now a run; its events must parse cleanly between heartbeats
        rid = N.submit("heartbeat run")
        deadline = time.time() + 20
        events, cur = [], {}
        while not events or events[-1].get("event") not in TERMINAL:
            assert time.time() < deadline, f"run events not seen: {events[-3:]}"
            body += s.recv(65536)
            events, cur = [], {}
            for ln in lines():
                ln = ln.decode().rstrip("\r")
                if ln == "":
                    if "data" in cur:
                        events.append(cur)
                    cur = {}
                elif ln.startswith(":"):
                    assert cur == {}, f"heartbeat in the middle of an event: {cur}"
                else:
                    k, _, v = ln.partition(":")
                    cur[k] = v[1:] if v.startswith(" ") else v
        mine = [e for e in events if json.loads(e["data"])["run_id"] == rid]
        assert [json.loads(e["data"])["run_seq"] for e in mine] == \
            list(range(1, EVENTS_PER_RUN + 1)), [e.get("event") for e in mine]
        assert all(int(e["id"]) == json.loads(e["data"])["seq"] for e in events)
        # idle again after the run: heartbeats resume
        hb = sum(1 for ln in lines() if ln.startswith(b":"))
        deadline = time.time() + 5
        while sum(1 for ln in lines() if ln.startswith(b":")) <= hb:
            assert time.time() < deadline, "no heartbeat after the run ended"
            body += s.recv(4096)
    finally:
        s.close()


def test_heartbeats_do_not_break_harness_parsing():
    """The per-run stream of a run whose steps take longer than the heartbeat interval
    (12 x 50 ms with a 100 ms heartbeat, and a reader that started before the run)."""
    rid = N.submit("heartbeat parse")
    evs = [parse(e) for e in sse_events(N.port, f"/v1/runs/{rid}/events", timeout=20)]
    check_run_events(evs, rid, "per-run stream with heartbeats")


def test_concurrent_readers_same_run():
    """Five readers on one run at once, each resuming in different chunk sizes: all identical."""
    rid = N.submit("five readers")
    results = {}

    def reader(chunk):
        try:
            results[chunk] = resume_reader(f"/v1/runs/{rid}/events", [rid], chunk=chunk)[0]
        except Exception as e:  # noqa: BLE001
            results[chunk] = e

    ts = [threading.Thread(target=reader, args=(c,)) for c in (1, 2, 3, 4, 100)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(40)
    for c, r in results.items():
        assert not isinstance(r, Exception), f"reader {c}: {r}"
        check_run_events(r, rid, f"reader {c}")
    assert len(results) == 5
    assert all(r == results[100] for r in results.values()), "readers saw different streams"


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        N = Node(d, PLAN).start()
        try:
            run_tests([test_per_run_resume, test_per_run_resume_varied_chunks,
                       test_firehose_resume_two_runs, test_firehose_resume_six_runs_chunk_1_to_3,
                       test_firehose_run_filter_resume,
                       test_late_client_gets_history_then_end, test_resume_past_end_ends_at_once,
                       test_heartbeats_while_idle, test_heartbeats_do_not_break_harness_parsing,
                       test_concurrent_readers_same_run])
        except SystemExit as e:
            code = e.code
        N.stop()
    sys.exit(code)
