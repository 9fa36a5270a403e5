"""The questions of a period (`finkg.tasks.movement.questions`): read with one query, each
is the query `build_query` reads from the store, with the movement that followed it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from finkg.errors import InputError
from finkg.kg.derive.windows import movements
from finkg.kg.store import BaseStore
from finkg.retrieval.sequences import build_query
from finkg.tasks.movement.questions import labelled_queries
from tests.test_movement import SESSIONS, TICKERS, filled, market

GAP = SESSIONS[20]  # BBB has no bar this session


@pytest.fixture(scope="module")
def gapped(tmp_path_factory: pytest.TempPathFactory) -> tuple[BaseStore, dict[str, Path]]:
    paths = market(tmp_path_factory.mktemp("gapped"))
    files = {p.stem: p for p in paths}
    frame = pd.read_csv(files["BBB"], index_col="Date")
    frame.drop(index=GAP.isoformat()).to_csv(files["BBB"])
    return filled(paths), files


def expected(store: BaseStore, ticker: str, path: Path) -> dict[dt.date, str]:
    """Each session's movement from the file's closes, where `build_query` finds a query."""
    frame = pd.read_csv(path, index_col="Date")
    days = [dt.date.fromisoformat(d) for d in frame.index]
    out = {}
    for day, label in zip(days, movements(frame["Adj Close"].to_numpy()), strict=True):
        if label not in ("rise", "fall") or day < SESSIONS[3]:
            continue
        try:
            build_query(store, ticker, day)
        except InputError:
            continue
        out[day] = str(label)
    return out


def test_every_question_is_the_stores_query_with_its_movement(
    gapped: tuple[BaseStore, dict[str, Path]],
) -> None:
    store, files = gapped
    labelled = labelled_queries(store, TICKERS, SESSIONS[3], SESSIONS[-1], n=None, seed=0)
    got: dict[str, dict[dt.date, str]] = {t: {} for t in TICKERS}
    for query, label in labelled:
        assert query == build_query(store, query.ticker, query.day)
        got[query.ticker][query.day] = label
    for t in TICKERS:
        assert got[t] == expected(store, t, files[t])
    # no question on the gap's session nor on the five that show it; others have them
    i = SESSIONS.index(GAP)
    hidden = set(SESSIONS[i : i + 6])
    assert not hidden & set(got["BBB"])
    assert hidden & (set(got["AAA"]) | set(got["CCC"]))


def test_a_sample_is_seeded_and_reports_each_question(
    gapped: tuple[BaseStore, dict[str, Path]],
) -> None:
    store = gapped[0]
    heard: list[tuple[str, int, int]] = []
    first = labelled_queries(
        store, TICKERS, SESSIONS[3], SESSIONS[-1], n=7, seed=3, progress=lambda *a: heard.append(a)
    )
    again = labelled_queries(store, TICKERS, SESSIONS[3], SESSIONS[-1], n=7, seed=3)
    other = labelled_queries(store, TICKERS, SESSIONS[3], SESSIONS[-1], n=7, seed=4)
    assert first == again and len(first) == 7 and first != other
    assert [h[1:] for h in heard] == [(i, 7) for i in range(1, 8)]


def test_an_empty_period_or_no_tickers_asks_no_questions(
    gapped: tuple[BaseStore, dict[str, Path]],
) -> None:
    store = gapped[0]
    assert labelled_queries(store, TICKERS, SESSIONS[9], SESSIONS[8], n=5, seed=0) == []
    assert labelled_queries(store, [], SESSIONS[3], SESSIONS[-1], n=5, seed=0) == []
