"""Prompt budgets: what a reader's context window holds, and how much of a list fits in it.

A reader that knows its window says so (`n_ctx`) and counts a prompt's tokens exactly
(`count_tokens`, the chat template included); for one that does not (an HTTP endpoint, a
scripted fake), callers give the window they assume, and a prompt is estimated at three
characters a token.

>>> largest(10, lambda k: k * k <= 50)
7
>>> largest(3, lambda k: False)
0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from finkg.reader.llm import Message


def context_window(llm: object, default: int | None = None) -> int | None:
    """The reader's context window in tokens, else `default`."""
    window = getattr(llm, "n_ctx", None)
    return int(window) if window else default


def count_tokens(llm: object, messages: Sequence[Message]) -> int:
    """The reader's own count when it has one, else about three characters a token."""
    count = getattr(llm, "count_tokens", None)
    if callable(count):
        return int(count(messages))
    return sum(len(m["content"]) for m in messages) // 3 + 1


def largest(n: int, fits: Callable[[int], bool]) -> int:
    """The largest k in 0..n for which `fits(k)` holds (`fits` holds for every k below one
    it holds for; 0 when it holds for none)."""
    if fits(n):
        return n
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
