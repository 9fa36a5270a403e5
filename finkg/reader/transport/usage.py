"""What reads cost: HTTP requests, retries, tokens and seconds, metered per read.

A remote reader adds every request it makes (and every failed attempt before a retry) to the
`Usage` of the read it serves. Reads run in worker threads (`reader.concurrent`), so the
current `Usage` is a context variable: `metered()` opens one for the code inside it, and the
threads a reader fans a read's requests out to run in a copy of the caller's context, so
their requests land in the same `Usage` (which is locked: they add to it together).

>>> with metered() as u:
...     record_request(tokens_in=12, tokens_out=3, seconds=0.25)
>>> u.requests, u.tokens_in, u.retries
(1, 12, 0)
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Usage:
    """The cost of one read (or of several, added together)."""

    requests: int = 0  # HTTP requests that got an answer (retried attempts not counted)
    retries: int = 0  # attempts that failed and were tried again
    tokens_in: int = 0  # prompt tokens, as the server counted them
    tokens_out: int = 0
    seconds: float = 0.0  # the requests' wall time, retries and back-off waits included
    attempts: list[str] = field(default_factory=list)  # each failed attempt, in words
    failed: list[str] = field(default_factory=list)  # requests that failed for good
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, other: Usage) -> None:
        with self._lock:
            self.requests += other.requests
            self.retries += other.retries
            self.tokens_in += other.tokens_in
            self.tokens_out += other.tokens_out
            self.seconds += other.seconds
            self.attempts += other.attempts
            self.failed += other.failed


_current: contextvars.ContextVar[Usage | None] = contextvars.ContextVar(
    "finkg_reader_usage", default=None
)


@contextmanager
def metered() -> Iterator[Usage]:
    """A fresh `Usage` that every request made inside the block (in this thread, or in
    threads started with a copy of its context) is added to."""
    usage = Usage()
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)


@contextmanager
def unmetered() -> Iterator[None]:
    """Requests made inside the block are added to no read (a reader's one-off probes of
    its server: no read asked for them, and which read would meet them first is chance)."""
    token = _current.set(None)
    try:
        yield
    finally:
        _current.reset(token)


def record_request(*, tokens_in: int = 0, tokens_out: int = 0, seconds: float = 0.0) -> None:
    """A request that was answered (no-op outside `metered`)."""
    usage = _current.get()
    if usage is None:
        return
    with usage._lock:
        usage.requests += 1
        usage.tokens_in += tokens_in
        usage.tokens_out += tokens_out
        usage.seconds += seconds


def record_retry(note: str, *, seconds: float = 0.0) -> None:
    """An attempt that failed and will be tried again."""
    usage = _current.get()
    if usage is None:
        return
    with usage._lock:
        usage.retries += 1
        usage.seconds += seconds
        usage.attempts.append(note)


def record_failure(note: str, request: str, *, seconds: float = 0.0) -> None:
    """A request that failed for good: its last attempt (`note`) and the request named
    with its attempts and last reason (`request`)."""
    usage = _current.get()
    if usage is None:
        return
    with usage._lock:
        usage.seconds += seconds
        usage.attempts.append(note)
        usage.failed.append(request)
