"""A cluster on loopback for end-to-end tests: its own throwaway PostgreSQL (scripts/pg.sh) and
NATS JetStream (scripts/nats.sh), a topology file and N `sreh serve --node-id` processes that
share one config file. Everything it starts is stopped by `close` (and at exit)."""

import atexit
import json
import os
import subprocess
import time

import harness
from harness import Node, free_port

SOURCE = os.environ.get("SREH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def _script(name, *args):
    out = subprocess.run([os.path.join(SOURCE, "scripts", name), *map(str, args)],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"scripts/{name} {' '.join(map(str, args))}: {out.stderr}")
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""


class Postgres:
    def __init__(self, tag, tls_dir=None):
        """`tls_dir`: a scripts/dev-ca.sh dir; the server then takes TLS connections only and
        `url` asks for verify-full against its ca.pem."""
        self.dir = f"/tmp/sreh-e2e-pg-{tag}-{os.getpid()}"
        self.port = free_port()
        self.tls_dir = tls_dir
        self.url = None

    def start(self):
        tls = ["--tls", self.tls_dir] if self.tls_dir else []
        self.url = _script("pg.sh", "start", self.dir, self.port, *tls)
        return self

    def stop_hard(self):
        """Stops the server at once (-m immediate), keeping its data for a restart."""
        _script("pg.sh", "halt", self.dir)

    def restart(self):
        _script("pg.sh", "start", self.dir, self.port)  # keeps the data dir: a restart

    def close(self):
        subprocess.run([os.path.join(SOURCE, "scripts", "pg.sh"), "stop", self.dir],
                       capture_output=True, timeout=60)


class Nats:
    def __init__(self, tag, tls_dir=None, verify=False):
        """`tls_dir`: a scripts/dev-ca.sh dir; the server then requires TLS (`url` is tls://)
        and, with `verify`, a client certificate its ca.pem signed."""
        self.dir = f"/tmp/sreh-e2e-nats-{tag}-{os.getpid()}"
        self.port = free_port()
        self.monitor = free_port()
        self.tls = ["--tls", tls_dir] + (["--verify"] if verify else []) if tls_dir else []
        self.url = None

    def start(self):
        self.url = _script("nats.sh", "start", self.dir, self.port, self.monitor, *self.tls)
        return self

    def close(self):
        subprocess.run([os.path.join(SOURCE, "scripts", "nats.sh"), "stop", self.dir],
                       capture_output=True, timeout=60)


class ClusterNode(Node):
    """A member: `sreh serve --config <shared> --node-id <id>`, run in the cluster's dir."""

    def __init__(self, cluster, node_id, http_port):
        self.dir = cluster.dir
        self.token = harness.TOKEN
        self.port = http_port
        self.node_id = node_id
        self.config = cluster.config
        self.env_extra = {}
        self.proc = None
        self.log_path = os.path.join(cluster.dir, f"{node_id}.log")

    def start(self, env_extra=None, wait=True):
        env = dict(os.environ)
        env.update(env_extra or {})
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [os.path.abspath(harness.SREH), "serve", "--config", self.config, "--node-id",
             self.node_id],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.dir)
        harness._procs.append(self.proc)
        if wait:
            self.wait_ready(timeout=30)
        return self

    def cluster_nodes(self):
        status, _, doc = self.json("GET", "/v1/cluster/nodes")
        assert status == 200, f"cluster/nodes on {self.node_id}: {status} {doc}"
        return doc


class Cluster:
    def __init__(self, workdir, names=("node-a", "node-b", "node-c"), heartbeat_ms=200,
                 lease_ttl_ms=1500, node_extra="", auth=None, token=None, roles=None,
                 topology_extra=""):
        """`auth`: the config's auth block (default: the harness admin token); `token`: what
        the nodes' request helpers send (default: the harness admin token); `roles`: {node:
        "[worker]"} where a node should not have all three roles; `topology_extra`: more of the
        topology file (its `tls:`)."""
        self.dir = workdir
        tag = os.path.basename(workdir)
        self.pg = Postgres(tag).start()
        self.nats = Nats(tag).start()
        atexit.register(self.close)
        self.record = os.path.join(workdir, "record.log")
        self.topology = os.path.join(workdir, "topology.yaml")
        self.config = os.path.join(workdir, "node.yaml")
        self.heartbeat_ms, self.lease_ttl_ms = heartbeat_ms, lease_ttl_ms
        lines = [f"cluster: e2e\nheartbeat_ms: {heartbeat_ms}\nlease_ttl_ms: {lease_ttl_ms}\n"
                 "connection_timeout_ms: 1000\nnodes:\n"]
        self.nodes = {}
        for n in names:
            http, cport = free_port(), free_port()
            lines.append(f"  - id: {n}\n    http: 127.0.0.1:{http}\n"
                         f"    cluster: 127.0.0.1:{cport}\n"
                         f"    roles: {(roles or {}).get(n, '[api, worker, relay]')}\n")
            self.nodes[n] = ClusterNode(self, n, http)
        with open(self.topology, "w") as f:
            f.write("".join(lines) + topology_extra)
        with open(self.config, "w") as f:
            f.write(f"store:\n  kind: postgres\n  url: {self.pg.url}\n"
                    f"nats:\n  url: {self.nats.url}\n"
                    "cluster:\n  topology: topology.yaml\n"
                    f"tools:\n  testkit: true\n  record_file: {self.record}\n"
                    "logging:\n  level: info\n"
                    + ("" if "policy_mode:" in node_extra else "policy_mode: autonomous\n")
                    + node_extra + (harness.DEFAULT_AUTH if auth is None else auth))
        if token is not None:
            for n in self.nodes.values():
                n.token = token
        self.closed = False

    def start_all(self):
        for n in self.nodes.values():
            n.start(wait=False)
        for n in self.nodes.values():
            n.wait_ready(timeout=30)
        self.wait_linked(list(self.nodes))
        return self

    def wait_linked(self, names, timeout=20):
        """Until every node in `names` sees every other one alive and linked."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ok = True
            for n in names:
                doc = self.nodes[n].cluster_nodes()
                by_id = {m["id"]: m for m in doc["nodes"]}
                ok = ok and all(by_id[o]["state"] == "alive" and by_id[o]["connected"]
                                for o in names)
            if ok:
                return
            time.sleep(0.05)  # polling the membership view, bounded by the deadline
        raise AssertionError(f"cluster not linked after {timeout}s: "
                             f"{json.dumps(self.nodes[names[0]].cluster_nodes())}")

    def close(self):
        if self.closed:
            return
        self.closed = True
        for n in self.nodes.values():
            if n.proc and n.proc.poll() is None:
                n.proc.kill()
                n.proc.wait()
        self.nats.close()
        self.pg.close()
