"""Reads a JetStream stream back over the plain NATS protocol (standard library only): the
stream's state, and every message with its headers. For end-to-end checks of the relay."""

import base64
import json
import socket
from urllib.parse import urlparse

INBOX = "_INBOX.sreh_e2e"


class NatsConnection:
    def __init__(self, url, timeout=10, tls=None):
        """`tls`: an ssl.SSLContext for a server that requires TLS (upgraded after its INFO)."""
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 4222),
                                             timeout=timeout)
        self.buf = b""
        info = self._line()
        if not info.startswith(b"INFO"):
            raise AssertionError(f"nats: expected INFO, got {info[:100]!r}")
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock, server_hostname=u.hostname)
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,'
                          b'"no_responders":true}\r\nPING\r\n')
        while self._line() != b"PONG":
            pass
        self.sock.sendall(f"SUB {INBOX} 1\r\n".encode())

    def close(self):
        self.sock.close()

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise AssertionError("nats: connection closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        """The payload of the next message on the inbox (answers PING on the way)."""
        while True:
            line = self._line()
            if line == b"PING":
                self.sock.sendall(b"PONG\r\n")
                continue
            parts = line.split()
            if not parts:
                continue
            if parts[0] == b"MSG":
                return self._exact(int(parts[-1]))
            if parts[0] == b"HMSG":
                total, hdr = int(parts[-1]), int(parts[-2])
                return self._exact(total)[hdr:]
            if parts[0] == b"-ERR":
                raise AssertionError(f"nats: {line!r}")

    def request_many(self, subject, payloads):
        """Pipelines requests on `subject` and returns the replies in order."""
        out = []
        for i in range(0, len(payloads), 256):
            chunk = payloads[i:i + 256]
            self.sock.sendall(b"".join(
                f"PUB {subject} {INBOX} {len(p)}\r\n".encode() + p + b"\r\n" for p in chunk))
            out.extend(json.loads(self._reply()) for _ in chunk)
        return out


def _headers(raw):
    """{name: value} of a NATS/1.0 header block."""
    out = {}
    for line in raw.decode(errors="replace").split("\r\n")[1:]:
        k, sep, v = line.partition(":")
        if sep:
            out[k.strip()] = v.strip()
    return out


def stream_state(url, stream, tls=None):
    c = NatsConnection(url, tls=tls)
    try:
        [info] = c.request_many(f"$JS.API.STREAM.INFO.{stream}", [b"{}"])
    finally:
        c.close()
    if "error" in info:
        raise AssertionError(f"stream info {stream}: {info['error']}")
    return info["state"]


def stream_messages(url, stream, tls=None):
    """Every message of the stream: [{stream_seq, subject, headers, data}] in stream order."""
    state = stream_state(url, stream, tls)
    first, last = state.get("first_seq", 0), state.get("last_seq", 0)
    if state.get("messages", 0) == 0:
        return []
    c = NatsConnection(url, tls=tls)
    try:
        replies = c.request_many(f"$JS.API.STREAM.MSG.GET.{stream}",
                                 [json.dumps({"seq": s}).encode() for s in range(first, last + 1)])
    finally:
        c.close()
    out = []
    for r in replies:
        if "error" in r:
            continue  # a deleted message
        m = r["message"]
        out.append({
            "stream_seq": m["seq"],
            "subject": m["subject"],
            "headers": _headers(base64.b64decode(m["hdrs"])) if m.get("hdrs") else {},
            "data": base64.b64decode(m.get("data", "")),
        })
    return out
