"""`finkg serve`: the Oxigraph server (from the PyPI package `oxigraph`) over a store,
behind finkg's front (`proxy.py`).

The Oxigraph server listens on a loopback port of its own, with a query time limit
(`--timeout-s`); the front listens on `bind` and refuses SERVICE and LOAD (unless
`allow_service`), writes to a read-only endpoint, requests without the bearer token (when
one is given), the users' personal graphs (unless `include_users`) and rewrites of finkg's
own graphs, and reports a query cut off by the time limit as such. Read-write on an
address other than loopback needs a token: anyone who reaches it could write otherwise.
SIGTERM, SIGINT and SIGHUP stop both; on Linux the Oxigraph server also
stops if finkg serve is killed outright (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path

from finkg.errors import InputError, MissingStoreError, StoreError
from finkg.kg.graphs import Graphs
from finkg.kg.proxy import handler
from finkg.kg.serve_policy import Policy


def oxigraph_binary() -> str:
    """The `oxigraph` executable installed beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / "oxigraph"
    if beside.exists():
        return str(beside)
    found = shutil.which("oxigraph")
    if found is None:
        raise StoreError("the oxigraph server is not installed; pip install 'oxigraph>=0.5,<0.6'")
    return found


def server_command(
    location: Path, *, bind: str, read_write: bool = False, timeout_s: float = 0
) -> list[str]:
    """The Oxigraph server's command line (`timeout_s` 0: no query time limit)."""
    mode = "serve" if read_write else "serve-read-only"
    command = [oxigraph_binary(), mode, "--location", str(location), "--bind", bind]
    if timeout_s:
        command += ["--timeout-s", str(max(1, round(timeout_s)))]
    return command


def split_address(bind: str, *, field: str = "--bind") -> tuple[str, int, int]:
    """(host, port, address family) of HOST:PORT or [IPV6]:PORT."""
    host, sep, port = bind.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise InputError(
            "not HOST:PORT", field=field, value=bind, hint="for example 127.0.0.1:7878"
        )
    if host.startswith("[") and host.endswith("]"):
        return host[1:-1], int(port), socket.AF_INET6
    return host, int(port), socket.AF_INET


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is reachable from this machine alone."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def read_token(path: Path) -> str:
    """The bearer token in `path` (its first line, stripped): at least 16 characters."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(
            f"cannot read the token file: {e}", field="--token-file", value=str(path)
        ) from None
    token = lines[0].strip() if lines else ""
    check_token(token, field="--token-file", value=str(path))
    return token


def check_token(token: str, *, field: str, value: str) -> None:
    if len(token) < 16 or any(c.isspace() for c in token):
        raise InputError(
            "a token is at least 16 characters with no spaces",
            field=field,
            value=value,
            hint="make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _wait_ready(child: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        if child.poll() is not None:
            raise StoreError(f"the oxigraph server exited with code {child.returncode}")
        try:
            url = f"http://127.0.0.1:{port}/query?query=ASK%7B%7D"
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise StoreError("the oxigraph server did not answer within 60 s") from None
            time.sleep(0.05)


def serve_store(
    location: Path,
    *,
    bind: str = "127.0.0.1:7878",
    read_write: bool = False,
    allow_service: bool = False,
    timeout_s: float = 60.0,
    token: str | None = None,
    include_users: bool = False,
    graphs: Graphs | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> int:
    """Serve until a signal stops it; returns 0, or the Oxigraph server's exit code if it
    stopped by itself. `on_ready` is called with the query URL once both servers listen
    (never when serving failed to start)."""
    if not location.is_dir():
        raise MissingStoreError(
            "no store directory here",
            field="--store",
            value=str(location),
            hint=f"create one with `finkg init --store {location}` (or `finkg demo`)",
        )
    host, port, family = split_address(bind)
    if token is not None:
        check_token(token, field="token", value="(hidden)")
    if read_write and token is None and not is_loopback(host):
        raise InputError(
            "--read-write on an address other than loopback needs a token: anyone who can "
            "reach it could write to the store",
            field="--bind",
            value=bind,
            hint="give --token-file FILE (or set FINKG_TOKEN), or bind 127.0.0.1",
        )
    inner = _free_port()
    command = server_command(
        location, bind=f"127.0.0.1:{inner}", read_write=read_write, timeout_s=timeout_s
    )
    preexec = die_with_parent if sys.platform.startswith("linux") else None
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=preexec)
    signalled = threading.Event()
    previous = {}
    try:
        _wait_ready(child, inner)
        policy = Policy(
            read_write=read_write,
            allow_service=allow_service,
            timeout_s=timeout_s,
            token=token,
            include_users=include_users,
            graphs=graphs or Graphs(),
        )
        server_class = type("Server", (ThreadingHTTPServer,), {"address_family": family})
        try:
            server = server_class((host, port), handler("127.0.0.1", inner, policy))
        except OSError as e:
            raise InputError(
                f"cannot listen there: {e.strerror}", field="--bind", value=bind
            ) from None
        server.daemon_threads = True

        def stop() -> None:  # serve_forever returns once shutdown runs in another thread
            threading.Thread(target=server.shutdown, daemon=True).start()

        def on_signal(*_: object) -> None:
            signalled.set()
            stop()

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                previous[sig] = signal.signal(sig, on_signal)

        def stop_with_child() -> None:
            child.wait()
            stop()

        threading.Thread(target=stop_with_child, daemon=True).start()
        if on_ready is not None:
            shown, bound = str(server.server_address[0]), server.server_address[1]
            on_ready(f"http://{f'[{shown}]' if ':' in shown else shown}:{bound}/query")
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    if signalled.is_set():
        return 0
    return child.returncode or 3  # the Oxigraph server stopped by itself
