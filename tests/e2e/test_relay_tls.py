"""The relay publishes to JetStream over TLS (docs/relay.md, docs/security.md): a nats-server
that requires TLS and a client certificate (scripts/nats.sh start --tls --verify), and a node
whose `nats:` names the dev CA and its client certificate, relative to the config file. Every
event of the log reaches the stream. With another CA's certificate as `ca_file` the node
serves but its relay cannot connect: the log and GET /v1/stats say why; once the config is
fixed the node publishes everything it committed meanwhile, each event once."""

import collections
import json
import os
import ssl
import subprocess
import sys

from cluster_harness import SOURCE, Nats
from harness import Node, TempDir, run_tests, wait_until
from nats_stream import stream_messages

DEV_CA = os.path.join(SOURCE, "scripts", "dev-ca.sh")
PLAN = "model:\n  provider: scripted\n  script:\n    - {tool: test.echo, args: {}}\n"
DIR = NATS = None


def node(ca):
    """A node in DIR whose relay trusts `ca` (a dev-ca dir under DIR) and presents the
    `relay` certificate of the right CA."""
    return Node(DIR, PLAN + f"nats:\n  url: {NATS.url}\n  ca_file: {ca}/ca.pem\n"
                "  cert_file: ca/relay.pem\n  key_file: ca/relay.key\n")


def client_tls():
    ctx = ssl.create_default_context(cafile=os.path.join(DIR, "ca", "ca.pem"))
    ctx.load_cert_chain(os.path.join(DIR, "ca", "relay.pem"), os.path.join(DIR, "ca", "relay.key"))
    return ctx


def relay(n):
    return n.stats()["relay"]


def check_stream(n):
    """Every event of the node's log is in the stream once, in seq order."""
    last = n.stats()["store"]["last_event_seq"]
    wait_until(lambda: relay(n)["offset"] == last, 30, "the relay to publish the whole log")
    msgs = stream_messages(NATS.url, "sreh-events", tls=client_tls())
    ids = collections.Counter(m["headers"].get("Nats-Msg-Id") for m in msgs)
    assert all(c == 1 for c in ids.values()), "an event is in JetStream twice"
    seqs = [json.loads(m["data"])["seq"] for m in msgs]
    assert seqs == list(range(1, last + 1)), f"JetStream seqs {seqs[:5]}..{seqs[-5:]}, log 1..{last}"
    return last


def test_the_relay_publishes_over_tls_with_a_client_certificate():
    assert NATS.url.startswith("tls://"), NATS.url
    n = node("ca").start()
    try:
        for i in range(3):
            n.wait_run(n.submit(f"over tls {i}"), states=("succeeded",))
        check_stream(n)
        r = relay(n)
        assert r["connected"] and r["errors"] == 0 and r["last_error"] == "", r
    finally:
        n.stop()


def test_another_ca_is_reported_and_nothing_is_lost_once_fixed():
    n = node("other").start()  # the node serves; only its relay cannot connect
    try:
        rid = n.submit("while the relay cannot connect")
        n.wait_run(rid, states=("succeeded",))
        r = wait_until(lambda: (lambda r: r if r["errors"] > 0 else None)(relay(n)), 20,
                       "the relay to report its failed connect")
        assert not r["connected"], r
        assert NATS.url in r["last_error"] and "SSL handshake error" in r["last_error"], r
        assert "unable to get local issuer certificate" in r["last_error"], r
        committed = n.stats()["store"]["last_event_seq"]
        assert r["offset"] < committed, r
    finally:
        n.stop()
    log = open(n.log_path).read()
    assert "unable to get local issuer certificate" in log, log[-2000:]
    fixed = node("ca").start()
    try:
        assert check_stream(fixed) >= committed
    finally:
        fixed.stop()


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        DIR = d
        subprocess.run([DEV_CA, f"{d}/ca", "relay"], check=True, capture_output=True)
        subprocess.run([DEV_CA, f"{d}/other"], check=True, capture_output=True)
        NATS = Nats(os.path.basename(d), tls_dir=f"{d}/ca", verify=True).start()
        try:
            run_tests([test_the_relay_publishes_over_tls_with_a_client_certificate,
                       test_another_ca_is_reported_and_nothing_is_lost_once_fixed])
        except SystemExit as e:
            code = e.code
        finally:
            NATS.close()
    sys.exit(code)
