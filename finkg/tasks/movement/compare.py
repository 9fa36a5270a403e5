"""Retrievers compared on the same queries (paper 001 Table 3, with honest statistics).

Every retriever reads the same validation queries and the same test queries (a retriever
run on fewer test queries reads the first of the shared list, which is in a seeded random
order, so any prefix is a sample of the whole period). For each, the reader's scores of
"rise" and "fall" become decisions prequentially (`tasks.decisions`): the validation
queries are the heads' first fitting items, the test queries are decided in time order,
each from what had matured before its decision instant.

The best retriever is chosen on the validation queries alone (`choose`: the validation MCC
of one head, decided prequentially over the validation queries; ties go to the retriever
listed first); it never sees a test label. `no retrieval` is the reference, not a
candidate.

Each table holds, on one set of test queries: the no-skill and fixed rules (majority,
stratified, previous-day, momentum, and the `card` head over the query's own returns
without the reader), then per retriever the reader's raw argmax (`raw`) and each head;
ACC and MCC with bootstrap 95 % intervals, the permutation control, the class mix, and
paired MCC differences against majority, previous-day and the same head without retrieval;
MCC and the differences also with intervals that resample whole trading weeks (queries of
one week share the market's moves, so the query-level interval is too narrow).

An adapted reader's rules (`none+lora/prior`, `compare_adapted`) are paired with the
frozen reader's same rule.

Reads go through a score cache keyed by the reader and the exact messages, so a stopped
run continues where it stopped; cached reads are counted apart and never in reads/hour.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from finkg.evaluation.stats import Interval, accuracy, bootstrap, mcc
from finkg.kg.calendar import get_calendar
from finkg.reader.budget import count_tokens
from finkg.reader.llm import LLM, messages_hash
from finkg.retrieval.sequence_retrievers import SequenceRetriever
from finkg.retrieval.sequences import Query, WindowPool
from finkg.tasks.decisions import Item, RuleFigures, decide_all, figures
from finkg.tasks.movement.forecast import LABELS, MovementConfig, prepare, query_features

HEADS = ("none", "prior", "multinomial")  # "none": the raw argmax, shown as "raw"
FIXED = ("majority", "stratified", "previous-day", "momentum", "card")
VERSUS = ("majority", "previous-day")
METRICS = {"MCC": mcc, "ACC": accuracy}
Log = Callable[[str], None]
Labelled = Sequence[tuple[Query, str]]
ADAPTED = "+lora"  # `none+lora`: a retriever's queries read by the adapted reader
NEW_YORK = ZoneInfo("America/New_York")


def rule_name(retriever: str, head: str) -> str:
    """`dtw/prior`; the raw argmax is `dtw/raw`."""
    return f"{retriever}/{'raw' if head == 'none' else head}"


class ScoreCache:
    """Scores by (reader, exact messages) in a JSON file; a hit is not a read. Saved
    atomically, so a run killed while saving leaves the previous file whole."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, dict[str, float]] = {}
        if path is not None and path.exists():
            self.data = json.loads(path.read_text(encoding="utf-8"))

    @staticmethod
    def key(model_id: str, messages: Sequence) -> str:
        return hashlib.sha256(f"{model_id}/{messages_hash(list(messages))}".encode()).hexdigest()

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.data), encoding="utf-8")
        os.replace(tmp, self.path)


@dataclass
class Throughput:
    """One retriever's reads: made (timed), answered by the cache (not timed), tokens, and
    the seconds spent retrieving (not reading)."""

    reads: int = 0
    cached: int = 0
    seconds: float = 0.0
    retrieval_seconds: float = 0.0
    queries: int = 0
    tokens: list[int] = field(default_factory=list)

    @property
    def per_hour(self) -> float | None:
        return 3600 * self.reads / self.seconds if self.seconds else None

    def summary(self) -> dict[str, object]:
        return {
            "reads": self.reads,
            "cached": self.cached,
            "read_seconds": round(self.seconds, 1),
            "seconds_per_read": round(self.seconds / self.reads, 2) if self.reads else None,
            "reads_per_hour": round(self.per_hour, 1) if self.per_hour else None,
            "prompt_tokens_mean": round(float(np.mean(self.tokens)), 1) if self.tokens else None,
            "prompt_tokens_max": max(self.tokens) if self.tokens else None,
            "retrieval_seconds_per_query": (
                round(self.retrieval_seconds / self.queries, 3) if self.queries else None
            ),
        }


def _sign(x: float) -> str:
    return "rise" if x > 0 else "fall"


@dataclass
class Reader:
    """Reads queries with one reader through the cache, counting per retriever."""

    llm: LLM
    pool: WindowPool
    config: MovementConfig
    cache: ScoreCache
    log: Log | None = None
    every: int = 25
    throughput: dict[str, Throughput] = field(default_factory=dict)

    def items(
        self, retriever: SequenceRetriever, labelled: Labelled, stage: str
    ) -> dict[str, Item]:
        """Each query's decision item (scores, the query's returns, label), by query key."""
        count = self.throughput.setdefault(retriever.name, Throughput())
        calendar = get_calendar()
        out: dict[str, Item] = {}
        for n, (q, label) in enumerate(labelled, start=1):
            started = time.perf_counter()
            _, messages = prepare(q, self.pool, retriever=retriever, config=self.config)
            count.retrieval_seconds += time.perf_counter() - started
            count.queries += 1
            key = self.cache.key(self.llm.model_id, messages)
            count.tokens.append(count_tokens(self.llm, messages))
            if key in self.cache.data:
                scores = self.cache.data[key]
                count.cached += 1
            else:
                started = time.perf_counter()
                scores = self.llm.score(messages, list(LABELS))
                count.seconds += time.perf_counter() - started
                count.reads += 1
                self.cache.data[key] = scores
                if count.reads % 10 == 0:
                    self.cache.save()
            d1, d4 = query_features(q)
            out[q.key] = Item(
                q.decision,
                calendar.bar_available_at(q.day),
                scores,
                (d1, d4),
                label,
                {"previous-day": _sign(d1), "momentum": _sign(d4)},
            )
            if self.log and (n % self.every == 0 or n == len(labelled)):
                self.log(_progress(f"{retriever.name} {stage}", n, len(labelled), count))
        self.cache.save()
        return out


def _progress(stage: str, n: int, total: int, t: Throughput) -> str:
    rate = f"{t.per_hour:.0f}/h, {t.seconds / t.reads:.1f} s/read" if t.reads else "no reads yet"
    eta = (
        f"; at most {(total - n) * t.seconds / t.reads / 60:.0f} min left at this rate"
        if t.reads and n < total
        else ""
    )
    return f"[{stage}] {n}/{total} queries; {t.reads} reads so far ({rate}), {t.cached} cached{eta}"


@dataclass(frozen=True)
class Choice:
    """The retriever chosen on the validation queries, and what each scored there."""

    best: str | None
    head: str
    validation: dict[str, dict[str, list[float]]]  # retriever -> metric -> [value, low, high]
    queries: int


def choose(
    validation: Mapping[str, Sequence[Item]], *, head: str = "prior", n: int = 1000, seed: int = 0
) -> Choice:
    """The retriever (not `none`) whose `head` has the highest MCC over the validation
    items, decided prequentially within them (module docstring). Sees nothing else."""
    figures: dict[str, dict[str, list[float]]] = {}
    for name, items in validation.items():
        ordered = sorted(items, key=lambda i: i.decision)
        decided = decide_all([], ordered, classes=LABELS, heads=(head,), seed=seed)[head]
        labels = [i.label for i in ordered]
        figures[name] = {
            k: _triple(bootstrap(m, decided, labels, n=n, seed=seed)) for k, m in METRICS.items()
        }
    candidates = [r for r in validation if r != "none"]
    best = max(candidates, key=lambda r: figures[r]["MCC"][0], default=None)  # first on ties
    sizes = {len(items) for items in validation.values()}
    return Choice(best, head, figures, max(sizes, default=0))


def trading_week(decision: dt.datetime) -> tuple[int, int]:
    """The ISO year and week of a decision's New York trading day: queries of one week
    share the market's moves, so the tables' honest intervals resample whole weeks."""
    c = decision.astimezone(NEW_YORK).date().isocalendar()
    return c.year, c.week


def _triple(interval: Interval) -> list[float]:
    return [interval.value, interval.low, interval.high]


@dataclass(frozen=True)
class Table:
    """Every rule on one set of test queries (module docstring)."""

    title: str
    retrievers: tuple[str, ...]
    queries: int
    rise_share: float
    rows: tuple[RuleFigures, ...]


def table(
    title: str,
    fitting: Mapping[str, Mapping[str, Item]],
    test: Mapping[str, Mapping[str, Item]],
    keys: Sequence[str],
    retrievers: Sequence[str],
    *,
    n: int = 1000,
    seed: int = 0,
) -> Table:
    """The rules of `retrievers` on the test queries `keys` (each retriever has read them)."""
    decisions: dict[str, list[str]] = {}
    labels: list[str] = []
    weeks: list[tuple[int, int]] = []
    for r in retrievers:
        items = sorted((test[r][k] for k in keys), key=lambda i: i.decision)  # stable
        heads = (*HEADS, "card")
        got = decide_all(list(fitting[r].values()), items, classes=LABELS, heads=heads, seed=seed)
        if not decisions:  # the rules without the reader are the same for every retriever
            decisions |= {k: got[k] for k in FIXED}
            labels = [i.label for i in items]
            weeks = [trading_week(i.decision) for i in items]
        decisions |= {rule_name(r, h): got[h] for h in HEADS}
    y = np.asarray(labels)

    def against(name: str) -> list[str]:
        """Majority and previous-day; a retriever's head also against the same head alone,
        an adapted reader's rule against the frozen reader's same rule."""
        retriever, _, head = name.partition("/")
        if retriever.endswith(ADAPTED):
            frozen = retriever.removesuffix(ADAPTED)
            return [*VERSUS, *([f"{frozen}/{head}"] if frozen in retrievers else [])]
        own = [f"none/{head}"] if head and retriever != "none" and "none" in retrievers else []
        return [*VERSUS, *own]

    rows = figures(
        decisions,
        y,
        metrics=METRICS,
        baselines=against,
        classes=LABELS,
        n=n,
        seed=seed,
        groups=weeks,
    )
    rise = float(np.mean(y == "rise")) if len(y) else 0.0
    return Table(title, tuple(retrievers), len(keys), rise, tuple(rows))


@dataclass(frozen=True)
class Comparison:
    choice: Choice
    tables: tuple[Table, ...]
    fitting: dict[str, dict[str, Item]]
    test: dict[str, dict[str, Item]]
    throughput: dict[str, dict[str, object]]


def compare(
    retrievers: Mapping[str, SequenceRetriever],
    validation: Labelled,
    test: Labelled,
    reader: Reader,
    *,
    small: int,
    head: str = "prior",
    n: int = 1000,
    seed: int = 0,
) -> Comparison:
    """Read, choose on validation, decide and tabulate (module docstring). `test` is the
    shared test list in its sampled order: every retriever reads its first `small`
    queries, `none` and the chosen retriever all of them."""
    names = list(retrievers)
    fitting = {r: reader.items(retrievers[r], validation, "validation") for r in names}
    choice = choose({r: list(fitting[r].values()) for r in names}, head=head, n=n, seed=seed)
    if reader.log:
        reader.log(
            f"best retriever on the {choice.queries} validation queries ({head} head MCC): "
            f"{choice.best}"
        )
    small = min(small, len(test))
    large = [r for r in names if r in ("none", choice.best)]
    tested = {r: reader.items(retrievers[r], test[:small], "test") for r in names}
    for r in large:
        if len(test) > small:
            tested[r] |= reader.items(retrievers[r], test[small:], "test (rest)")
    keys = [q.key for q, _ in test]
    tables = [
        table(
            f"All retrievers on the first {small} test queries",
            fitting,
            tested,
            keys[:small],
            names,
            n=n,
            seed=seed,
        )
    ]
    if len(test) > small and large:
        tables.append(
            table(
                f"{' and '.join(large)} on all {len(test)} test queries",
                fitting,
                tested,
                keys,
                large,
                n=n,
                seed=seed,
            )
        )
    throughput = {r: t.summary() for r, t in reader.throughput.items()}
    return Comparison(choice, tuple(tables), fitting, tested, throughput)


def as_json(c: Comparison) -> dict[str, object]:
    """The comparison's figures as plain data (what the report is rendered from)."""
    return {
        "selection": {
            "head": c.choice.head,
            "metric": "MCC",
            "queries": c.choice.queries,
            "best": c.choice.best,
            "validation": c.choice.validation,
        },
        "throughput": c.throughput,
        "tables": [
            {
                "title": t.title,
                "retrievers": list(t.retrievers),
                "queries": t.queries,
                "rise_share": t.rise_share,
                "rules": {
                    r.name: {
                        "metrics": {k: _triple(v) for k, v in r.metrics.items()},
                        "permutation": {
                            "shuffled_mean": r.permutation.shuffled_mean,
                            "p": r.permutation.p,
                        },
                        "mix": r.mix,
                        "mcc_vs": {b: _triple(d) for b, d in r.versus.items()},
                        **({"mcc_weeks": _triple(r.grouped)} if r.grouped else {}),
                        "mcc_vs_weeks": {b: _triple(d) for b, d in r.versus_grouped.items()},
                    }
                    for r in t.rows
                },
            }
            for t in c.tables
        ],
    }


def last_decision(c: Comparison) -> dt.datetime:
    return max(i.decision for items in c.test.values() for i in items.values())
