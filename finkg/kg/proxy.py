"""The HTTP front of `finkg serve`: every request passes here before the Oxigraph server.

It refuses, with a reason in the body, what the policy does not admit
(`serve_policy.Policy.admit`: the token, read-only, the users' graphs, finkg's own graphs,
SERVICE and LOAD), and:
- 415: a query or update body it cannot read (an unknown type, a compressed body);
- 503: a query that ran past the time limit (Oxigraph's `--timeout-s` cancels it, but
  has already answered 200 and writes its error into the results; a result that ends so
  within the first MiB becomes a 503, a longer one is cut off without its last chunk, so
  that no client reads it as whole).
A query that names no dataset reads every graph but the users' when they are not served
(`Policy.scoped`, with the store's graphs asked of the Oxigraph server).
Everything else is passed through, streamed, with the Oxigraph server's status and headers,
but for the SPARQL page at `/`: finkg serves its own (`sparql_page.html`), the YASGUI
editor the Oxigraph server ships, set up to call no other host.
"""

from __future__ import annotations

import http.client
import queue
import socket
import threading
import urllib.parse
from collections.abc import Callable
from functools import cache
from http.server import BaseHTTPRequestHandler
from importlib import resources

from finkg.kg.serve_policy import Policy, Refused, Request

_FORM = "application/x-www-form-urlencoded"
_QUERY = "application/sparql-query"
_UPDATE = "application/sparql-update"
_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
    "expect",
}
_CANCELLED = b"The SPARQL operation has been cancelled"
_BUFFER = 1 << 20
_CHUNK = 1 << 16


@cache
def _sparql_page() -> bytes:
    return resources.files("finkg.kg").joinpath("sparql_page.html").read_bytes()


def handler(host: str, port: int, policy: Policy) -> type[BaseHTTPRequestHandler]:
    """A request handler class that passes requests to the Oxigraph server at host:port."""
    attributes = {
        "upstream": (host, port),
        "policy": policy,
        "pool": queue.LifoQueue(),
        "known": _KnownGraphs(),
    }
    return type("FinkgServeHandler", (_Handler,), attributes)


class _KnownGraphs:
    """The named graphs of the served store, asked of the Oxigraph server once and again
    after every write that passes the front (the server locks the store: nothing else
    writes it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.graphs: list[str] | None = None

    def stale(self) -> None:
        with self.lock:
            self.graphs = None

    def get(self, ask: Callable[[], list[str]]) -> list[str]:
        with self.lock:
            if self.graphs is None:
                self.graphs = ask()
            return self.graphs


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream: tuple[str, int]
    policy: Policy
    pool: queue.LifoQueue  # idle kept-alive connections to the Oxigraph server
    known: _KnownGraphs

    def do_GET(self) -> None:
        self._handle()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def setup(self) -> None:
        super().setup()
        # headers and body go out as separate writes: without this, Nagle's algorithm and
        # the client's delayed ACK hold the body back (about 40 ms a request)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:  # the server logs quietly
        pass

    def _handle(self) -> None:
        try:
            body = self._body()
            request = self._request(body)
            if request.static and request.path == "/":
                self._page()
                return
            self.policy.admit(request)
            if self.policy.needs_scope(request):
                body = self._scope(request, body)
        except Refused as e:
            self._reply(e.status, e.reason)
            return
        self._forward(body)
        if request.writes:
            self.known.stale()

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise Refused(400, "Content-Length is not a number") from None
        return self.rfile.read(length) if length > 0 else b""

    def _request(self, body: bytes) -> Request:
        """The parts of this request the policy reads; 415 for a body it cannot read."""
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        params = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        texts = {k: list(v) for k, v in params.items() if k in ("query", "update")}
        encoded = self.headers.get("Content-Encoding", "identity").lower() != "identity"
        if body and ctype in (_FORM, _QUERY, _UPDATE) and encoded:
            raise Refused(415, "finkg serve does not read compressed queries or updates")
        text = body.decode("utf-8", errors="replace")
        form: dict[str, list[str]] = {}
        if ctype == _FORM:
            form = urllib.parse.parse_qs(text, keep_blank_values=True)
            for k, v in form.items():
                if k in ("query", "update"):
                    texts.setdefault(k, []).extend(v)
        elif ctype in (_QUERY, _UPDATE):
            texts.setdefault("update" if ctype == _UPDATE else "query", []).append(text)
        elif self.command == "POST" and path in ("/query", "/update"):
            raise Refused(415, f"a query or update is sent as {_FORM}, {_QUERY} or {_UPDATE}")
        authorization = self.headers.get("Authorization", "")
        return Request(self.command, path, params, form, texts, authorization)

    def _scope(self, request: Request, body: bytes) -> bytes:
        """The query kept to the graphs other than the users' (when the store has any):
        its dataset parameters set in the form body or the URL, where it came."""
        graphs = self.known.get(self._named_graphs)
        if not any(self.policy.is_user_graph(g) for g in graphs):
            return body
        if request.form:
            scoped = self.policy.scoped(request.form, graphs)
            return urllib.parse.urlencode(scoped, doseq=True).encode()
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.urlencode(self.policy.scoped(request.params, graphs), doseq=True)
        self.path = urllib.parse.urlunsplit(url._replace(query=query))
        return body

    def _named_graphs(self) -> list[str]:
        """The served store's named graphs, asked of the Oxigraph server."""
        query = urllib.parse.urlencode({"query": "SELECT DISTINCT ?g WHERE { GRAPH ?g { } }"})
        conn = self._connection(fresh=True)
        try:
            conn.request("GET", "/query?" + query, headers={"Accept": "text/tab-separated-values"})
            reply = conn.getresponse()
            lines = reply.read().decode("utf-8").splitlines()[1:]
        except (OSError, http.client.HTTPException):
            raise Refused(502, "the Oxigraph server behind finkg serve is not answering") from None
        finally:
            conn.close()
        return [line.strip().strip("<>") for line in lines if line.strip()]

    def _page(self) -> None:
        data = _sparql_page()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _reply(self, status: int, text: str) -> None:
        data = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _connection(self, *, fresh: bool = False) -> http.client.HTTPConnection:
        if not fresh:
            try:
                return self.pool.get_nowait()
            except queue.Empty:
                pass
        limit = self.policy.timeout_s + 60 if self.policy.timeout_s else None
        return http.client.HTTPConnection(*self.upstream, timeout=limit)

    def _forward(self, body: bytes) -> None:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(len(body))
        for attempt in (0, 1):  # a kept-alive connection the server closed: once more
            conn = self._connection(fresh=attempt == 1)
            try:
                conn.request(self.command, self.path, body=body or None, headers=headers)
                response = conn.getresponse()
                break
            except (ConnectionError, http.client.HTTPException, OSError):
                conn.close()
                if attempt == 1:
                    self._reply(502, "the Oxigraph server behind finkg serve is not answering")
                    return
        try:
            whole = self._relay(response)
        except (ConnectionError, OSError):  # the client went away: drop the upstream too
            whole = False
            self.close_connection = True
        if whole and not response.will_close:
            self.pool.put(conn)
        else:
            conn.close()

    def _relay(self, response: http.client.HTTPResponse) -> bool:
        """Send the response on; whether it was read whole."""
        parts, size = [], 0
        while size <= _BUFFER:
            part = response.read(_CHUNK)
            if not part:
                break
            parts.append(part)
            size += len(part)
        head, done = b"".join(parts), size <= _BUFFER
        if done and response.status == 200 and head.rstrip().endswith(_CANCELLED):
            self._reply(
                503,
                f"the query ran past the time limit of {self.policy.timeout_s:g} s "
                "(finkg serve --timeout, FINKG_QUERY_TIMEOUT)",
            )
            return True
        self.send_response_only(response.status, response.reason)
        for k, v in response.getheaders():
            if k.lower() not in _HOP:
                self.send_header(k, v)
        if done:
            if response.status >= 200 and response.status not in (204, 304):
                self.send_header("Content-Length", str(len(head)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(head)
            return True
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        part, recent = head, b""
        while part:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            recent = (recent + part)[-256:]
            part = response.read(_CHUNK)
        if recent.rstrip().endswith(_CANCELLED):  # cut off: no last chunk, the client sees it
            self.close_connection = True
            return True
        self.wfile.write(b"0\r\n\r\n")
        return True
