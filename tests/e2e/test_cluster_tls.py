"""Mutual TLS on the cluster links (the topology's `tls:`; docs/security.md): members with
certificates the cluster CA signed link over TLS and run; a member whose certificate another CA
signed is refused by the others (and cannot link to them), whatever id it claims; a node whose own
certificate names another node does not start; missing certificate files are load errors."""

import os
import shutil
import subprocess

from cluster_harness import SOURCE, Cluster
from harness import TempDir, run_tests, wait_until

DEV_CA = os.path.join(SOURCE, "scripts", "dev-ca.sh")
TLS = "tls:\n  ca_file: ca/ca.pem\n  cert_file: certs/{node}.pem\n  key_file: certs/{node}.key\n"


def certs(d, names, rogue=()):
    """The cluster CA in d/ca with a certificate per name in d/certs; the `rogue` names get
    theirs from another CA."""
    subprocess.run([DEV_CA, os.path.join(d, "ca"), *names], check=True, capture_output=True)
    os.makedirs(os.path.join(d, "certs"), exist_ok=True)
    for n in names:
        for ext in ("pem", "key"):
            shutil.copy(os.path.join(d, "ca", f"{n}.{ext}"), os.path.join(d, "certs", f"{n}.{ext}"))
    if rogue:
        subprocess.run([DEV_CA, os.path.join(d, "other"), *rogue], check=True, capture_output=True)
        for n in rogue:
            for ext in ("pem", "key"):
                shutil.copy(os.path.join(d, "other", f"{n}.{ext}"),
                            os.path.join(d, "certs", f"{n}.{ext}"))


def view(node, other):
    return {m["id"]: m for m in node.cluster_nodes()["nodes"]}[other]


def test_members_link_over_mutual_tls():
    with TempDir() as d:
        certs(d, ["node-a", "node-b", "node-c"])
        cluster = Cluster(d, topology_extra=TLS, node_extra=(
            "model:\n  provider: scripted\n  script:\n    - {tool: test.echo, args: {x: 1}}\n"))
        try:
            cluster.start_all()  # every member sees every other one alive and linked
            assert "mutual TLS" in open(cluster.nodes["node-a"].log_path).read()
            a = cluster.nodes["node-a"]
            rid = a.submit("over tls", key="tls-1")
            a.wait_run(rid, states=("succeeded",))
        finally:
            cluster.close()


def test_a_member_with_a_foreign_certificate_is_refused_both_ways():
    """node-c's certificate comes from another CA: node-a dials it and fails the handshake, and
    node-c cannot link to anyone, while its heartbeat (in the store) says it is alive."""
    with TempDir() as d:
        certs(d, ["node-a", "node-b"], rogue=["node-c"])
        cluster = Cluster(d, topology_extra=TLS)
        try:
            a, c = cluster.nodes["node-a"], cluster.nodes["node-c"]
            for n in cluster.nodes.values():
                n.start(wait=False)
            for n in cluster.nodes.values():
                n.wait_ready(timeout=30)
            wait_until(lambda: view(a, "node-c")["state"] == "alive" and
                       "handshake" in view(a, "node-c").get("link_error", ""), 30,
                       "node-a to dial node-c and fail its handshake")
            assert not view(a, "node-c")["connected"], view(a, "node-c")
            for other in ("node-a", "node-b"):
                assert not view(c, other)["connected"], view(c, other)
        finally:
            cluster.close()


def test_a_node_whose_certificate_names_another_node_does_not_start():
    with TempDir() as d:
        certs(d, ["node-a", "node-b"])
        for ext in ("pem", "key"):  # node-b borrows node-a's certificate
            shutil.copy(os.path.join(d, "certs", f"node-a.{ext}"),
                        os.path.join(d, "certs", f"node-b.{ext}"))
        cluster = Cluster(d, names=("node-a", "node-b"), topology_extra=TLS)
        try:
            out = cluster.nodes["node-b"].start_fails()
            assert "is a certificate for node-a, localhost, not for node 'node-b'" in out, out
        finally:
            cluster.close()


def test_missing_certificate_files_are_load_errors():
    with TempDir() as d:
        certs(d, ["node-a"])  # node-b has none
        cluster = Cluster(d, names=("node-a", "node-b"), topology_extra=TLS)
        try:
            out = cluster.nodes["node-a"].start_fails()
            assert "tls: cannot read" in out and "certs/node-b.pem' (node node-b)" in out, out
        finally:
            cluster.close()


if __name__ == "__main__":
    run_tests([
        test_members_link_over_mutual_tls,
        test_a_member_with_a_foreign_certificate_is_refused_both_ways,
        test_a_node_whose_certificate_names_another_node_does_not_start,
        test_missing_certificate_files_are_load_errors,
    ])
