"""Reading several prompts at once, for readers that can serve them together.

A remote reader (`openai_http.OpenAICompatible`) has a `concurrency`: how many requests it
keeps in flight. Jobs hand it independent reads through `run_all` (the anchors of one
decision session, the questions of a batch, the passages a reranker scores), which runs them
on that many threads and gives back each one's outcome in the order they were given, so the
job writes and feeds back in that order exactly as a one-at-a-time run would. A local reader
(one llama.cpp context, not thread-safe) has no `concurrency`: its reads run one after
another in the caller's thread.

Each read runs in a copy of the caller's context (`reader.usage` meters follow it). When a
read fails, reads not yet started are skipped: a job stops at its first failure in order,
and the failure comes before every skipped read (reads start in order).

>>> [o.get() for o in run_all([lambda: 1, lambda: 2], concurrency=2)]
[1, 2]
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Skipped(Exception):
    """A read not made because an earlier one failed."""


@dataclass(frozen=True)
class Outcome(Generic[T]):
    value: T | None = None
    error: BaseException | None = None

    def get(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # a T when error is None; T may be None-able, so no check narrows it


def concurrency_of(llm: Any) -> int:
    """How many reads `llm` serves at once (1 for a reader without a `concurrency`)."""
    n = getattr(llm, "concurrency", 1)
    return n if isinstance(n, int) and n > 1 else 1


def run_all(tasks: Sequence[Callable[[], T]], *, concurrency: int) -> list[Outcome[T]]:
    """Each task's outcome, in order; at most `concurrency` run at once (module docstring)."""
    failed = threading.Event()

    def one(task: Callable[[], T]) -> Outcome[T]:
        if failed.is_set():
            return Outcome(error=Skipped("an earlier read failed"))
        try:
            return Outcome(value=task())
        except Exception as e:
            failed.set()
            return Outcome(error=e)

    if concurrency <= 1 or len(tasks) <= 1:
        return [one(t) for t in tasks]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(tasks))) as pool:
        futures = [pool.submit(contextvars.copy_context().run, one, t) for t in tasks]
        return [f.result() for f in futures]


def map_ordered(fn: Callable[[Any], T], items: Sequence[Any], *, concurrency: int) -> list[T]:
    """`[fn(x) for x in items]`, at most `concurrency` at once; the first error is raised."""
    return [o.get() for o in run_all([partial(fn, x) for x in items], concurrency=concurrency)]
