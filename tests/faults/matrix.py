"""The fault matrix (scripts/fault-matrix.sh): each cell puts a node under a load of runs with
mutating steps, does something bad to it, and asserts from the journal and the effects that

  - no run is lost: every submit the node acknowledged names a run after the fault, and every
    client key (resubmitted, as a client does when its answer was lost) ends in one run;
  - no mutating effect is duplicated: test.record (fsync'd to a file) saw each mutating step's
    idempotency key exactly once;
  - no event is lost or duplicated: the node's whole event stream (SSE from the start) has
    strictly increasing ids, and each run's events have run_seq 1, 2, 3, ... without a gap.

Cells: kill9 (kill -9 at random moments under load, 10 rounds of 200 runs), disk_full (the data
dir on a small tmpfs filled up under load, then freed), clock (the node's wall and monotonic
clocks jumped forward 2 h and back 1 h through libfaketime while it works), slow_disk (every
fsync of the data dir delayed 50 ms, synchronous full), partition (a three-node cluster on one
PostgreSQL with one member's cluster links cut by nftables for 4 s under load), store_partition
(the same cluster with one member cut off from PostgreSQL for longer than a lease). The PostgreSQL restart and freeze and NATS restart cells are tests of their own
(e2e.pg_restart, e2e.store_freeze, integration.relay_nats_restart), which the script runs.

Each cell prints one line of figures. Faults are injected at random moments (seeded: the seed is
printed, SREH_FAULT_SEED repeats it); what is asserted never depends on timing."""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from harness import Node, TempDir, sse_events, wait_until  # noqa: E402

PLAN = """model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: drain}}
    - {tool: test.echo, args: {check: 1}}
    - {tool: test.record, args: {action: restart}}
"""
SEED = int(os.environ.get("SREH_FAULT_SEED", random.randrange(1 << 30)))
rng = random.Random(SEED)


class Load:
    """Submits `n` runs with keys `<prefix>-<i>` from 8 threads; remembers what was acked."""

    def __init__(self, node, prefix, n):
        self.node, self.prefix, self.n = node, prefix, n
        self.acked = {}  # key -> run id the node answered with
        self.lock = threading.Lock()

    def keys(self):
        return [f"{self.prefix}-{i}" for i in range(self.n)]

    def submit_all(self, stop_on_error=True):
        todo = self.keys()

        def worker(part):
            for k in part:
                try:
                    rid = self.node.submit("fault matrix", key=k)
                except (OSError, AssertionError, ValueError):
                    if stop_on_error:
                        return
                    continue
                with self.lock:
                    self.acked[k] = rid

        threads = [threading.Thread(target=worker, args=(todo[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        return threads


def finish_and_check(node, loads, what):
    """Resubmits every key (idempotent), waits for every run to end, and checks the three
    promises. Returns the number of runs checked."""
    runs = {}
    for load in loads:
        for k in load.keys():
            rid = node.submit("fault matrix", key=k)
            if k in load.acked:
                assert load.acked[k] == rid, f"{what}: key {k} was run {load.acked[k]}, now {rid}"
            runs[k] = rid

    def all_done():
        for rid in runs.values():
            status, _, doc = node.json("GET", f"/v1/runs/{rid}")
            assert status == 200, f"{what}: run {rid}: {status} {doc}"
            if doc["state"] not in ("succeeded", "failed", "cancelled"):
                return None
        return True
    wait_until(all_done, 300, f"{what}: every run to end")
    for rid in runs.values():
        status, _, doc = node.json("GET", f"/v1/runs/{rid}")
        assert doc["state"] == "succeeded", f"{what}: run {rid} ended {doc['state']}: {doc}"
    with open(node.record) as f:
        lines = [line.strip() for line in f if line.strip()]
    want = sorted(f"{rid}:{n}" for rid in runs.values() for n in mutating_steps(node, rid))
    assert len(want) == 2 * len(runs), f"{what}: {len(want)} mutating steps in {len(runs)} runs"
    dup = sorted({x for x in lines if lines.count(x) > 1})
    assert not dup, f"{what}: effects executed twice: {dup[:5]}"
    assert sorted(lines) == want, f"{what}: {len(lines)} effects, wanted {len(want)}"
    check_events(node, set(runs.values()), what)
    return len(runs)


def mutating_steps(node, run_id):
    """The numbers of the run's test.record steps: the plan's first and third, after the recall
    step when memory had something to recall (docs/memory.md)."""
    status, _, doc = node.json("GET", f"/v1/runs/{run_id}/steps")
    assert status == 200, doc
    return [s["n"] for s in doc["steps"] if s.get("tool") == "test.record"]


def check_events(node, run_ids, what):
    last, per_run = 0, {}
    # The whole stream from the first event, up to the last one the store has now.
    status, _, stats = node.json("GET", "/v1/stats")
    assert status == 200, stats
    newest = stats["store"]["last_event_seq"]
    for eid, kind, data in sse_events(node.port, "/v1/events", last_event_id="0", timeout=120,
                                      token=node.token):
        n = int(eid)
        assert n > last, f"{what}: event {n} after {last} (duplicate or out of order)"
        last = n
        ev = json.loads(data)
        rid = ev.get("run_id")
        if rid in run_ids:
            per_run.setdefault(rid, []).append(ev["run_seq"])
        if n >= newest:
            break
    for rid in run_ids:
        seqs = per_run.get(rid, [])
        assert seqs == list(range(1, len(seqs) + 1)) and seqs, \
            f"{what}: run {rid} events run_seq {seqs[:20]}"


def new_node(d, extra="", env=None):
    return Node(d, PLAN + extra, env_extra=env)


# -- cells ------------------------------------------------------------------------------------


def cell_kill9(rounds=10, runs=200):
    with TempDir() as d:
        node = new_node(d).start()
        loads, kills = [], []
        for r in range(rounds):
            load = Load(node, f"k{r}", runs)
            loads.append(load)
            t0 = time.time()
            threads = load.submit_all()
            delay = rng.uniform(0.01, 0.3)
            time.sleep(delay)  # the random moment of the fault (what is asserted never waits)
            node.kill9()
            with open(node.record) as f:
                effects = sum(1 for line in f if line.strip())
            # When it struck: how many of this round's submits were answered, and how many
            # effects (of every round so far) had happened.
            kills.append(f"{delay:.2f}s/{len(load.acked)} acked/{effects} effects")
            for t in threads:
                t.join()
            node.start()
        n = finish_and_check(node, loads, "kill9")
        node.stop()
    return f"kill9: {rounds} rounds, {n} runs, {2 * n} mutating steps, kills at {kills}: " \
           "no run lost, no effect twice, no event lost or repeated"


def cell_disk_full():
    with TempDir() as d:
        data = os.path.join(d, "data")
        os.makedirs(data)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", data], check=True)
        try:
            node = new_node(d).start()
            before = Load(node, "before", 200)
            threads = before.submit_all(stop_on_error=False)
            time.sleep(rng.uniform(0.01, 0.2))  # the random moment the disk fills up
            filler = os.path.join(data, "filler")
            subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=1M", "count=64"],
                           capture_output=True)  # fails at ENOSPC: the disk is full
            for t in threads:
                t.join()
            during = Load(node, "during", 50)
            codes = []
            for k in during.keys():
                status, _, doc = node.json("POST", "/v1/goals", {"goal": "fault matrix"},
                                           {"Idempotency-Key": k})
                codes.append(status)
                if status in (200, 201):
                    during.acked[k] = doc["run"]["id"]
            status, _, _ = node.request("GET", "/healthz")
            assert status == 200, f"disk_full: /healthz {status} while the disk is full"
            refused = [c for c in codes if c >= 500]
            assert all(c in (200, 201, 503, 507) for c in codes), f"disk_full: codes {codes}"
            os.remove(filler)
            n = finish_and_check(node, [before, during], "disk_full")
            node.stop()
            audit = subprocess.run([node_binary(), "audit", "verify", "--data-dir", data],
                                   capture_output=True, text=True)
            assert audit.returncode == 0, f"disk_full: audit chain: {audit.stdout}{audit.stderr}"
        finally:
            subprocess.run(["umount", "-l", data], check=False)
    return f"disk_full: {n} runs, the disk filled up under load ({len(before.acked)} of 200 " \
           f"answered), {len(refused)} of 50 later submits refused with 5xx while full, all " \
           "finished after space came back; audit chain verified"


def cell_clock():
    lib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    assert os.path.exists(lib), "clock: libfaketime missing (scripts/setup.sh installs faketime)"
    with TempDir() as d:
        control = os.path.join(d, "faketime")
        with open(control, "w") as f:
            f.write("+0\n")
        env = {"LD_PRELOAD": lib, "FAKETIME_TIMESTAMP_FILE": control, "FAKETIME_NO_CACHE": "1"}
        node = new_node(d, env=env).start()
        loads = []
        for step, jump in enumerate(("+2h", "-1h", "+0")):
            load = Load(node, f"c{step}", 100)
            loads.append(load)
            threads = load.submit_all(stop_on_error=False)
            time.sleep(rng.uniform(0.05, 0.5))  # the random moment of the jump
            with open(control, "w") as f:
                f.write(jump + "\n")
            for t in threads:
                t.join()
        n = finish_and_check(node, loads, "clock")
        node.stop()
    return f"clock: {n} runs through jumps of +2h, -1h and back: none lost, none twice"


def cell_slow_disk(delay_ms=50):
    with TempDir() as d:
        so = os.path.join(d, "slow_fsync.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", so,
                        os.path.join(HERE, "slow_fsync.c"), "-ldl"], check=True)
        # synchronous: full, so that every commit flushes (with normal, WAL commits do not).
        node = new_node(d, "store:\n  synchronous: full\n",
                        env={"LD_PRELOAD": so, "SREH_FSYNC_DELAY_MS": str(delay_ms),
                                "SREH_FSYNC_DELAY_DIR": os.path.join(d, "data")})
        node.start()
        load = Load(node, "s", 200)
        t0 = time.time()
        for t in load.submit_all():
            t.join()
        n = finish_and_check(node, [load], "slow_disk")
        took = time.time() - t0
        node.stop()
    return f"slow_disk: synchronous full, every fsync of the data dir +{delay_ms} ms: {n} runs ({2 * n} mutating " \
           f"steps) in {took:.1f} s ({n / took:.0f} runs/s: the group commit shares each stall), " \
           "none lost, none twice"


def nft(*rules):
    for r in rules:
        subprocess.run(["nft", *r.split()], check=True, capture_output=True)


def cell_partition(runs=200, seconds=4):
    """A three-node cluster on one PostgreSQL; node-b's cluster links are cut (nftables drops
    every packet to or from its cluster port, in both directions) for `seconds` while both
    sides take runs, then healed. HTTP and the store stay reachable: the cut is between the
    members only."""
    from cluster_harness import Cluster
    with tempfile.TemporaryDirectory(prefix="sreh-fault-") as d:
        cluster = Cluster(d, node_extra=PLAN)
        try:
            cluster.start_all()
            a, b = cluster.nodes["node-a"], cluster.nodes["node-b"]
            for n in cluster.nodes.values():
                n.record = cluster.record
            with open(cluster.topology) as f:
                text = f.read()
            port = text.split("id: node-b")[1].split("cluster: 127.0.0.1:")[1].split()[0]
            loads = [Load(a, "pa", runs), Load(b, "pb", runs)]
            threads = [t for load in loads for t in load.submit_all(stop_on_error=False)]
            time.sleep(rng.uniform(0.01, 0.2))  # the random moment of the cut
            nft("add table inet sreh_fault",
                "add chain inet sreh_fault out { type filter hook output priority 0 ; }",
                f"add rule inet sreh_fault out tcp dport {port} drop",
                f"add rule inet sreh_fault out tcp sport {port} drop")
            try:
                after = [Load(a, "qa", runs // 2), Load(b, "qb", runs // 2)]
                threads += [t for load in after for t in load.submit_all(stop_on_error=False)]
                for t in threads:
                    t.join()
                time.sleep(seconds)  # how long the cut lasts (what is asserted never waits)
                during = {m["id"]: (m["state"], m["connected"])
                          for m in a.cluster_nodes()["nodes"]}
            finally:
                nft("delete table inet sreh_fault")
            cluster.wait_linked(list(cluster.nodes), timeout=60)
            n = finish_and_check(a, loads + after, "partition")
        finally:
            subprocess.run(["nft", "delete", "table", "inet", "sreh_fault"], capture_output=True)
            cluster.close()
    return f"partition: node-b cut off from node-a and node-c for {seconds} s under load " \
           f"(node-a's view of node-b at the end of the cut, state/connected: {during.get('node-b')}:"\
           " liveness is the store's leases, and TCP held the links through the drops), healed" \
           f" and relinked; {n} runs on both sides: none lost, none twice, no event lost or " \
           "repeated"


class TcpForwarder:
    """Forwards 127.0.0.1:`port` to 127.0.0.1:`to` (one thread per direction and connection),
    so that one member's traffic to the store has a port of its own for nftables to cut."""

    def __init__(self, to):
        import socket
        self.to = to
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(256)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import socket
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.to))
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(2)
            except OSError:
                pass

    def close(self):
        self.srv.close()


def cell_store_partition(runs=200, seconds=4):
    """A three-node cluster on one PostgreSQL; node-b's traffic to the store (through a port of
    its own) is cut by nftables while it and node-a take runs: first only the store's answers
    for 0.5 s (node-b's commit in flight lands, its acknowledgement is held back), then both ways
    for `seconds`, longer than a lease: node-b's lease lapses and node-a claims its runs,
    reconciles the steps whose intents landed and executes them. Healed, node-b receives the
    late acknowledgement of those intents; it acts only while its lease holds, so those steps
    wait, find the runs claimed and stop. Every run ends once with each effect once."""
    from cluster_harness import Cluster
    with tempfile.TemporaryDirectory(prefix="sreh-fault-") as d:
        cluster = Cluster(d, node_extra=PLAN)
        fwd = TcpForwarder(cluster.pg.port)
        try:
            with open(cluster.config) as f:
                text = f.read()
            with open(cluster.config, "w") as f:
                f.write(text.replace(f"url: {cluster.pg.url}", "url: ${SREH_FAULT_STORE_URL}"))
            via = cluster.pg.url.replace(f":{cluster.pg.port}/", f":{fwd.port}/")
            for name, n in cluster.nodes.items():
                n.record = cluster.record
                n.start(env_extra={"SREH_FAULT_STORE_URL": via if name == "node-b"
                                   else cluster.pg.url})
            a, b = cluster.nodes["node-a"], cluster.nodes["node-b"]
            cluster.wait_linked(list(cluster.nodes), timeout=60)
            loads = [Load(a, "sa", runs), Load(b, "sb", runs)]
            threads = [t for load in loads for t in load.submit_all(stop_on_error=False)]
            time.sleep(rng.uniform(0.05, 0.3))  # the random moment of the cut
            # First the answers: node-b's commit in flight lands but its acknowledgement does
            # not. Then both ways: its heartbeats stop and its lease lapses.
            nft("add table inet sreh_fault",
                "add chain inet sreh_fault out { type filter hook output priority 0 ; }",
                f"add rule inet sreh_fault out tcp sport {fwd.port} drop")
            try:
                time.sleep(0.5)
                nft(f"add rule inet sreh_fault out tcp dport {fwd.port} drop")
                time.sleep(seconds)  # how long the cut lasts (what is asserted never waits)
                during = {m["id"]: m["state"] for m in a.cluster_nodes()["nodes"]}
            finally:
                nft("delete table inet sreh_fault")
            for t in threads:
                t.join()
            n = finish_and_check(a, loads, "store_partition")
            with open(b.log_path, errors="replace") as f:
                log = f.read()
            waited = log.count("not executing while this node's lease has lapsed")
            stopped = log.count("stopping this copy")
        finally:
            subprocess.run(["nft", "delete", "table", "inet", "sreh_fault"], capture_output=True)
            fwd.close()
            cluster.close()
    assert during.get("node-b") != "alive", f"node-b's lease did not lapse during the cut: {during}"
    return f"store_partition: node-b's answers from PostgreSQL cut for 0.5 s, then both ways for " \
           f"{seconds} s under load (node-a " \
           f"saw it {during.get('node-b')}); on node-b {waited} steps waited for the lease and " \
           f"{stopped} copies of claimed runs stopped; {n} runs on both sides: none lost, none " \
           "twice, no event lost or repeated"


def cell_actors(runs=300, run_crashes=4):
    """Actors crash as bugs would (SREH_FAULT, core/base/fault.hpp) under a load: run actors die
    as they start a step at random moments, and the kernel dies once on a submit (taking every
    run actor with it). The kernel restarts the run actors, its supervisor the kernel; the runs
    resume from their journals."""
    # About 4 steps start per run (the recall, the three of the plan).
    moments = sorted(rng.sample(range(10, runs * 4), run_crashes))
    kernel_at = rng.randrange(runs // 5, runs * 4 // 5)
    faults = ",".join([f"run.step:{m}" for m in moments] + [f"kernel.submit:{kernel_at}"])
    with TempDir() as d:
        node = new_node(d, env={"SREH_FAULT": faults}).start()
        load = Load(node, "a", runs)
        for t in load.submit_all(stop_on_error=False):
            t.join()

        def kernel_running():
            status, _, doc = node.json("GET", "/v1/actors")
            k = next(a for a in doc["actors"] if a["name"] == "kernel")
            return k if k["state"] == "running" and k["restarts"] >= 1 else None
        kernel = wait_until(kernel_running, 30, "actors: the kernel running again")
        n = finish_and_check(node, [load], "actors")
        assert kernel_running()["restarts"] == 1, kernel
        died = node.log_text().count("actor died")
        assert died >= 1, "no run actor died: the faults did not fire"
        node.stop()
    return f"actors: {n} runs, {2 * n} mutating steps, faults {faults}: {died} run actor " \
        "deaths logged, the kernel restarted once; no run lost, no effect twice, no event " \
        "lost or repeated"


def node_binary():
    from harness import SREH
    return SREH


CELLS = {"kill9": cell_kill9, "disk_full": cell_disk_full, "clock": cell_clock,
         "slow_disk": cell_slow_disk, "partition": cell_partition,
         "store_partition": cell_store_partition, "actors": cell_actors}

if __name__ == "__main__":
    names = sys.argv[1:] or list(CELLS)
    print(f"fault matrix: seed {SEED} (SREH_FAULT_SEED={SEED} repeats it)", flush=True)
    failed = 0
    for name in names:
        t0 = time.time()
        try:
            line = CELLS[name]()
            print(f"ok   {line} [{time.time() - t0:.0f} s]", flush=True)
        except Exception as e:  # report every cell
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:2000]}", flush=True)
    sys.exit(1 if failed else 0)
