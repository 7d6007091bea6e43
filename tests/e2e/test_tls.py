"""HTTPS on the front (`tls:`; docs/security.md), with certificates from scripts/dev-ca.sh: the
node serves TLS 1.2+ with its certificate; plain HTTP on its port gets no HTTP answer (the CLI
says to use https://); with
`client_ca_file` a client without a certificate, or with one another CA signed, is refused in
the handshake and one with a valid certificate is served (its token still checked); SIGHUP
reloads the certificate for new connections; bad files are refused at start, naming them."""

import http.client
import os
import signal
import socket
import ssl
import subprocess

from cluster_harness import SOURCE
from harness import SREH, Node, TempDir, run_tests, wait_until

DEV_CA = os.path.join(SOURCE, "scripts", "dev-ca.sh")


def make_ca(d, *names):
    subprocess.run([DEV_CA, d, *names], check=True, capture_output=True)
    return d


def client_context(ca_dir, cert=None):
    ctx = ssl.create_default_context(cafile=os.path.join(ca_dir, "ca.pem"))
    if cert:
        ctx.load_cert_chain(os.path.join(ca_dir, f"{cert}.pem"), os.path.join(ca_dir, f"{cert}.key"))
    return ctx


def tls_block(ca_dir, client_ca=False):
    out = (f"tls:\n  cert_file: {ca_dir}/server.pem\n  key_file: {ca_dir}/server.key\n")
    return out + (f"  client_ca_file: {ca_dir}/ca.pem\n" if client_ca else "")


def peer_serial(port, ctx):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.getpeercert()["serialNumber"], s.version()


def test_https_serves_and_plain_http_gets_no_answer():
    with TempDir() as d:
        ca = make_ca(os.path.join(d, "ca"), "server")
        node = Node(d, config_extra=tls_block(ca), tls=client_context(ca)).start()
        status, _, doc = node.json("GET", "/v1/runs")
        assert status == 200, doc
        serial, version = peer_serial(node.port, client_context(ca))
        assert version in ("TLSv1.2", "TLSv1.3"), version
        # Plain HTTP on the TLS port: the handshake fails, no HTTP answer comes back.
        conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=5)
        try:
            conn.request("GET", "/healthz")
            conn.getresponse()
            raise AssertionError("plain HTTP got an answer from the HTTPS port")
        except (http.client.RemoteDisconnected, ConnectionResetError, http.client.BadStatusLine):
            pass
        finally:
            conn.close()
        # A client that only speaks TLS 1.1 is refused.
        old = client_context(ca)
        old.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore", DeprecationWarning)
            old.maximum_version = ssl.TLSVersion.TLSv1_1
        try:
            peer_serial(node.port, old)
            raise AssertionError("a TLS 1.1 client was served")
        except (ssl.SSLError, ConnectionResetError):
            pass
        # The CLI over https://, verifying the node against the dev CA.
        env = dict(os.environ, SREH_TOKEN=node.token)
        cli = [SREH, "runs", "--server", f"https://127.0.0.1:{node.port}"]
        ok = subprocess.run(cli + ["--ca-file", os.path.join(ca, "ca.pem")], env=env,
                            capture_output=True, text=True)
        assert ok.returncode == 0, ok.stderr
        unknown = subprocess.run(cli, env=env, capture_output=True, text=True)  # system CAs only
        assert unknown.returncode != 0 and "certificate verify failed" in unknown.stderr, \
            unknown.stderr
        # The CLI in plain HTTP: the node is up, so not "is it running?" but "use https://".
        plain = subprocess.run([SREH, "runs", "--server", f"127.0.0.1:{node.port}"], env=env,
                               capture_output=True, text=True)
        assert plain.returncode == 3, (plain.returncode, plain.stderr)
        assert "closed the connection without answering" in plain.stderr and \
            f"use --server https://127.0.0.1:{node.port}" in plain.stderr and \
            "is `sreh serve` running" not in plain.stderr, plain.stderr
        # SIGHUP: a new certificate for new connections.
        make_ca(ca, "server")  # same CA, new server certificate (new serial)
        node.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: peer_serial(node.port, client_context(ca))[0] != serial, 10,
                   "the reloaded certificate")
        status, _, _ = node.json("GET", "/healthz")
        assert status == 200
        node.stop()


def test_client_certificates_when_configured():
    with TempDir() as d:
        ca = make_ca(os.path.join(d, "ca"), "server", "alice")
        other = make_ca(os.path.join(d, "other"), "mallory")  # another CA
        node = Node(d, config_extra=tls_block(ca, client_ca=True),
                    tls=client_context(ca, "alice")).start()
        status, _, doc = node.json("GET", "/v1/runs")
        assert status == 200, doc
        # The certificate gets the connection; the token still decides what it may do.
        status, _, doc = node.json("GET", "/v1/runs", token=None)
        assert status == 401, doc
        env = dict(os.environ, SREH_TOKEN=node.token, SREH_CA_FILE=os.path.join(ca, "ca.pem"))
        cli = [SREH, "runs", "--server", f"https://127.0.0.1:{node.port}"]
        mine = subprocess.run(cli + ["--cert", os.path.join(ca, "alice.pem"), "--key",
                                     os.path.join(ca, "alice.key")], env=env, capture_output=True,
                              text=True)
        assert mine.returncode == 0, mine.stderr
        none = subprocess.run(cli, env=env, capture_output=True, text=True)
        assert none.returncode != 0, none.stdout
        for name, ctx in (("no certificate", client_context(ca)),
                          ("another CA's certificate", client_context(ca, None))):
            if name == "another CA's certificate":
                ctx.load_cert_chain(os.path.join(other, "mallory.pem"),
                                    os.path.join(other, "mallory.key"))
            refused = Node.__new__(Node)
            refused.port, refused.tls, refused.token = node.port, ctx, node.token
            try:
                refused.json("GET", "/healthz")
                raise AssertionError(f"a client with {name} was served")
            except (ssl.SSLError, ConnectionResetError, BrokenPipeError,
                    http.client.RemoteDisconnected):
                pass
        node.stop()


def test_bad_tls_files_are_refused_at_start():
    with TempDir() as d:
        ca = make_ca(os.path.join(d, "ca"), "server", "other")
        out = Node(d, config_extra=f"tls:\n  cert_file: {ca}/nope.pem\n  key_file: "
                   f"{ca}/server.key\n").start_fails()
        assert f"tls.cert_file: cannot read '{ca}/nope.pem'" in out, out
        out = Node(d, config_extra=f"tls:\n  cert_file: {ca}/server.pem\n  key_file: "
                   f"{ca}/other.key\n").start_fails()
        assert f"tls.key_file: cannot use '{ca}/other.key': key values mismatch" in out, out
        out = Node(d, config_extra=f"tls:\n  cert_file: {ca}/server.key\n  key_file: "
                   f"{ca}/server.key\n").start_fails()
        assert f"tls.cert_file: cannot use '{ca}/server.key'" in out, out
        out = Node(d, config_extra=f"tls:\n  cert_file: {ca}/server.pem\n").start_fails()
        assert "tls: needs cert_file and key_file" in out, out


if __name__ == "__main__":
    run_tests([
        test_https_serves_and_plain_http_gets_no_answer,
        test_client_certificates_when_configured,
        test_bad_tls_files_are_refused_at_start,
    ])
