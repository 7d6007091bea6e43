"""Shared helpers for the end-to-end tests: start and kill the real `sreh` binary, talk to it
with real HTTP (http.client) and read its SSE streams. Standard library only.

Each test gets a fresh temp dir, binds a free loopback port, and stops every process it started
(a test that dies still leaves nothing running: processes are killed in atexit and finally).
"""

import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SREH = os.environ.get("SREH_BIN", "build/release/app/sreh")
_procs = []

# The admin token every Node is configured with unless a test gives its own auth block; the
# request helpers (Node.request/json, sse_events, raw_exchange, sreh_cli) send it by default.
TOKEN = "e2e-admin-token-0123456789abcdef"
TOKEN_SHA256 = __import__("hashlib").sha256(TOKEN.encode()).hexdigest()
DEFAULT_AUTH = ("auth:\n  mode: tokens\n  tokens:\n"
                f"    - {{name: e2e-admin, role: admin, sha256: {TOKEN_SHA256}}}\n")


def sha256_hex(token):
    return __import__("hashlib").sha256(token.encode()).hexdigest()


def auth_block(tokens, mode="tokens"):
    """An `auth:` config block for {name: (role, token)}; only the hashes go in the file."""
    out = f"auth:\n  mode: {mode}\n"
    if tokens:
        out += "  tokens:\n"
        for name, (role, token) in tokens.items():
            out += f"    - {{name: {name}, role: {role}, sha256: {sha256_hex(token)}}}\n"
    return out


def _with_token(headers, token):
    h = dict(headers or {})
    if token and not any(k.lower() == "authorization" for k in h):
        h["Authorization"] = f"Bearer {token}"
    return h


_given_ports = set()


def free_port():
    """A port free now and not handed out before by this process: the kernel may offer a port
    again once its probe socket closed, and a cluster's topology needs distinct ones."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _given_ports:
            _given_ports.add(port)
            return port


def _kill_all():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()


atexit.register(_kill_all)


class Node:
    """One `sreh serve` process with its own data dir and config."""

    def __init__(self, workdir, config_extra="", env_extra=None, port=None, auth=None,
                 token=TOKEN, testkit=True, config_file=None, tls=None):
        """`auth`: the config's auth block (None: DEFAULT_AUTH, the harness admin token; "" for
        none written, i.e. the node's own default). `token`: what the request helpers send.
        `testkit`: register the test tools (test.echo, test.record, ...; off on a real node).
        `config_file`: serve that file as it is (an example's), with only the listen address
        and data dir given on the command line; the other arguments but `env_extra`, `port`
        and `token` then do nothing. `tls`: an ssl.SSLContext the request helpers connect with
        (the node serves HTTPS)."""
        self.dir = workdir
        self.tls = tls
        self.token = token
        self.port = port or free_port()
        self.data = os.path.join(workdir, "data")
        self.record = os.path.join(workdir, "record.log")
        self.config = config_file or os.path.join(workdir, "sreh.yaml")
        self.serve_args = ([] if config_file is None else
                           ["--listen", f"127.0.0.1:{self.port}", "--data-dir", self.data])
        with open(os.devnull if config_file else self.config, "w") as f:
            f.write(f"listen: 127.0.0.1:{self.port}\n"
                    f"data_dir: {self.data}\n" +
                    (f"tools:\n  testkit: true\n  record_file: {self.record}\n" if testkit else "") +
                    "logging:\n  level: warn\n" +
                    # The kernel tests run autonomous unless a test asks for review.
                    ("" if "policy_mode:" in config_extra else "policy_mode: autonomous\n") +
                    config_extra + (DEFAULT_AUTH if auth is None else auth))
        self.env_extra = env_extra or {}
        self.proc = None
        self.log_path = os.path.join(workdir, "node.log")

    def start(self, env_extra=None, wait=True):
        env = dict(os.environ)
        env.update(self.env_extra)
        env.update(env_extra or {})
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([SREH, "serve", "--config", self.config] + self.serve_args,
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        _procs.append(self.proc)
        if wait:
            self.wait_ready()
        return self

    def start_fails(self):
        """Starts the node expecting it to refuse its config and exit; returns what the harness
        saw ("sreh exited with N:" and the log). Fails when the node starts."""
        try:
            self.start()
        except AssertionError as e:
            return str(e)
        raise AssertionError("sreh started although its config is invalid")

    def wait_ready(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"sreh exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                status, _, _ = self.request("GET", "/readyz", timeout=1)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.02)  # polling for readiness, bounded by the deadline
        raise AssertionError(f"sreh not ready after {timeout}s:\n{self.log_text()}")

    def wait_exit(self, timeout=30):
        return self.proc.wait(timeout=timeout)

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.check_log()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("sreh did not stop on SIGTERM within 20 s")
        self.check_log()

    def check_log(self):
        """Fails when the node reported a blocking call on a CAF scheduler thread (release
        builds log it; debug builds abort)."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return
        i = text.find("blocking call on a CAF scheduler thread")
        assert i < 0, text[max(0, i - 200):i + 400]

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""

    def request(self, method, path, body=None, headers=None, timeout=10, token=...):
        """`token`: sent as a bearer token (default: the node's; None sends none)."""
        conn = (http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                            context=self.tls)
                if getattr(self, "tls", None) else
                http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout))
        try:
            h = _with_token(headers, self.token if token is ... else token)
            if body is not None and not isinstance(body, (bytes, bytearray)):
                body = json.dumps(body).encode()
                h.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            data = r.read()
            return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data
        finally:
            conn.close()

    def json(self, method, path, body=None, headers=None, token=...):
        status, hdrs, data = self.request(method, path, body, headers, token=token)
        try:
            doc = json.loads(data) if data else None
        except ValueError:
            raise AssertionError(f"{method} {path}: not JSON ({status}): {data[:200]!r}")
        return status, hdrs, doc

    def submit(self, goal, key=None):
        headers = {"Idempotency-Key": key} if key else {}
        status, _, doc = self.json("POST", "/v1/goals", {"goal": goal}, headers)
        assert status in (200, 201), f"submit: {status} {doc}"
        return doc["run"]["id"]

    def run(self, run_id):
        status, _, doc = self.json("GET", f"/v1/runs/{run_id}")
        assert status == 200, f"get run: {status} {doc}"
        return doc

    def steps(self, run_id):
        status, _, doc = self.json("GET", f"/v1/runs/{run_id}/steps")
        assert status == 200, f"get steps: {status} {doc}"
        return doc["steps"]

    def wait_run(self, run_id, states=("succeeded", "failed", "cancelled"), timeout=30):
        """Follows the run's SSE stream until it ends (the server closes it), then reads it."""
        for _ in sse_events(self.port, f"/v1/runs/{run_id}/events", timeout=timeout,
                            token=self.token):
            pass
        r = self.run(run_id)
        assert r["state"] in states, f"run {run_id} ended {r['state']}, wanted {states}"
        return r

    def stats(self):
        status, _, doc = self.json("GET", "/v1/stats")
        assert status == 200
        return doc


def sse_events(port, path, last_event_id=None, timeout=30, stop_after=None, token=TOKEN):
    """Yields (id, event, data) from an SSE stream until the server ends it, `stop_after`
    events were read, or `timeout` seconds pass (then AssertionError)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = _with_token({"Accept": "text/event-stream"}, token)
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    if r.status != 200:
        body = r.read()
        conn.close()
        raise AssertionError(f"SSE {path}: {r.status} {body[:300]!r}")
    deadline = time.time() + timeout
    count = 0
    ev = {"id": None, "event": "message", "data": []}
    try:
        while True:
            if time.time() > deadline:
                raise AssertionError(f"SSE {path}: no end after {timeout}s")
            line = r.fp.readline()
            if not line:
                return
            line = line.decode().rstrip("\n").rstrip("\r")
            if line == "":
                if ev["data"]:
                    yield ev["id"], ev["event"], "\n".join(ev["data"])
                    count += 1
                    if stop_after is not None and count >= stop_after:
                        return
                ev = {"id": None, "event": "message", "data": []}
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "data":
                    ev["data"].append(value)
                elif field in ("id", "event"):
                    ev[field] = value
    finally:
        conn.close()


def wait_until(pred, timeout, what):
    """Polls `pred` until it returns something truthy (returned), or fails after `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)  # polling state over HTTP, bounded by the deadline
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class TempDir:
    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="sreh-e2e-")
        return self.path

    def __exit__(self, *exc):
        _kill_all()
        if exc[0] is None:
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            print(f"(kept {self.path} for inspection)", file=sys.stderr)


def run_tests(tests):
    """A tiny runner: runs each test function, prints a line per test and the closing
    'N passed, N failed' line; exit code 1 when any failed."""
    passed = failed = 0
    for t in tests:
        started = time.time()
        try:
            t()
            passed += 1
            print(f"ok   {t.__name__} ({time.time() - started:.1f}s)", flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            failed += 1
            where = [f"{os.path.basename(f.filename)}:{f.lineno}"
                     for f in __import__("traceback").extract_tb(e.__traceback__)
                     if f.filename.endswith(".py") and "/tests/e2e/" in f.filename]
            print(f"FAIL {t.__name__}: {type(e).__name__}: {e} (at {' < '.join(reversed(where))})",
                  flush=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


# -- helpers added for the API / bad-input / SSE-resume tests (additions only) -------------------

def with_auth_header(data, token=TOKEN):
    """Adds `Authorization: Bearer <token>` after the request line of raw request bytes that
    have a request line and no Authorization header (anything else is returned unchanged)."""
    if not token or b"\r\n" not in data:
        return data
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    if b"\r\nauthorization:" in head:
        return data
    line, rest = data.split(b"\r\n", 1)
    return line + b"\r\nAuthorization: Bearer " + token.encode() + b"\r\n" + rest


def raw_exchange(port, data, timeout=10, shut_write=False, token=TOKEN):
    """Sends raw bytes on a fresh connection and returns every byte the server sends back until
    it closes or goes quiet for `timeout` seconds. Sending errors (the server answering early and
    closing, e.g. 413/431) are tolerated: whatever response arrived is still read. The bearer
    `token` is added to the request head (see with_auth_header)."""
    data = with_auth_header(data, token)
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        try:
            s.sendall(data)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        s.close()
    return out


def parse_http_response(raw):
    """(status, {lower-case header: value}, body bytes) of the first response in `raw`."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines or not lines[0].startswith("HTTP/"):
        raise AssertionError(f"not an HTTP response: {raw[:200]!r}")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if "content-length" in headers:
        body = body[:int(headers["content-length"])]
    return status, headers, body


def sreh_cli(args, env_extra=None, timeout=60, token=TOKEN, cwd=None):
    """Runs the sreh binary with `args` (SREH_TOKEN = `token` unless `env_extra` sets it; None
    leaves it unset); returns (exit code, stdout, stderr) as text."""
    env = dict(os.environ)
    env.pop("SREH_TOKEN", None)
    if token:
        env["SREH_TOKEN"] = token
    env.update(env_extra or {})
    p = subprocess.run([SREH] + list(args), capture_output=True, text=True, timeout=timeout,
                       env=env, cwd=cwd)
    return p.returncode, p.stdout, p.stderr
