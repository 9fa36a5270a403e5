"""`finkg mcp --http HOST:PORT`: the MCP server on the Streamable HTTP transport.

The SDK's Starlette app (at `/mcp`; DNS-rebinding protection on for a loopback host) runs
under uvicorn, behind a gate that asks every request for the bearer token when the server
has one (`--token-file`, `FINKG_TOKEN`): 401 otherwise, as `finkg serve` answers. A
server bound beyond loopback must have one: it would show the store to anyone who reaches
it otherwise.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from finkg.errors import InputError
from finkg.kg.serve import is_loopback, split_address

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
PATH = "/mcp"


class BearerGate:
    """An ASGI app that passes on HTTP requests carrying `Authorization: Bearer TOKEN`."""

    def __init__(self, app: App, token: str) -> None:
        self.app, self._token = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._admits(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "error": "this MCP server needs its bearer token: send `Authorization: "
                "Bearer <token>` (the token finkg mcp was started with)"
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="finkg"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _admits(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                kind, _, given = value.partition(b" ")
                return kind.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False


def serve_http(app: App, *, bind: str, token: str | None, on_ready: Callable[[str], None]) -> None:
    """Serve `app` (the SDK's Streamable HTTP app) on `bind` until interrupted."""
    import uvicorn

    host, port, _family = split_address(bind, field="--http")
    if token is None and not is_loopback(host):
        raise InputError(
            "an MCP server beyond loopback needs a bearer token",
            field="--http",
            value=bind,
            hint="give --token-file FILE (or set FINKG_TOKEN), or bind 127.0.0.1",
        )
    gated: App = BearerGate(app, token) if token else app
    server = uvicorn.Server(
        uvicorn.Config(gated, host=host, port=port, log_level="warning", lifespan="on")
    )

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            while not server.started and not server.should_exit:
                await anyio.sleep(0.05)
            if server.started:
                shown = f"[{host}]" if ":" in host else host
                on_ready(f"http://{shown}:{port}{PATH}")

    anyio.run(run)


__all__ = ["PATH", "BearerGate", "serve_http"]
