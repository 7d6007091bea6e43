"""PostgreSQL over TLS (docs/security.md): a throwaway server with ssl=on and a pg_hba that
takes TCP connections over TLS only (scripts/pg.sh start --tls). A node whose store url asks
for `sslmode=verify-full` against the dev CA runs a goal to the end; with another CA's
certificate as `sslrootcert`, or with `sslmode=disable`, it refuses to start with one line that
names the store and libpq's reason, and never the password of the url."""

import os
import subprocess
import sys

from cluster_harness import SOURCE, Postgres
from harness import Node, TempDir, run_tests

DEV_CA = os.path.join(SOURCE, "scripts", "dev-ca.sh")
PASSWORD = "pw-not-for-logs-7f3a"  # trust auth ignores it; no message may show it
PLAN = "model:\n  provider: scripted\n  script:\n    - {tool: test.echo, args: {}}\n"
PG = None
DIR = None


def url(query):
    base = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{PG.port}/sreh"
    return f"{base}?{query}"


def node(name, store_url):
    d = os.path.join(DIR, name)
    os.makedirs(d)
    return Node(d, PLAN + f"store:\n  kind: postgres\n  url: \"{store_url}\"\n")


def assert_refused(out, *reasons):
    assert f"127.0.0.1:{PG.port}/sreh" in out, f"the store is not named: {out}"
    assert "postgres" in out, out
    for r in reasons:
        assert r in out, f"'{r}' missing from: {out}"
    assert PASSWORD not in out, f"the password leaked: {out}"


def test_verify_full_runs_a_goal():
    assert "sslmode=verify-full" in PG.url, PG.url
    n = node("ok", url(f"sslmode=verify-full&sslrootcert={DIR}/ca/ca.pem")).start()
    try:
        rid = n.submit("over TLS to PostgreSQL")
        assert n.wait_run(rid)["state"] == "succeeded"
    finally:
        n.stop()
    assert PASSWORD not in open(n.log_path).read(), "the password is in the log"


def test_another_ca_is_refused_at_start():
    subprocess.run([DEV_CA, f"{DIR}/other"], check=True, capture_output=True)
    out = node("other-ca", url(f"sslmode=verify-full&sslrootcert={DIR}/other/ca.pem")).start_fails()
    assert_refused(out, "cannot connect", "certificate verify failed")


def test_plain_connection_is_refused_at_start():
    out = node("plain", url("sslmode=disable")).start_fails()
    assert_refused(out, "cannot connect", "pg_hba.conf rejects connection", "no encryption")


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        DIR = d
        subprocess.run([DEV_CA, f"{d}/ca"], check=True, capture_output=True)
        PG = Postgres(os.path.basename(d), tls_dir=f"{d}/ca").start()
        try:
            run_tests([test_verify_full_runs_a_goal, test_another_ca_is_refused_at_start,
                       test_plain_connection_is_refused_at_start])
        except SystemExit as e:
            code = e.code
        finally:
            PG.close()
    sys.exit(code)
