"""examples/cluster/start.sh --tls, run as a user would (with SREH_BIN, so it neither installs
nor builds): a dev CA, three nodes serving HTTPS with mutual TLS between them, PostgreSQL with
sslmode=verify-full and NATS over tls:// with a client certificate. `sreh nodes` and a goal
over HTTPS with --ca-file work; plain HTTP gets no answer; the relay publishes over TLS;
SIGTERM stops everything the script started. Needs the example's fixed ports free (7071-7073,
7171-7173, 55433, 4223, 8223)."""

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time

from cluster_harness import SOURCE
from harness import SREH, TempDir, run_tests, sreh_cli, wait_until

PORTS = (7071, 7072, 7073, 7171, 7172, 7173, 55433, 4223, 8223)
DIR = None


def port_in_use(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def cli(*args):
    ca = os.path.join(DIR, "tls", "ca.pem")
    token = open(os.path.join(DIR, "admin.token")).read().strip()
    return sreh_cli([*args, "--ca-file", ca], token=token, timeout=90)


def test_start_sh_tls_runs_a_tls_cluster():
    busy = [p for p in PORTS if port_in_use(p)]
    assert not busy, f"ports {busy} are in use (is examples/cluster/start.sh running?)"
    log_path = os.path.join(DIR, "start.log")
    env = dict(os.environ, SREH_BIN=os.path.abspath(SREH), SREH_CLUSTER_DIR=DIR)
    with open(log_path, "wb") as log:
        p = subprocess.Popen([os.path.join(SOURCE, "examples", "cluster", "start.sh"), "--tls"],
                             stdout=log, stderr=subprocess.STDOUT, env=env)
    started = time.time()
    try:
        def up():
            assert p.poll() is None, f"start.sh exited {p.returncode}:\n{open(log_path).read()}"
            return "cluster is up over TLS" in open(log_path).read()
        wait_until(up, 60, "start.sh --tls to bring the cluster up")
        print(f"  (start.sh --tls: up in {time.time() - started:.1f} s)")
        out = open(log_path).read()
        assert "sslmode=verify-full" in out and "tls://localhost:4223" in out, out

        def linked():
            rc, stdout, stderr = cli("nodes", "--server", "https://127.0.0.1:7071", "--json")
            assert rc == 0, stderr
            nodes = {n["id"]: n for n in json.loads(stdout)["nodes"]}
            assert sorted(nodes) == ["node-a", "node-b", "node-c"], nodes
            return all(n["state"] == "alive" and n["connected"] for n in nodes.values())
        wait_until(linked, 30, "`sreh nodes` to show the three members alive and linked")
        rc, stdout, stderr = cli("nodes", "--server", "https://127.0.0.1:7071")
        assert rc == 0 and all(n in stdout for n in ("node-a", "node-b", "node-c")), stderr
        print("  " + stdout.replace("\n", "\n  ").rstrip())

        # Submitted on node-b and followed to its end over its SSE stream, all over HTTPS.
        rc, stdout, stderr = cli("submit", "--server", "https://127.0.0.1:7072", "--watch",
                                 "checkout is failing - find out why and fix it")
        assert rc == 0, f"submit --watch exited {rc}: {stdout}{stderr}"
        rid = stdout.split()[0]
        rc, stdout, stderr = cli("show", rid, "--server", "https://127.0.0.1:7073", "--json")
        assert rc == 0, stderr
        doc = json.loads(stdout)
        assert doc.get("state", doc.get("run", {}).get("state")) == "succeeded", stdout

        # Plain HTTP on a TLS front gets no HTTP answer.
        with socket.create_connection(("127.0.0.1", 7071), timeout=5) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                assert not s.recv(100).startswith(b"HTTP/"), "plain HTTP was answered"
            except (ConnectionResetError, socket.timeout):
                pass
        # The cluster links are mutual TLS, and one relay publishes the log over tls://.
        for n in ("node-a", "node-b", "node-c"):
            assert "mutual TLS" in open(os.path.join(DIR, f"{n}.log")).read(), n

        def relayed():
            stats = [stats_of(port) for port in (7071, 7072, 7073)]
            active = [s["relay"] for s in stats if s["relay"]["active"]]
            return (len(active) == 1 and active[0]["connected"] and active[0]["lag"] == 0
                    and active[0]["offset"] > 0)
        wait_until(relayed, 30, "one relay to publish the whole log over TLS")
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)
    assert not os.path.exists("/tmp/sreh-cluster-pg-tls"), "PostgreSQL left behind"
    assert not os.path.exists("/tmp/sreh-cluster-nats-tls"), "NATS left behind"
    assert not any(port_in_use(p) for p in (7071, 7072, 7073)), "a node left behind"


def stats_of(port):
    ctx = ssl.create_default_context(cafile=os.path.join(DIR, "tls", "ca.pem"))
    token = open(os.path.join(DIR, "admin.token")).read().strip()
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    try:
        c.request("GET", "/v1/stats", headers={"Authorization": f"Bearer {token}"})
        r = c.getresponse()
        assert r.status == 200, r.status
        return json.loads(r.read())
    finally:
        c.close()


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        DIR = d
        try:
            run_tests([test_start_sh_tls_runs_a_tls_cluster])
        except SystemExit as e:
            code = e.code
    sys.exit(code)
