"""`sreh backup` and `sreh restore` on the real binary, and `sreh audit verify` on PostgreSQL.

- A backup taken during a burst of runs (clients keep submitting while it copies) restores into
  a fresh data dir, and the node started there serves every run that was committed before the
  backup began, resumes those that were under way, and its audit chain verifies.
- Every refusal names its cause and changes nothing: a non-empty backup dir, a missing store, a
  restore while the node runs, over an existing store without --force, a backup whose manifest
  or file was tampered with, a directory that is no backup, a PostgreSQL store.
- `sreh audit verify --config` on a node whose store is PostgreSQL verifies the cluster's chain,
  and names the entry a direct UPDATE in the database edited.
"""

import glob
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from cluster_harness import Postgres  # noqa: E402
from harness import Node, TempDir, run_tests, sreh_cli, wait_until  # noqa: E402

SCRIPT = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {service: checkout}}
    - {tool: test.sleep, args: {ms: 100}}
"""
TERMINAL = ("succeeded", "failed", "cancelled")


def submit(node, goal):
    status, _, doc = node.json("POST", "/v1/goals", {"goal": goal})
    assert status in (200, 201), f"submit: {status} {doc}"
    return doc["run"]["id"]


class Burst:
    """Clients submitting goals until stopped; `committed()` is what was acknowledged so far."""

    def __init__(self, node, clients=4):
        self.node = node
        self.lock = threading.Lock()
        self.ids = []
        self.errors = []
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(clients)]

    def client(self, i):
        n = 0
        while not self.done.is_set():
            n += 1
            try:
                run_id = submit(self.node, f"burst client {i} goal {n}")
            except Exception as e:  # noqa: BLE001 - reported by stop()
                self.errors.append(e)
                return
            with self.lock:
                self.ids.append(run_id)

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def committed(self):
        with self.lock:
            return list(self.ids)

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(30)
        assert not self.errors, self.errors


def manifest(backup_dir):
    with open(os.path.join(backup_dir, "backup.json")) as f:
        return json.load(f)


def store_runs(path):
    db = sqlite3.connect(path)
    try:
        return {r[0]: r[1] for r in db.execute("SELECT id, state FROM runs")}
    finally:
        db.close()


def test_backup_during_a_burst_restores_every_committed_run():
    with TempDir() as d:
        node = Node(d, config_extra=SCRIPT).start()
        first = submit(node, "finished before the backup")
        node.wait_run(first)
        burst = Burst(node).start()
        wait_until(lambda: len(burst.committed()) >= 40, 30, "40 runs submitted")
        before = burst.committed()  # acknowledged, so committed, before the backup starts
        backup = os.path.join(d, "backup")
        code, out, err = sreh_cli(["backup", backup, "--data-dir", node.data])
        during = burst.committed()
        burst.stop()
        assert code == 0, out + err
        assert "audit chain of the copy ok" in out, out
        # The burst went on while the copy was taken: the source has runs the backup has not.
        assert len(during) > len(before), (len(before), len(during))
        m = manifest(backup)
        assert m["format"] == "sreh-backup/1" and m["runs"] >= len(before) + 1, m
        assert m["tokens"] == [], m  # the harness node's admin token is in its config
        node.stop()
        source_runs = store_runs(os.path.join(node.data, "sreh.db"))
        assert len(source_runs) == len(burst.committed()) + 1

        # Restore into a fresh data dir and serve it.
        restored_dir = os.path.join(d, "restored")
        os.makedirs(restored_dir)
        restored = Node(restored_dir, config_extra=SCRIPT)
        code, out, err = sreh_cli(["restore", backup, "--data-dir", restored.data])
        assert code == 0, out + err
        assert f"{m['runs']} runs" in out, out
        copied = store_runs(os.path.join(restored.data, "sreh.db"))
        assert len(copied) == m["runs"], (len(copied), m["runs"])
        # What the backup holds is what the source held at one moment: no run in it is unknown
        # to the source, and every run acknowledged before it began is in it.
        assert set(copied) <= set(source_runs)
        missing = [r for r in [first] + before if r not in copied]
        assert not missing, f"committed before the backup, not in it: {missing[:5]}"
        restored.start()
        for run_id in [first] + before:
            status, _, doc = restored.json("GET", f"/v1/runs/{run_id}")
            assert status == 200, (run_id, status, doc)
        assert restored.run(first)["state"] == "succeeded"
        # Runs under way at the snapshot are recovered and finish on the restored node.
        unfinished = [r for r, s in copied.items() if s not in TERMINAL]
        for run_id in unfinished:
            restored.wait_run(run_id)
        restored.stop()
        code, out, err = sreh_cli(["audit", "verify", "--data-dir", restored.data])
        assert code == 0 and "audit log ok" in out, out + err
        restored.check_log()


def test_backup_and_restore_refuse_what_is_wrong_and_change_nothing():
    with TempDir() as d:
        node = Node(d, config_extra=SCRIPT).start()
        node.wait_run(submit(node, "one run"))
        backup = os.path.join(d, "backup")

        # A backup dir that holds anything is refused; so is a store that is not there.
        busy = os.path.join(d, "busy")
        os.makedirs(busy)
        open(os.path.join(busy, "keep.txt"), "w").close()
        code, _, err = sreh_cli(["backup", busy, "--data-dir", node.data])
        assert code == 1 and "is not empty" in err, err
        assert os.listdir(busy) == ["keep.txt"]
        code, _, err = sreh_cli(["backup", backup, "--data-dir", os.path.join(d, "nowhere")])
        assert code == 1 and "no database file at" in err, err
        code, _, err = sreh_cli(["backup"])
        assert code == 2 and "no backup directory given" in err, err
        code, _, err = sreh_cli(["backup", backup, "--bogus"])
        assert code == 2 and "unknown option '--bogus'" in err, err

        code, out, err = sreh_cli(["backup", backup, "--data-dir", node.data])
        assert code == 0, out + err
        assert os.stat(backup).st_mode & 0o077 == 0, oct(os.stat(backup).st_mode)

        # The node still runs: a restore onto its data dir is refused and touches nothing.
        db = os.path.join(node.data, "sreh.db")
        size = os.path.getsize(db)
        code, _, err = sreh_cli(["restore", backup, "--data-dir", node.data, "--force"])
        assert code == 1 and "is in use by another node" in err, err
        node.wait_run(submit(node, "after the backup"))
        node.stop()
        assert os.path.getsize(db) >= size

        # Over an existing store only with --force, which keeps the replaced store.
        code, _, err = sreh_cli(["restore", backup, "--data-dir", node.data])
        assert code == 1 and "holds a store already (2 runs" in err and "--force" in err, err
        assert len(store_runs(db)) == 2
        code, out, err = sreh_cli(["restore", backup, "--data-dir", node.data, "--force"])
        assert code == 0 and "the store it replaced is kept as" in out, out + err
        assert len(store_runs(db)) == 1
        kept = glob.glob(db + ".before-restore-*")
        assert len(kept) == 1 and len(store_runs(kept[0])) == 2, kept

        target = os.path.join(d, "target")
        # A manifest that does not match its file.
        bad = os.path.join(d, "bad-manifest")
        shutil.copytree(backup, bad)
        m = manifest(bad)
        m["runs"] += 1
        with open(os.path.join(bad, "backup.json"), "w") as f:
            json.dump(m, f)
        code, _, err = sreh_cli(["restore", bad, "--data-dir", target])
        assert code == 1 and "does not match its manifest: runs is 1 in the file, 2" in err, err
        assert not os.path.exists(target), "a refused restore made the data dir"
        # An event edited in the backup's file: its audit chain names it.
        edited = os.path.join(d, "edited")
        shutil.copytree(backup, edited)
        conn = sqlite3.connect(os.path.join(edited, "sreh.db"))
        conn.execute("UPDATE events SET data = '{\"tampered\":true}' WHERE seq = 2")
        conn.commit()
        conn.close()
        code, _, err = sreh_cli(["restore", edited, "--data-dir", target])
        assert code == 1 and "the audit chain is broken at event 2" in err, err
        assert "nothing was changed" in err, err
        # A directory that is no backup; a manifest that is not JSON.
        code, _, err = sreh_cli(["restore", busy, "--data-dir", target])
        assert code == 1 and "no manifest" in err, err
        with open(os.path.join(bad, "backup.json"), "w") as f:
            f.write("{not json")
        code, _, err = sreh_cli(["restore", bad, "--data-dir", target])
        assert code == 1 and "backup.json" in err, err
        assert not os.path.exists(target)

        # A PostgreSQL store is the database's to back up.
        pg_config = os.path.join(d, "pg.yaml")
        with open(pg_config, "w") as f:
            f.write("store:\n  kind: postgres\n  url: postgresql://sreh@127.0.0.1:1/sreh\n")
        code, _, err = sreh_cli(["backup", os.path.join(d, "pgb"), "--config", pg_config])
        assert code == 1 and "pg_dump" in err, err
        code, _, err = sreh_cli(["restore", backup, "--config", pg_config])
        assert code == 1 and "pg_restore" in err, err


def psql(url, sql):
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql")) or ["psql"]
    out = subprocess.run([candidates[-1], url, "-qAtc", sql], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_audit_verify_on_postgres():
    pg = Postgres("audit").start()
    try:
        with TempDir() as d:
            node = Node(d, config_extra=f"store:\n  kind: postgres\n  url: {pg.url}\n" + SCRIPT)
            node.start()
            for i in range(3):
                node.wait_run(submit(node, f"postgres run {i}"))
            # While the node runs: one snapshot of a live store.
            code, out, err = sreh_cli(["audit", "verify", "--config", node.config])
            assert code == 0 and "audit log ok" in out, out + err
            entries = int(out.split("audit log ok: ")[1].split(" ")[0])
            assert entries == int(psql(pg.url, "SELECT count(*) FROM events")), out
            node.stop()
            seq = psql(pg.url, "SELECT min(seq) FROM events WHERE kind = 'step.outcome'")
            psql(pg.url, f"UPDATE events SET data = '{{\"edited\":true}}' WHERE seq = {seq}")
            code, out, err = sreh_cli(["audit", "verify", "--config", node.config])
            assert code == 1 and f"audit log BROKEN at event {seq}" in out, out + err
            assert "edited" in out, out
            # A database that holds no sreh store is named as such.
            other = pg.url.rsplit("/", 1)[0] + "/template1"
            with open(os.path.join(d, "other.yaml"), "w") as f:
                f.write(f"store:\n  kind: postgres\n  url: {other}\n")
            code, out, err = sreh_cli(["audit", "verify", "--config",
                                       os.path.join(d, "other.yaml")])
            assert code == 1 and "holds no sreh store" in err, out + err
    finally:
        pg.close()


if __name__ == "__main__":
    run_tests([test_backup_during_a_burst_restores_every_committed_run,
               test_backup_and_restore_refuse_what_is_wrong_and_change_nothing,
               test_audit_verify_on_postgres])
