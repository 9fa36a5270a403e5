"""An OpenAI-compatible stand-in server on loopback, for tests and the throughput benchmark.

It answers after a fixed `latency_s`, serves at most `limit` requests at once (the rest wait
their turn, as on a server whose batch is full), and can be told to fail: each entry of
`failures` is used by one request in turn: None (answer), an HTTP status (429 with
`Retry-After: 0`, 503, ...), "hang" (answer only after `hang_s`, past a client's time-out)
or "drop" (close the connection without an answer). `features` says what it offers: "echo"
(prompt log-probabilities on `/v1/completions`), "top_logprobs" (on `/v1/chat/completions`)
and "json_schema" (that `response_format` type; without it such a request is answered as
llama-cpp-python's server answers it: 500 with pydantic's validation error on the body).

Replies are functions of the request alone: `reply(messages)` for chat completions (by
default a fixed JSON object), and each token's log-probability a hash of the text before it
and the token, over tokens cut by a regular expression (special tokens such as `<|im_end|>`
whole). Chat messages are read as ChatML (`chatml`), so the first reply token's
`top_logprobs` equal what `echo` gives the same token after `chatml(messages)`: a client
rendering prompts with `chatml` sees one consistent model. It is no model: it is what
finkg's client side is measured and tested against.

    python -m finkg.reader.transport.stub --port 8099 --latency 0.2 --limit 64
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = re.compile(r"<\|[^|>]+\|>|\w+|\s+|[^\w\s]")
FEATURES = frozenset({"echo", "top_logprobs", "json_schema"})
FIRST_TOKENS = ("up", "neutral", "down", "yes", "no", "none")


def token_logprob(before: str, token: str) -> float:
    """The stub's log-probability of `token` after the text `before` (below 0)."""
    digest = hashlib.sha256(f"{before}\x00{token}".encode()).digest()
    return -(0.05 + digest[0] / 40.0)


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def chatml(messages: Sequence[dict[str, str]]) -> str:
    """Messages as ChatML with the assistant's turn opened (how the stub reads a chat)."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


# what llama-cpp-python 0.3's server says, with status 500, to a `json_schema` response_format
_REFUSED_SCHEMA = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


def _default_reply(messages: Sequence[dict[str, str]]) -> str:
    return '{"ok": true}'


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many clients connect at once; the default 5 drops SYNs

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that timed out and left: the stub does not care


class StubServer:
    """The server (module docstring); a context manager that starts and stops it."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        limit: int = 64,
        reply: Callable[[Sequence[dict[str, str]]], str] = _default_reply,
        failures: Iterable[int | str | None] = (),
        hang_s: float = 2.0,
        features: Iterable[str] = FEATURES,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency_s = latency_s
        self.reply = reply
        self.hang_s = hang_s
        self.features = frozenset(features)
        self.failures: deque[int | str | None] = deque(failures)
        self._slots = threading.Semaphore(limit)
        self._lock = threading.Lock()
        self.served = 0  # requests answered
        self.seen: list[str] = []  # every request's path and outcome, in arrival order
        self.in_flight = 0
        self.peak = 0  # the most requests being served at once
        self._httpd = _Server((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        if not isinstance(host, str):  # bytes only for an address given as bytes
            host = bytes(host).decode()
        return f"http://{host}:{port}"

    def start(self) -> StubServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail_next(self, *failures: int | str | None) -> None:
        with self._lock:
            self.failures.extend(failures)

    # -- answering -------------------------------------------------------------------------

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.endswith("/v1/chat/completions"):
            return self._chat(body)
        if path.endswith("/v1/completions"):
            return self._completion(body)
        return 404, {"error": {"message": f"no route {path}"}}

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages") or []
        style = (body.get("response_format") or {}).get("type")
        if style == "json_schema" and "json_schema" not in self.features:
            return 500, {"error": {"message": _REFUSED_SCHEMA, "type": "internal_server_error"}}
        prompt = chatml(messages)
        text = self.reply(messages)
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}}
        if body.get("logprobs"):
            if "top_logprobs" not in self.features:
                return 400, {"error": {"message": "logprobs is not supported"}}
            scored = sorted(
                ((t, token_logprob(prompt, t)) for t in FIRST_TOKENS), key=lambda e: -e[1]
            )[: int(body.get("top_logprobs") or 1)]
            top = [{"token": t, "logprob": lp} for t, lp in scored]
            choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
        usage = {"prompt_tokens": len(tokens(prompt)), "completion_tokens": len(tokens(text))}
        return 200, {"object": "chat.completion", "choices": [choice], "usage": usage}

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = body.get("prompt") or ""
        if isinstance(prompt, list):
            prompt = prompt[0] if prompt else ""
        made = ["x"] if int(body.get("max_tokens") or 16) > 0 else []
        choice: dict[str, Any] = {"index": 0, "text": "x", "finish_reason": "length"}
        if body.get("echo"):
            choice["text"] = prompt + "".join(made)
        if body.get("logprobs") is not None:
            if "echo" not in self.features:
                choice["logprobs"] = None  # a server that ignores echo's log-probabilities
            else:
                cut = tokens(prompt) if body.get("echo") else []
                every = cut + made
                before = [""] if body.get("echo") else [prompt]
                for t in every[:-1]:
                    before.append(before[-1] + t)
                values: list[float | None] = [
                    token_logprob(b, t) for b, t in zip(before, every, strict=True)
                ]
                if body.get("echo") and values:
                    values[0] = None
                choice["logprobs"] = {
                    "tokens": every,
                    "token_logprobs": values,
                    "top_logprobs": [None] * len(every),
                    "text_offset": [0] * len(every),
                }
        usage = {"prompt_tokens": len(tokens(prompt)), "completion_tokens": len(made)}
        return 200, {"object": "text_completion", "choices": [choice], "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _send(self, status: int, payload: dict[str, Any], **headers: str) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/v1/models"):
                    self._send(200, {"object": "list", "data": [{"id": "stub"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    failure = stub.failures.popleft() if stub.failures else None
                with stub._slots:
                    with stub._lock:
                        stub.in_flight += 1
                        stub.peak = max(stub.peak, stub.in_flight)
                    try:
                        time.sleep(stub.latency_s)
                        if failure == "hang":
                            time.sleep(stub.hang_s)
                        reply: tuple[int, dict[str, Any], dict[str, str]] | None = None
                        if isinstance(failure, int):
                            extra = {"Retry-After": "0"} if failure == 429 else {}
                            reply = (failure, {"error": {"message": "scripted"}}, extra)
                        elif failure != "drop":
                            status, payload = stub.answer(self.path, body)
                            reply = (status, payload, {})
                    finally:
                        # served once the reply is ready, before the client can read it: a
                        # client's next request never meets this one in `peak`
                        with stub._lock:
                            stub.in_flight -= 1
                    if reply is None:
                        stub._note(self.path, "drop")
                        self.close_connection = True
                        return
                    status, payload, extra = reply
                    stub._note(self.path, str(status))
                    self._send(status, payload, **extra)

        return Handler

    def _note(self, path: str, outcome: str) -> None:
        with self._lock:
            self.seen.append(f"{path} {outcome}")
            self.served += outcome == "200"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="finkg's OpenAI-compatible stub server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--limit", type=int, default=64, help="requests served at once")
    args = parser.parse_args(argv)
    stub = StubServer(latency_s=args.latency, limit=args.limit, host=args.host, port=args.port)
    print(stub.url, flush=True)
    try:
        stub._httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
