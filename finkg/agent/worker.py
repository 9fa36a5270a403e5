"""Store reads in a child process, stopped at a time limit.

pyoxigraph evaluates a query in Rust with no way to interrupt it, so a query an agent
writes could hold a server for as long as it runs. `Worker` runs each read in a child
process (`python -m finkg.agent.worker`, talking over two pipes; its stdout goes nowhere,
since on stdio the server's carries the protocol) that opens the store read-only
and keeps it, with its as-of views (`view.Views`), between calls. A call that has not
answered within the time limit has its child killed, which stops the query, and raises
`QueryTimeout`; the next call starts a fresh child (a second or two).

A call names a function `f(reading, **kwargs)` of an importable module (`calls.py`); a
`FinkgError` it raises comes back as one with the same message, anything else as a
`WorkerError` whose message names the exception (the traceback goes to the server's log).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from finkg.agent.calls import Reading, Scope
from finkg.errors import FinkgError, InputError, StoreError
from finkg.kg.serve import die_with_parent

T = TypeVar("T")


class QueryTimeout(InputError):
    """A read that ran past the time limit (its process was stopped)."""


class WorkerError(FinkgError):
    """A read that failed inside finkg (not the caller's input)."""

    exit_code = 3


def _serve(inbox: Connection, outbox: Connection) -> None:
    """The child: open the store once, then answer calls until the pipe closes."""
    scope = inbox.recv()
    try:
        reading = Reading.open(scope)
    except FinkgError as e:
        outbox.send(("error", str(e)))
        return
    outbox.send(("ready", None))
    while True:
        try:
            fn, kwargs = inbox.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            outbox.send(("ok", fn(reading, **kwargs)))
        except FinkgError as e:
            outbox.send(("error", str(e)))
        except Exception as e:  # a bug: its name to the caller, its traceback to the log
            traceback.print_exc()
            outbox.send(("bug", f"{type(e).__name__}: {e}"))


class Worker:
    """One child process serving reads, one call at a time (module docstring)."""

    def __init__(self, scope: Scope, *, timeout_s: float) -> None:
        self.scope, self.timeout_s = scope, timeout_s
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._inbox: Connection | None = None  # what the child answers
        self._outbox: Connection | None = None  # what the child is asked

    def start(self) -> None:
        """Start the child and wait until it has opened the store (errors are raised)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> tuple[Connection, Connection]:
        if self._process is not None and self._process.poll() is None:
            assert self._inbox is not None and self._outbox is not None
            return self._inbox, self._outbox
        to_child, from_parent = os.pipe()[::-1]  # (write end, read end)
        from_child, to_parent = os.pipe()
        process = subprocess.Popen(
            [sys.executable, "-m", "finkg.agent.worker", str(from_parent), str(to_parent)],
            pass_fds=(from_parent, to_parent),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never the server's stdout: stdio carries the protocol
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
        )
        os.close(from_parent)
        os.close(to_parent)
        outbox = Connection(to_child, readable=False)
        inbox = Connection(from_child, writable=False)
        outbox.send(self.scope)
        if not inbox.poll(120):
            process.kill()
            raise StoreError(f"the store at {self.scope.location} did not open within 120 s")
        try:
            kind, payload = inbox.recv()
        except EOFError:
            process.wait(10)
            raise StoreError(
                f"the reader of {self.scope.location} stopped while opening it "
                f"(exit code {process.returncode})"
            ) from None
        if kind == "error":
            process.wait(10)
            raise StoreError(payload)
        self._process, self._inbox, self._outbox = process, inbox, outbox
        return inbox, outbox

    def call(self, fn: Callable[..., T], /, *, timeout_s: float | None = None, **kwargs: Any) -> T:
        """`fn(reading, **kwargs)` in the child; `timeout_s` overrides the worker's limit
        (0: none)."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        with self._lock:
            inbox, outbox = self._ensure()
            outbox.send((fn, kwargs))
            if limit and not inbox.poll(limit):
                self._stop()
                raise QueryTimeout(
                    f"the query ran past the time limit of {limit:g} s and was stopped",
                    field="timeout",
                    hint="narrow it (a LIMIT, a company, a period) or start the server with "
                    "a longer --timeout",
                )
            try:
                kind, payload = inbox.recv()
            except (EOFError, OSError):
                code = self._process.poll() if self._process else None
                self._stop()
                raise WorkerError(
                    f"the query process stopped (exit code {code}); a fresh one answers the "
                    "next call"
                ) from None
        if kind == "ok":
            return payload
        if kind == "error":
            raise _Relayed(payload)
        raise WorkerError(f"finkg failed reading the store ({payload}); the server log has more")

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
        for conn in (self._inbox, self._outbox):
            if conn is not None:
                conn.close()
        self._process, self._inbox, self._outbox = None, None, None

    def close(self) -> None:
        with self._lock:
            if self._outbox is not None:
                self._outbox.close()  # the child sees EOF and returns
                self._outbox = None
            if self._process is not None:
                try:
                    self._process.wait(5)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait(5)
            self._stop()


class _Relayed(FinkgError):
    """A FinkgError raised in the child: its message, as the CLI would print it."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)


__all__ = ["QueryTimeout", "Scope", "Worker", "WorkerError"]

if __name__ == "__main__":  # the child: python -m finkg.agent.worker IN_FD OUT_FD
    _serve(
        Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)
    )
