"""The questions of a period: which stocks train, choose and test (paper 001 Table 2's
split), and each session's query with the movement that followed (eq. 1-2), read from
the store's adjusted closes.

`labelled_queries` is what FinSeer's training (`train`), the reader's adaptation
(`adapt`) and the movement benchmarks ask for; it reads every ticker's closes with one
query and builds each question from them, as `build_query` builds one from the store.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence

import numpy as np

from finkg import queries
from finkg.errors import InputError
from finkg.evaluation.labels import PriceTable
from finkg.kg.calendar import get_calendar
from finkg.kg.derive.windows import LENGTH, movements
from finkg.kg.store import BaseStore
from finkg.retrieval.sequences import Progress, Query, query_from_closes
from finkg.tasks.movement.forecast import LABELS

TABLE2 = (33, 5, 33)  # ACL18 train / valid / test stocks (paper 001 Table 2)


def split_stocks(tickers: Sequence[str], *, seed: int = 0) -> dict[str, list[str]]:
    """Train / valid / test stocks in Table 2's proportions, by a seeded permutation.

    >>> s = split_stocks([f"T{i:02d}" for i in range(71)])
    >>> [len(s[k]) for k in ("train", "valid", "test")]
    [33, 5, 33]
    """
    names = sorted(set(tickers))
    n = len(names)
    if n < 3:
        raise InputError("a split needs three stocks or more", field="tickers", value=names)
    total = sum(TABLE2)
    n_train = max(1, round(n * TABLE2[0] / total))
    n_valid = max(1, round(n * TABLE2[1] / total))
    n_train = min(n_train, n - n_valid - 1)
    order = np.random.default_rng(seed).permutation(n)
    shuffled = [names[i] for i in order]
    return {
        "train": sorted(shuffled[:n_train]),
        "valid": sorted(shuffled[n_train : n_train + n_valid]),
        "test": sorted(shuffled[n_train + n_valid :]),
    }


def store_tickers(store: BaseStore) -> list[str]:
    """Tickers with price bars in the store (from their company IRIs' readable keys)."""
    from finkg.kg.iri import readable_keys

    rows = queries.select(store, "priced_companies", {})
    out: list[str] = []
    for r in rows:
        keys = readable_keys("company", r.iri("company"), base=store.graphs.base)
        if keys:
            out.append(keys[0])
    return sorted(out)


def close_series(
    store: BaseStore, tickers: Sequence[str], first: dt.date, last: dt.date
) -> dict[str, list[tuple[dt.date, float]]]:
    """Each ticker's (session, adjusted close) points in [first, last], oldest first, read
    with one query for all of them (`PriceTable`, as the impact job's labels read them)."""
    table = PriceTable.load(store, tickers, first=first, last=last)
    return {t: [(d, float(c)) for d, c in s.items()] for t, s in table.series.items() if len(s)}


def series_labels(
    series: dict[str, list[tuple[dt.date, float]]], start: dt.date, end: dt.date
) -> list[tuple[str, dt.date, str]]:
    """(ticker, session, movement) for sessions in [start, end] of series that begin
    before `start` (the first point has no movement)."""
    out: list[tuple[str, dt.date, str]] = []
    for t, points in sorted(series.items()):
        labels = movements(np.array([p[1] for p in points]))
        out += [
            (t, d, str(m))
            for (d, _), m in zip(points, labels, strict=True)
            if start <= d <= end and m
        ]
    return out


def labelled_queries(
    store: BaseStore,
    tickers: Sequence[str],
    start: dt.date,
    end: dt.date,
    *,
    n: int | None,
    seed: int,
    salt: str = "",
    progress: Progress | None = None,
) -> list[tuple[Query, str]]:
    """A seeded sample of `n` non-freeze (query, true label) pairs (fewer if there are not;
    every one, in the sample's order, when `n` is None). The closes of every ticker are
    read with one query, from the fifth session before `start` (what the first query
    shows), and each query is built from them as `build_query` builds it from the store;
    `progress` hears of each."""
    cal = get_calendar()
    sessions = cal.sessions(start, end) if start <= end else []
    if not sessions or not tickers:
        return []
    # the labels' series begin before `start` (the session before it gives the first
    # movement), and the first query shows the five sessions before its own
    reach = min(start - dt.timedelta(days=10), cal.session_offset(sessions[0], -LENGTH))
    series = close_series(store, tickers, reach, end)
    pairs = [(t, d, m) for t, d, m in series_labels(series, start, end) if m in LABELS]
    pairs.sort(key=lambda p: hashlib.sha256(f"{seed}/{salt}/{p[0]}/{p[1]}".encode()).hexdigest())
    out: list[tuple[Query, str]] = []
    wanted = len(pairs) if n is None else min(n, len(pairs))
    for t, d, m in pairs:
        if len(out) == n:
            break
        try:
            out.append((query_from_closes(t, d, series[t], base=store.graphs.base), m))
        except InputError:  # a gap in its bars: not a query
            continue
        if progress:
            progress(f"queries of {start} to {end}", len(out), wanted)
    return out
