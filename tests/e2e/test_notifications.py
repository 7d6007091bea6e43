"""Notifications end to end (docs/notifications.md): an approval requested in review mode reaches
a signed webhook, a PagerDuty-format receiver and an SMTP server (aiosmtpd) exactly once, and
email goes over STARTTLS with AUTH (a server without STARTTLS is refused); a
receiver down for a while gets its notice once it is back, never twice; one that never answers is
dead-lettered with its error and can be retried; and a node killed with kill -9 while a
delivery is pending delivers it after the restart, without sending the delivered ones again.
"""

import hashlib
import hmac
import http.client
import json
import os
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, auth_block, free_port, run_tests, sreh_cli, wait_until  # noqa: E402

try:
    from aiosmtpd.controller import Controller
except ImportError:  # a Python of its own (pyenv) beside Debian's python3-aiosmtpd
    sys.path.append("/usr/lib/python3/dist-packages")
    from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SECRET = "hook-secret-from-env"
TOKENS = {"otto": ("operator", "otto-secret-token"), "vera": ("viewer", "vera-secret-token"),
          "root": ("admin", "root-secret-token")}
N = None
WORK = None  # the test's directory
HOOKS = None  # the HTTP receivers (webhook, PagerDuty, and the one that comes up late)
MAIL = []     # the messages the SMTP server accepted
LOGINS = []  # who logged in to the STARTTLS server
SECURE_MAIL = []  # the messages the STARTTLS server accepted, with the login that sent them
LATE_PORT = free_port()
DOWN_PORT = free_port()  # nothing ever listens here


class Receiver(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port):
        self.got = []  # (path, headers, body)
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def deliveries(self, path):
        with self.lock:
            return [(h, b) for p, h, b in self.got if p == path]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.server.lock:
            self.server.got.append((self.path, dict(self.headers), body))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class MailHandler:
    async def handle_DATA(self, server, session, envelope):
        MAIL.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


class SecureMailHandler:
    async def handle_DATA(self, server, session, envelope):
        SECURE_MAIL.append((bool(session.authenticated), envelope.content))
        return "250 OK"


def authenticate(server, session, envelope, mechanism, auth_data):
    LOGINS.append(auth_data.login)
    return AuthResult(success=(auth_data.login, auth_data.password) == (b"sreh", b"mail-pass"))


def starttls_server(d):
    """An SMTP server that requires STARTTLS (a dev CA's certificate) and AUTH."""
    subprocess.run([os.path.join(SOURCE, "scripts", "dev-ca.sh"), d, "mail"], check=True,
                   capture_output=True)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(os.path.join(d, "mail.pem"), os.path.join(d, "mail.key"))
    port = free_port()
    c = Controller(SecureMailHandler(), hostname="127.0.0.1", port=port, tls_context=ctx,
                   require_starttls=True, authenticator=authenticate, auth_require_tls=True)
    c.start()
    return c, port, os.path.join(d, "ca.pem")


def config(http_port, smtp_port, tls_port, ca_file):
    route = "    - {{match: {{event: approval.requested{extra}}}, receiver: {r}, continue: true}}\n"
    return (
        "policy_mode: review\n"
        "model:\n  provider: scripted\n  script:\n"
        "    - {tool: test.record, args: {action: restart checkout}}\n"
        "notify:\n"
        "  link_base: http://sreh.example:8080\n"
        "  max_attempts: 6\n  min_backoff_ms: 100\n  max_backoff_ms: 1000\n  poll_ms: 200\n"
        "  receivers:\n"
        f"    - {{name: hook, webhook: {{url: 'http://127.0.0.1:{http_port}/hook', "
        "secret: '${HOOK_SECRET}'}}\n"
        f"    - {{name: pager, pagerduty: {{url: 'http://127.0.0.1:{http_port}/v2/enqueue', "
        "routing_key: '${PD_KEY}'}}\n"
        f"    - {{name: mail, email: {{smtp: '127.0.0.1:{smtp_port}', starttls: 'off', "
        "from: 'sreh <sreh@example>', to: [oncall@example]}}\n"
        f"    - {{name: securemail, email: {{smtp: '127.0.0.1:{tls_port}', ca_file: '{ca_file}', "
        "username: sreh, password: '${SMTP_PASSWORD}', from: sreh@example, to: [sec@example]}}\n"
        f"    - {{name: plainmail, email: {{smtp: '127.0.0.1:{smtp_port}', "
        "from: sreh@example, to: [plain@example]}}\n"
        f"    - {{name: down, webhook: {{url: 'http://127.0.0.1:{DOWN_PORT}/x', timeout_ms: 500}}}}\n"
        f"    - {{name: late, webhook: {{url: 'http://127.0.0.1:{LATE_PORT}/late'}}}}\n"
        "  routes:\n" +
        route.format(extra="", r="hook") + route.format(extra="", r="pager") +
        route.format(extra="", r="mail") +
        route.format(extra=", lane: dead", r="down") + route.format(extra=", lane: late", r="late") +
        route.format(extra=", lane: tls", r="securemail") +
        route.format(extra=", lane: plain", r="plainmail"))


def tok(name):
    return TOKENS[name][1]


def submit(goal, labels=None):
    body = {"goal": goal, "labels": labels or {}}
    status, _, doc = N.json("POST", "/v1/goals", body, token=tok("otto"))
    assert status == 201, (status, doc)
    return doc["run"]["id"]


def approval_of(rid):
    def pending():
        doc = N.json("GET", f"/v1/approvals?state=pending&run={rid}", token=tok("vera"))[2]
        return doc["approvals"][0] if doc["approvals"] else None
    return wait_until(pending, 20, f"the approval of {rid}")


def notifications(state=None):
    path = "/v1/notifications?limit=500" + (f"&state={state}" if state else "")
    status, _, doc = N.json("GET", path, token=tok("vera"))
    assert status == 200, (status, doc)
    return doc["notifications"]


def of_subject(rid, receiver):
    return [n for n in notifications() if n["subject"] == rid and n["receiver"] == receiver]


def hook_bodies(path, rid):
    out = []
    for headers, body in HOOKS.deliveries(path):
        doc = json.loads(body)
        subject = doc.get("notice", {}).get("subject") or doc.get("payload", {}).get("component")
        if subject == rid:
            out.append((headers, doc))
    return out


def test_an_approval_reaches_every_receiver_once():
    rid = submit("checkout is failing")
    a = approval_of(rid)
    wait_until(lambda: hook_bodies("/hook", rid) and hook_bodies("/v2/enqueue", rid) and
               any(rid.encode() in m[2] for m in MAIL), 20, "the three receivers")
    # A later approval passes through the same notifier: once it has arrived, the first one
    # would have come again by now if it were going to.
    rid2 = submit("second goal")
    wait_until(lambda: hook_bodies("/hook", rid2), 20, "the second approval's webhook")
    hooks = hook_bodies("/hook", rid)
    assert len(hooks) == 1, hooks
    headers, doc = hooks[0]
    raw = [b for p, h, b in HOOKS.got if p == "/hook" and json.loads(b)["notice"]["subject"] == rid]
    want = "sha256=" + hmac.new(SECRET.encode(), raw[0], hashlib.sha256).hexdigest()
    assert headers["X-Sreh-Signature"] == want, (headers, want)
    assert headers["X-Sreh-Delivery"] == doc["delivery"], headers
    notice = doc["notice"]
    assert notice["event"] == "approval.requested" and notice["approval"] == a["id"], notice
    assert "test.record" in notice["what"] and notice["risk"] != "", notice
    assert "not otto" in notice["who"], notice  # the requester may not decide
    assert notice["link"] == f"http://sreh.example:8080/v1/runs/{rid}", notice
    pd = hook_bodies("/v2/enqueue", rid)
    assert len(pd) == 1, pd
    event = pd[0][1]
    assert event["routing_key"] == "pd-key-from-env" and event["event_action"] == "trigger", event
    assert event["dedup_key"] == f"sreh/{a['id']}" and event["payload"]["summary"], event
    mails = [m for m in MAIL if rid.encode() in m[2]]
    assert len(mails) == 1, mails
    assert mails[0][0] == "sreh@example" and mails[0][1] == ["oncall@example"], mails[0]
    assert b"Subject: [sreh] Approval needed: test.record" in mails[0][2], mails[0][2][:400]
    for r in ("hook", "pager", "mail"):
        ns = of_subject(rid, r)
        assert len(ns) == 1 and ns[0]["state"] == "delivered" and ns[0]["attempts"] == 1, ns
    # The secrets are in no log line and no API answer.
    assert SECRET not in N.log_text() and "pd-key-from-env" not in N.log_text()
    assert SECRET not in json.dumps(notifications())


def test_a_receiver_that_never_answers_is_dead_lettered_and_retried():
    rid = submit("dead letter", {"lane": "dead"})
    approval_of(rid)
    dead = wait_until(lambda: [n for n in notifications("failed") if n["subject"] == rid],
                      30, "the dead letter")
    assert dead[0]["receiver"] == "down" and dead[0]["attempts"] == 6, dead
    assert f"127.0.0.1:{DOWN_PORT}" in dead[0]["last_error"], dead
    nid = dead[0]["id"]
    server = ["--server", f"127.0.0.1:{N.port}"]
    code, out, err = sreh_cli(["notifications", "--state", "failed"] + server, token=tok("vera"))
    assert code == 0 and nid in out and "failed" in out and str(DOWN_PORT) in out, (out, err)
    assert N.request("POST", f"/v1/notifications/{nid}/retry", token=tok("vera"))[0] == 403
    status, _, doc = N.json("POST", f"/v1/notifications/{nid}/retry", token=tok("otto"))
    assert status == 202 and doc["notification"]["state"] == "pending", (status, doc)
    assert doc["notification"]["attempts"] == 0, doc
    wait_until(lambda: N.json("GET", f"/v1/notifications/{nid}", token=tok("vera"))[2]
               ["notification"]["state"] == "failed", 30, "the retried dead letter")
    delivered = of_subject(rid, "hook")[0]["id"]
    status, _, doc = N.json("POST", f"/v1/notifications/{delivered}/retry", token=tok("otto"))
    assert status == 409 and "delivered" in doc["detail"], (status, doc)
    for bad in ("/v1/notifications?state=lost", "/v1/notifications/nope",
                "/v1/notifications?limit=0"):
        assert N.request("GET", bad, token=tok("vera"))[0] == 400, bad
    assert N.request("GET", "/v1/notifications/evt_01ARZ3NDEKTSV4RRFFQ69G5FAV.hook",
                     token=tok("vera"))[0] == 404


def test_email_over_starttls_with_auth_and_a_server_without_it_refused():
    rid = submit("mail over tls", {"lane": "tls"})
    wait_until(lambda: any(rid.encode() in m[1] for m in SECURE_MAIL), 20, "the STARTTLS mail")
    mails = [m for m in SECURE_MAIL if rid.encode() in m[1]]
    assert len(mails) == 1 and mails[0][0] is True and LOGINS == [b"sreh"], (mails, LOGINS)
    assert "mail-pass" not in N.log_text()
    rid2 = submit("mail without tls", {"lane": "plain"})
    failed = wait_until(lambda: [n for n in notifications("failed") if n["subject"] == rid2], 30,
                        "the plain server refused")
    assert failed[0]["receiver"] == "plainmail" and "STARTTLS" in failed[0]["last_error"], failed
    assert not any(rid2.encode() in m[2] and b"plain@example" in m[2] for m in MAIL), MAIL


def late_attempts(rid):
    ns = of_subject(rid, "late")
    return ns[0] if ns and ns[0]["attempts"] >= 1 else None


def test_a_receiver_back_after_a_while_gets_its_notice_once():
    rid = submit("late receiver", {"lane": "late"})
    approval_of(rid)
    first = wait_until(lambda: late_attempts(rid), 20, "a failed attempt to the late receiver")
    assert first["state"] == "pending" and "connect" in first["last_error"], first
    late = Receiver(LATE_PORT)
    try:
        wait_until(lambda: late.deliveries("/late"), 20, "the late receiver's notice")
        n = wait_until(lambda: [x for x in of_subject(rid, "late") if x["state"] == "delivered"],
                       20, "the late delivery recorded")
        assert n[0]["attempts"] >= 2, n
        assert len(late.deliveries("/late")) == 1, late.got
    finally:
        late.shutdown()
        late.server_close()


def test_kill9_with_a_pending_delivery_delivers_it_after_the_restart():
    rid = submit("kill while pending", {"lane": "late"})
    approval_of(rid)
    wait_until(lambda: late_attempts(rid), 20, "a failed attempt before the kill")
    wait_until(lambda: hook_bodies("/hook", rid), 20, "the webhook before the kill")
    N.kill9()
    late = Receiver(LATE_PORT)
    try:
        N.start()
        wait_until(lambda: late.deliveries("/late"), 30, "the pending notice after the restart")
        rid2 = submit("after the restart")
        wait_until(lambda: hook_bodies("/hook", rid2), 20, "a newer webhook after the restart")
        assert len(late.deliveries("/late")) == 1, late.got
        assert len(hook_bodies("/hook", rid)) == 1, "delivered before the kill: not sent again"
    finally:
        late.shutdown()
        late.server_close()


def crash_node(d, point):
    """A node of its own (fresh store) that kills itself at the failpoint `point`."""
    hooks = Receiver(free_port())
    node = Node(d, config(hooks.server_address[1], free_port(), free_port(), "/nonexistent"),
                auth=auth_block(TOKENS), token=tok("root"),
                env_extra={"HOOK_SECRET": SECRET, "PD_KEY": "k", "SMTP_PASSWORD": "p"})
    node.start(env_extra={"SREH_FAILPOINT": f"{point}:1"})
    return node, hooks


def crash_submit(node, goal, may_die=False):
    """Submits `goal` with an Idempotency-Key of its own; the run's id. With `may_die`, the node
    may kill itself at its failpoint before it answers (the notice is made on another thread
    once the run is committed): the same key, sent after the restart, names the run."""
    key = {"Idempotency-Key": "crash-" + hashlib.sha256(goal.encode()).hexdigest()[:16]}
    try:
        status, _, doc = node.json("POST", "/v1/goals", {"goal": goal}, key, token=tok("otto"))
    except (OSError, http.client.HTTPException):
        if not may_die:
            raise
        return lambda: crash_submit(node, goal)
    assert status in (200, 201), (status, doc)
    run_id = doc["run"]["id"]
    return (lambda: run_id) if may_die else run_id


def test_kill9_before_the_deliveries_are_stored_loses_nothing():
    d = os.path.join(WORK, "crash-enqueue")
    os.makedirs(d)
    node, hooks = crash_node(d, "notify_enqueue")
    rid = crash_submit(node, "crash before the outbox", may_die=True)
    assert node.wait_exit(30) == -9, "the node did not stop at notify_enqueue"
    assert not hooks.deliveries("/hook")
    node.start()  # no failpoint: the offset did not move, so the notice is made again
    rid = rid()
    wait_until(lambda: [h for h, b in hooks.deliveries("/hook")
                        if json.loads(b)["notice"]["subject"] == rid], 30, "the notice")
    rid2 = crash_submit(node, "after the restart")
    wait_until(lambda: [h for h, b in hooks.deliveries("/hook")
                        if json.loads(b)["notice"]["subject"] == rid2], 30, "a later notice")
    subjects = [json.loads(b)["notice"]["subject"] for h, b in hooks.deliveries("/hook")]
    assert subjects.count(rid) == 1, subjects
    node.stop()
    hooks.shutdown()


def test_kill9_after_a_send_repeats_it_with_the_same_delivery_id():
    d = os.path.join(WORK, "crash-sent")
    os.makedirs(d)
    node, hooks = crash_node(d, "notify_sent")
    rid = crash_submit(node, "crash after the send", may_die=True)
    assert node.wait_exit(30) == -9, "the node did not stop at notify_sent"
    node.start()
    rid = rid()
    got = wait_until(lambda: len(hooks.deliveries("/hook")) >= 2 and hooks.deliveries("/hook"),
                     30, "the repeat after the restart")
    ids = {h["X-Sreh-Delivery"] for h, b in got if json.loads(b)["notice"]["subject"] == rid}
    assert len(ids) == 1, ids  # a receiver that keeps the id drops the repeat
    status, _, doc = node.json("GET", f"/v1/notifications/{ids.pop()}", token=tok("vera"))
    assert status == 200 and doc["notification"]["state"] == "delivered", doc
    node.stop()
    hooks.shutdown()


if __name__ == "__main__":
    code = 0
    with TempDir() as d:
        WORK = d
        HOOKS = Receiver(free_port())
        smtp_port = free_port()
        smtp = Controller(MailHandler(), hostname="127.0.0.1", port=smtp_port)
        smtp.start()
        secure, tls_port, ca_file = starttls_server(os.path.join(d, "ca"))
        N = Node(d, config(HOOKS.server_address[1], smtp_port, tls_port, ca_file),
                 auth=auth_block(TOKENS), token=tok("root"),
                 env_extra={"HOOK_SECRET": SECRET, "PD_KEY": "pd-key-from-env",
                            "SMTP_PASSWORD": "mail-pass"})
        N.start()
        try:
            run_tests([test_an_approval_reaches_every_receiver_once,
                       test_a_receiver_that_never_answers_is_dead_lettered_and_retried,
                       test_email_over_starttls_with_auth_and_a_server_without_it_refused,
                       test_a_receiver_back_after_a_while_gets_its_notice_once,
                       test_kill9_with_a_pending_delivery_delivers_it_after_the_restart,
                       test_kill9_before_the_deliveries_are_stored_loses_nothing,
                       test_kill9_after_a_send_repeats_it_with_the_same_delivery_id])
        except SystemExit as e:
            code = e.code
        N.stop()
        smtp.stop()
        secure.stop()
    sys.exit(code)
