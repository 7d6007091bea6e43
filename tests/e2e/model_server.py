"""A local model server for the gateway's e2e tests: it speaks the OpenAI chat-completions
format (POST /v1/chat/completions) and the Anthropic Messages format (POST /v1/messages),
streamed and not, and answers from a script the test gives.

Every request is checked against the official shapes (the CreateChatCompletionRequest schema of
the OpenAI spec, the MessageCreateParams types of the Anthropic SDK): a deviation is recorded in
`server.violations` and answered with 400, and the tests assert that there are none.

A script item is one of:
    {"calls": [(name, arguments_text), ...], "text": "..."}   tool calls (and optional text)
    {"text": "..."}                                            a final answer
    {"status": 429, "headers": {...}, "error": "..."}          an error answer
    {"cut": True}                                              a stream cut after its first bytes
    {"hang": True}                                             holds the request until release()
    {"gate": True, ...}                                        answers once `gate` is set
"""

import http.server
import json
import re
import socketserver
import ssl
import threading

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Violation(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Violation(what)


def check_schema_object(p, where):
    need(isinstance(p, dict), f"{where}: must be a JSON Schema object")
    need(p.get("type", "object") == "object", f"{where}: type must be object")


def check_openai(headers, body, key):
    need(headers.get("authorization") == f"Bearer {key}", "Authorization: Bearer KEY missing")
    need(isinstance(body.get("model"), str) and body["model"], "model: required string")
    msgs = body.get("messages")
    need(isinstance(msgs, list) and msgs, "messages: required non-empty array")
    known_ids = set()
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        role = m.get("role")
        need(role in ("system", "developer", "user", "assistant", "tool"), f"{where}.role: {role!r}")
        allowed = {"system": {"role", "content", "name"}, "developer": {"role", "content", "name"},
                   "user": {"role", "content", "name"},
                   "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio"},
                   "tool": {"role", "content", "tool_call_id"}}[role]
        extra = set(m) - allowed
        need(not extra, f"{where}: unknown fields {sorted(extra)}")
        if role in ("system", "user", "developer", "tool"):
            need(isinstance(m.get("content"), (str, list)), f"{where}.content: required")
        if role == "assistant":
            need("content" in m or "tool_calls" in m, f"{where}: content or tool_calls")
            need(m.get("content") is None or isinstance(m["content"], (str, list)),
                 f"{where}.content: string or null")
            for j, c in enumerate(m.get("tool_calls") or []):
                w = f"{where}.tool_calls[{j}]"
                need(isinstance(c.get("id"), str) and c["id"], f"{w}.id: required")
                need(c.get("type") == "function", f"{w}.type: must be function")
                fn = c.get("function") or {}
                need(isinstance(fn.get("name"), str), f"{w}.function.name: required")
                need(isinstance(fn.get("arguments"), str), f"{w}.function.arguments: a string")
                known_ids.add(c["id"])
        if role == "tool":
            need(m.get("tool_call_id") in known_ids,
                 f"{where}.tool_call_id {m.get('tool_call_id')!r} answers no earlier tool call")
    for i, t in enumerate(body.get("tools") or []):
        need(t.get("type") == "function", f"tools[{i}].type: must be function")
        fn = t.get("function") or {}
        need(isinstance(fn.get("name"), str) and NAME.match(fn["name"]),
             f"tools[{i}].function.name {fn.get('name')!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
        if "parameters" in fn:
            check_schema_object(fn["parameters"], f"tools[{i}].function.parameters")
    for k in ("max_tokens", "max_completion_tokens"):
        if k in body:
            need(isinstance(body[k], int) and body[k] >= 1, f"{k}: a positive integer")
    if "stream" in body:
        need(isinstance(body["stream"], bool), "stream: boolean")
    if "stream_options" in body:
        need(body.get("stream") is True, "stream_options only with stream: true")
    need("tool_choice" not in body or body.get("tools"), "tool_choice without tools")


def check_anthropic(headers, body, key):
    need(headers.get("x-api-key") == key, "x-api-key missing")
    need(headers.get("anthropic-version") == "2023-06-01", "anthropic-version: 2023-06-01")
    need(isinstance(body.get("model"), str) and body["model"], "model: required string")
    need(isinstance(body.get("max_tokens"), int) and body["max_tokens"] >= 1,
         "max_tokens: required, >= 1")
    msgs = body.get("messages")
    need(isinstance(msgs, list) and msgs, "messages: required non-empty array")
    need(msgs[0].get("role") == "user", "messages[0] must be a user turn")
    if "system" in body:
        need(isinstance(body["system"], (str, list)), "system: string or text blocks")
    tool_use_ids = set()
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        need(m.get("role") in ("user", "assistant"), f"{where}.role: {m.get('role')!r}")
        need(set(m) <= {"role", "content"}, f"{where}: unknown fields {sorted(set(m))}")
        if i > 0:
            need(m["role"] != msgs[i - 1]["role"], f"{where}: turns must alternate")
        content = m.get("content")
        need(isinstance(content, (str, list)), f"{where}.content: string or blocks")
        if isinstance(content, str):
            continue
        need(content, f"{where}.content: must not be empty")
        prev_ids = set(tool_use_ids)
        for j, b in enumerate(content):
            w = f"{where}.content[{j}]"
            t = b.get("type")
            if t == "text":
                need(isinstance(b.get("text"), str) and b["text"], f"{w}.text: non-empty string")
            elif t == "tool_use":
                need(m["role"] == "assistant", f"{w}: tool_use only in assistant turns")
                need(isinstance(b.get("id"), str) and b["id"], f"{w}.id: required")
                need(isinstance(b.get("name"), str) and NAME.match(b["name"]), f"{w}.name")
                need(isinstance(b.get("input"), dict), f"{w}.input: an object")
                tool_use_ids.add(b["id"])
            elif t == "tool_result":
                need(m["role"] == "user", f"{w}: tool_result only in user turns")
                need(b.get("tool_use_id") in prev_ids,
                     f"{w}.tool_use_id {b.get('tool_use_id')!r} answers no earlier tool_use")
                need(isinstance(b.get("content", ""), (str, list)), f"{w}.content")
                need(isinstance(b.get("is_error", False), bool), f"{w}.is_error: boolean")
            else:
                raise Violation(f"{w}.type {t!r} is not a block this client sends")
    for i, t in enumerate(body.get("tools") or []):
        need(isinstance(t.get("name"), str) and NAME.match(t["name"]),
             f"tools[{i}].name {t.get('name')!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
        check_schema_object(t.get("input_schema"), f"tools[{i}].input_schema")
    if "stream" in body:
        need(isinstance(body["stream"], bool), "stream: boolean")


# -- answers ---------------------------------------------------------------------------------

def openai_body(item, n, model):
    calls = [{"id": f"call_{n}_{i}", "type": "function",
              "function": {"name": name, "arguments": args}}
             for i, (name, args) in enumerate(item.get("calls", []))]
    msg = {"role": "assistant", "content": item.get("text") if not calls else item.get("text"),
           "refusal": None}
    if calls:
        msg["tool_calls"] = calls
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n,
            "model": model, "choices": [{"index": 0, "message": msg, "logprobs": None,
                                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


def openai_chunks(item, n, model, include_usage):
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk",
            "created": 1700000000 + n, "model": model}

    def chunk(delta, finish=None):
        return dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
    out = [chunk({"role": "assistant", "content": ""})]
    text = item.get("text") or ""
    for i in range(0, len(text), 7):
        out.append(chunk({"content": text[i:i + 7]}))
    for i, (name, args) in enumerate(item.get("calls", [])):
        out.append(chunk({"tool_calls": [{"index": i, "id": f"call_{n}_{i}", "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        for k in range(0, len(args), 5):  # arguments in fragments
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments":
                                                                       args[k:k + 5]}}]}))
    out.append(chunk({}, "tool_calls" if item.get("calls") else "stop"))
    if include_usage:
        out.append(dict(base, choices=[], usage={"prompt_tokens": 100, "completion_tokens": 20,
                                                  "total_tokens": 120}))
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in out) + \
        b"data: [DONE]\n\n"


def anthropic_body(item, n, model):
    content = []
    if item.get("text"):
        content.append({"type": "text", "text": item["text"]})
    for i, (name, args) in enumerate(item.get("calls", [])):
        content.append({"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name,
                        "input": json.loads(args)})
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if item.get("calls") else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 90, "output_tokens": 30}}


def anthropic_events(item, n, model):
    def ev(kind, data):
        return f"event: {kind}\ndata: {json.dumps(dict(data, type=kind))}\n\n".encode()
    out = [ev("message_start", {"message": {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 90,
                                                              "output_tokens": 1}}})]
    idx = 0
    if item.get("text"):
        out.append(ev("content_block_start", {"index": idx, "content_block":
                                              {"type": "text", "text": ""}}))
        t = item["text"]
        for i in range(0, len(t), 7):
            out.append(ev("content_block_delta", {"index": idx, "delta":
                                                  {"type": "text_delta", "text": t[i:i + 7]}}))
        out.append(ev("content_block_stop", {"index": idx}))
        idx += 1
    out.append(ev("ping", {}))
    for i, (name, args) in enumerate(item.get("calls", [])):
        out.append(ev("content_block_start", {"index": idx, "content_block": {
            "type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": {}}}))
        for k in range(0, len(args), 5):
            out.append(ev("content_block_delta", {"index": idx, "delta": {
                "type": "input_json_delta", "partial_json": args[k:k + 5]}}))
        out.append(ev("content_block_stop", {"index": idx}))
        idx += 1
    out.append(ev("message_delta", {"delta": {"stop_reason": "tool_use" if item.get("calls")
                                              else "end_turn", "stop_sequence": None},
                                    "usage": {"output_tokens": 30}}))
    out.append(ev("message_stop", {}))
    return b"".join(out)


def error_body(fmt, status, message):
    if fmt == "anthropic":
        kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error",
                500: "api_error"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = {429: "rate_limit_exceeded", 500: "server_error"}.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class ModelServer:
    """Serves `script` (a list of items, consumed one per request) on 127.0.0.1:port; over
    HTTPS with `tls=(cert_file, key_file)`."""

    def __init__(self, script, key, port=0, tls=None):
        self.script = list(script)
        self.key = key
        self.requests = []     # (path, headers, body) of every request, in order
        self.violations = []   # what was malformed, with the request's path
        self.clients = []      # (host, port) each valid request came from: one per connection
        self.lock = threading.Lock()
        self.hung = threading.Event()     # a request is being held
        self.released = threading.Event()
        self.gated = threading.Event()    # a gated request arrived
        self.gate = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.handle(self, self.path, headers, raw)

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                pass  # a client that refused the certificate, a reset: the test checks results

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            # The handshake happens in the request's thread: a client that refuses the
            # certificate does not hold up the accept loop.
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True,
                                                do_handshake_on_connect=False)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def release(self):
        self.released.set()

    def count(self):
        with self.lock:
            return len(self.requests)

    def send(self, h, status, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def handle(self, h, path, headers, raw):
        fmt = "openai" if path == "/v1/chat/completions" else \
            "anthropic" if path == "/v1/messages" else None
        try:
            need(fmt is not None, f"unexpected path {path}")
            need(headers.get("content-type", "").startswith("application/json"),
                 "Content-Type: application/json")
            body = json.loads(raw)
            (check_openai if fmt == "openai" else check_anthropic)(headers, body, self.key)
        except (Violation, ValueError) as e:
            with self.lock:
                self.violations.append(f"{path}: {e}")
                self.requests.append((path, headers, raw))
            return self.send(h, 400, error_body(fmt or "openai", 400, f"test server: {e}"))
        with self.lock:
            self.requests.append((path, headers, body))
            self.clients.append(h.client_address)
            n = len(self.requests)
            item = self.script.pop(0) if self.script else {"status": 500, "error": "no script"}
        model = body["model"]
        stream = body.get("stream") is True
        if item.get("gate"):  # answer only once the test opens the gate
            self.gated.set()
            self.gate.wait(30)
        if item.get("hang"):
            self.hung.set()
            self.released.wait(60)
            h.close_connection = True
            return
        if "status" in item:
            return self.send(h, item["status"], error_body(fmt, item["status"],
                                                           item.get("error", "error")),
                             headers=item.get("headers"))
        if not stream:
            return self.send(h, 200, (openai_body if fmt == "openai" else anthropic_body)(
                item, n, model))
        data = (openai_chunks(item, n, model,
                              (body.get("stream_options") or {}).get("include_usage"))
                if fmt == "openai" else anthropic_events(item, n, model))
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        if item.get("cut"):
            data = data[:len(data) // 2]
        for i in range(0, len(data), 64):  # split anywhere
            part = data[i:i + 64]
            h.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            h.wfile.flush()
        if item.get("cut"):
            h.close_connection = True
            return
        h.wfile.write(b"0\r\n\r\n")
