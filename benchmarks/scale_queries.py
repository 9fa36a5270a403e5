"""`benchmarks/scale.py`'s queries: the anchors, the three point-in-time queries timed per
anchor and grouped, and the pool query on an Oxigraph server over the same store folder (and
on Virtuoso after a Graph Store copy)."""

from __future__ import annotations

import datetime as dt
import statistics
import time
from pathlib import Path

from benchmarks.retrieval import sample
from benchmarks.retrieval_engines import copy_store, ms, oxigraph_server, time_engine
from benchmarks.scale_figures import Group
from benchmarks.scale_unit import Unit, news_symbol
from finkg import queries
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.store import BaseStore, open_store
from finkg.retrieval.pools import PoolSpec
from finkg.tasks.impact.anchors import Anchor, anchors


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def choose_anchors(store: BaseStore, unit: Unit, args) -> tuple[list[Anchor], list[str], int]:
    """Replica 0's anchors, half on its real news from `--anchor-from` (companies with news
    alone), half on its demo news of the whole period (companies with prices, filings and
    windows: a large one hop), ten more to warm up; and how many there were to choose from."""
    ny, calendar = get_calendar().tz, get_calendar()
    chosen, found = [], 0
    real = frozenset(news_symbol(r["symbol"], 0) for r in unit.news)
    halves = (
        (real, args.anchor_from, args.anchors // 2 + 5),
        (unit.tickers, args.start, args.anchors - args.anchors // 2 + 5),
    )
    for tickers, start, n in halves:
        group = anchors(
            store,
            start=dt.datetime.combine(start, dt.time(), ny),
            end=dt.datetime.combine(args.to + dt.timedelta(days=1), dt.time(), ny),
            calendar=calendar,
            tickers=tickers,
        )
        if len(group) < n:
            raise InputError(
                f"only {len(group)} news anchors fall in the period",
                field="--anchor-from",
                value=str(start),
                hint=f"an earlier start, or fewer --anchors than {args.anchors}",
            )
        chosen.append(sample(group, n))
        found += len(group)
    real_part, demo_part = chosen
    # the first ten (five of each) are the untimed warm-up
    labels = [GROUPS[0]] * (len(real_part) - 5) + [GROUPS[1]] * (len(demo_part) - 5)
    return real_part[:5] + demo_part[:5] + real_part[5:] + demo_part[5:], labels, found


GROUPS = ("real news (the company alone)", "demo news (the company and its sector peers)")


def time_queries(store: BaseStore, chosen: list[Anchor]) -> dict[str, list]:
    """Per timed anchor (`chosen[10:]`; the first ten run once before, untimed): the pool
    and the one hop (`time_engine`), then evidence_before; seconds and answers."""
    timed = time_engine(store, chosen, PoolSpec())
    n = len(chosen) - 10
    out = {
        "pool": timed["pool"][-n:],
        "hop": timed["hop"][-n:],
        "pool_rows": timed["pool_rows"][-n:],
        "hop_triples": timed["hop_triples"][-n:],
        "evidence": [],
        "evidence_rows": [],
    }
    for warm, group in ((True, chosen[:10]), (False, chosen[10:])):
        for a in group:
            started = time.perf_counter()
            rows = queries.select(
                store, "evidence_before", {"company": a.company, "before": a.decision_time}
            )
            if not warm:
                out["evidence"].append(time.perf_counter() - started)
                out["evidence_rows"].append(sorted(r.iri("evidence").value for r in rows))
    return out


ANSWERS = {"pool": "pool_rows", "one_hop": "hop_triples", "evidence_before": "evidence_rows"}


def groups(timed: dict, labels: list[str], first: dict | None) -> dict[str, Group]:
    """The figures of each group of anchors; answers compared with `first` (the first
    size's `timed`)."""
    out = {}
    ref = first or timed
    for name in GROUPS:
        idx = [i for i, label in enumerate(labels) if label == name]
        if not idx:
            continue

        def pick(key: str, idx: list[int] = idx) -> list:
            return [timed[key][i] for i in idx]

        out[name] = Group(
            anchors=len(idx),
            pool_ms=ms(pick("pool")),
            one_hop_ms=ms(pick("hop")),
            evidence_ms=ms(pick("evidence")),
            pool_rows=statistics.median(sum(c.values()) for c in pick("pool_rows")),
            one_hop_triples=statistics.median(sum(c.values()) for c in pick("hop_triples")),
            evidence_rows=statistics.median(len(r) for r in pick("evidence_rows")),
            same={
                query: sum(timed[key][i] == ref[key][i] for i in idx)
                for query, key in ANSWERS.items()
            },
        )
    return out


def servers(
    work: Path,
    chosen: list[Anchor],
    last: dict,
    settings: Settings,
    virtuoso: tuple[str, str] | None = None,
    chunk: int = 50_000,
) -> dict:
    """The pool query at the largest size on an Oxigraph server over the same store folder
    and, with `virtuoso` (its SPARQL and Graph Store URLs), on Virtuoso after a Graph Store
    copy of the store (`chunk` triples a request), its rows compared with the embedded
    store's at that size."""
    with oxigraph_server(work / "store") as url:
        remote = open_store(url, settings=settings)
        say(f"Oxigraph server at {url}: timing {len(chosen) - 10} anchors")
        timed = time_engine(remote, chosen, PoolSpec(), hop=False)
        engines = {"oxigraph": _compared(timed, chosen, last)}
    if virtuoso is not None:
        target = open_store(virtuoso[0], settings=settings.with_(gsp_url=virtuoso[1]))
        with open_store(work / "store", settings=settings, read_only=True) as store:
            say(f"Virtuoso at {virtuoso[0]}: copying the store, {chunk:,} triples a request")
            loaded = copy_store(store, target, chunk=chunk)
        say(f"Virtuoso: timing {len(chosen) - 10} anchors")
        timed = time_engine(target, chosen, PoolSpec(), hop=False)
        engines["virtuoso"] = {**_compared(timed, chosen, last), "loaded": loaded}
    return engines


def _compared(timed: dict, chosen: list[Anchor], last: dict) -> dict:
    """An engine's pool p50/p95 and on how many anchors its rows are the embedded store's."""
    n = len(chosen) - 10
    rows = timed["pool_rows"][-n:]
    same = sum(a == b for a, b in zip(rows, last["pool_rows"], strict=True))
    return {"pool_ms": ms(timed["pool"][-n:]), "same": same, "anchors": n}
