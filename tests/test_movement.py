"""Movement forecasts (paper 001): queries, point-in-time pools, retrievers, the written
prediction, future invariance and bad inputs, on a small synthetic market."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG
from finkg.reader.llm import Message, ScriptedLLM
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.sequence_retrievers import (
    BM25Retrieval,
    DTWRetrieval,
    RandomRetrieval,
    open_retriever,
    top_k,
)
from finkg.retrieval.sequences import WindowPool, build_query, short_number, znorm
from finkg.shapes.validate import validate_store
from finkg.tasks.movement.forecast import (
    MovementConfig,
    candidate_block,
    forecast,
    movement_messages,
    predict,
    query_features,
)
from tests.readers import THREADS

TICKERS = ("AAA", "BBB", "CCC")
START = dt.date(2019, 1, 2)
N = 50
AT = 40  # the query date's index
SESSIONS = get_calendar().sessions(START, START + dt.timedelta(days=N * 2 + 10))[:N]
DAY = SESSIONS[AT]
CONFIG = MovementConfig(k=5, sample=1.0)


def bars(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    close = 50 * np.exp(np.cumsum(rng.normal(0, 0.012, N)))
    open_ = close * np.exp(rng.normal(0, 0.004, N))
    return pd.DataFrame(
        {
            "Open": open_,
            "High": np.maximum(open_, close) * 1.004,
            "Low": np.minimum(open_, close) * 0.996,
            "Close": close,
            "Adj Close": close * 0.9,
            "Volume": rng.integers(1_000, 100_000, N),
        },
        index=pd.Index([d.isoformat() for d in SESSIONS], name="Date"),
    )


def market(folder: Path, last: dt.date | None = None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, t in enumerate(TICKERS):
        frame = bars(i)
        if last is not None:
            frame = frame[frame.index <= last.isoformat()]
        frame.to_csv(folder / f"{t}.csv")
        paths.append(folder / f"{t}.csv")
    return paths


def filled(paths: list[Path]) -> BaseStore:
    s = open_store(None)
    ingest(s, "prices", loader("prices"), paths, IngestOptions(graphs=s.graphs))
    return s


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> BaseStore:
    return filled(market(tmp_path_factory.mktemp("full")))


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> BaseStore:
    """The same market with no bar on or after the query date."""
    return filled(market(tmp_path_factory.mktemp("cut"), last=SESSIONS[AT - 1]))


def reader(favour: str = "rise") -> ScriptedLLM:
    """Log-probabilities that depend on the exact prompt, favouring one label."""

    def scores(messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        text = json.dumps(list(messages))
        noise = int(hashlib.sha256(text.encode()).hexdigest()[:6], 16) / 16**6
        return {o: (-0.2 - noise if o == favour else -1.5 - noise / 3) for o in options}

    return ScriptedLLM(scores=scores, model_id="scripted-movement")


def retrievers() -> list:
    return [
        open_retriever(name, embedder=HashEmbedder(dim=32))
        for name in ("none", "random", "dtw", "bm25", "minilm")
    ]


# --- the query and its pool -----------------------------------------------------------------


def test_the_query_is_the_papers_serialization(full: BaseStore) -> None:
    q = build_query(full, "aaa", DAY)
    data = json.loads(q.text)
    assert list(data) == ["query_stock", "query_date", "recent_date_list", "adjusted_close_list"]
    assert data["query_stock"] == "AAA" and data["query_date"] == DAY.isoformat()
    assert data["recent_date_list"] == [d.isoformat() for d in SESSIONS[AT - 5 : AT]]
    expected = (bars(0)["Adj Close"].to_numpy()[AT - 5 : AT]).tolist()
    assert data["adjusted_close_list"] == pytest.approx(expected, rel=1e-5)
    assert q.decision == get_calendar().session_open(DAY)


def test_the_reader_sees_each_sequence_as_one_short_line(full: BaseStore) -> None:
    pool = handmade_pool(
        [[42.2, 42.0, 41.864, 42.28, 42.0], [445138400.0, 1.2e9, 98765.4, 0.0, 12346.0]],
        ["{}", "{}"],
    )
    pool.tickers[:] = ["MO", "MO"]
    pool.indicators[:] = ["high", "volume"]
    pool.days[:] = np.datetime64("2014-07-02")
    pool.movements[:] = ["freeze", "rise"]
    assert pool.brief(0) == "MO 2014-07-02 high: 42.2 42 41.86 42.28 42 -> freeze"
    assert pool.brief(1) == "MO 2014-07-02 volume: 445.1M 1.2B 98770 0 12350 -> rise"
    q = build_query(full, "AAA", DAY)
    closes = " ".join(short_number(c) for c in q.closes)
    assert q.brief == f"AAA {DAY.isoformat()} adj_close: {closes} -> ?"
    messages = movement_messages(q, candidate_block(pool, [0, 1]))
    assert messages[1]["content"] == (
        f"Query sequence:\n{q.brief}\n\nRetrieved sequences:\n{pool.brief(0)}\n"
        f"{pool.brief(1)}\n\nWill the adjusted close of AAA rise or fall on {DAY.isoformat()}? "
        "Answer rise or fall."
    )
    assert movement_messages(q, candidate_block(pool, []))[1]["content"].count("(none)") == 1


def test_candidates_are_windows_of_every_stock_strictly_before_the_decision(
    full: BaseStore,
) -> None:
    q = build_query(full, "AAA", DAY)
    pool = WindowPool.load(full, before=get_calendar().session_close(SESSIONS[-1]))
    rows = pool.eligible(q.decision)
    days = pool.days[rows]
    assert days.max() == np.datetime64(SESSIONS[AT - 1])  # the window of D-1 closed before D opens
    assert (days < np.datetime64(DAY)).all()
    assert (
        pool.available[rows] < np.datetime64(q.decision.astimezone(dt.UTC).replace(tzinfo=None))
    ).all()
    assert set(pool.tickers[rows]) == set(TICKERS)
    assert {"rise", "fall", "freeze"} <= set(pool.movements[rows])  # freeze windows are candidates
    later = np.setdiff1d(np.arange(len(pool)), rows)
    assert len(later) > 0 and (pool.days[later] >= np.datetime64(DAY)).all()


def test_a_sample_is_a_property_of_each_window(full: BaseStore) -> None:
    before = get_calendar().session_open(DAY)
    whole = WindowPool.load(full, before=before)
    half = WindowPool.load(full, before=before, sample=0.5, universe=["BBB"])
    assert 0 < len(half) < len(whole) / 3 + 50
    assert set(half.iris) <= set(whole.iris) and set(half.tickers) == {"BBB"}


# --- retrievers ------------------------------------------------------------------------------


def handmade_pool(values: list[list[float]], texts: list[str]) -> WindowPool:
    n = len(values)
    return WindowPool(
        iris=[f"https://e.org/w/{i}" for i in range(n)],
        tickers=np.array(["X"] * n, dtype=object),
        indicators=np.array(["close"] * n, dtype=object),
        days=np.array(["2019-01-02"] * n, dtype="datetime64[D]"),
        movements=np.array(["rise"] * n, dtype=object),
        available=np.array(["2019-01-02T21:00"] * n, dtype="datetime64[us]"),
        texts=texts,
        values=np.array(values, dtype=float),
    )


def test_dtw_ranks_the_same_shape_first_whatever_its_scale(full: BaseStore) -> None:
    q = build_query(full, "AAA", DAY)
    closes = list(q.closes)
    pool = handmade_pool(
        [closes[::-1], [3 * c + 7 for c in closes], [1.0, 5.0, 1.0, 5.0, 1.0]], ["a", "b", "c"]
    )
    hits = top_k(DTWRetrieval(), q, pool, np.arange(3), 3)
    assert hits[0].row == 1 and hits[0].score == pytest.approx(0.0, abs=1e-9)
    assert hits[1].score < 0 and hits[2].score <= hits[1].score
    assert np.allclose(znorm(np.ones(5)), 0)


def test_bm25_and_random_scores(full: BaseStore) -> None:
    q = build_query(full, "AAA", DAY)
    pool = handmade_pool(
        [[1, 2, 3, 4, 5]] * 3,
        ['{"candidate_stock": "AAA"}', '{"candidate_stock": "ZZZ"}', '{"x": "y"}'],
    )
    hits = top_k(BM25Retrieval(), q, pool, np.arange(3), 1)
    assert hits[0].row == 0 and hits[0].score > 0
    r = RandomRetrieval()
    a, b = r.scores(q, pool, np.arange(3)), r.scores(q, pool, np.arange(3))
    assert (a == b).all() and ((a >= 0) & (a < 1)).all()
    other = build_query(full, "BBB", DAY)
    assert not (r.scores(other, pool, np.arange(3)) == a).all()  # a draw per query
    assert (r.scores(q, pool, np.array([2])) == a[2]).all()  # and per window alone


def test_unknown_retriever_and_missing_models_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"unknown retriever.*'colbert'.*one of none"):
        open_retriever("colbert")
    with pytest.raises(InputError, match=r"finseer.*finkg train-retriever"):
        open_retriever("finseer")


# --- forecasts -------------------------------------------------------------------------------


def test_future_bars_change_neither_candidates_nor_prompt_nor_prediction(
    full: BaseStore, cut: BaseStore
) -> None:
    for retriever in retrievers():
        a = forecast(cut, ticker="AAA", day=DAY, llm=reader(), retriever=retriever, config=CONFIG)
        b = forecast(full, ticker="AAA", day=DAY, llm=reader(), retriever=retriever, config=CONFIG)
        assert [h.iri for h in a.hits] == [h.iri for h in b.hits], retriever.name
        assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits])
        assert a.messages == b.messages and a.logprobs == b.logprobs
        assert len(a.hits) == (0 if retriever.name == "none" else 5)
    q = build_query(full, "AAA", DAY)
    pa = WindowPool.load(cut, before=q.decision)
    pb = WindowPool.load(full, before=get_calendar().session_close(SESSIONS[-1]))
    assert pa.iris == [pb.iris[i] for i in pb.eligible(q.decision)]


def test_the_reader_compares_the_two_labels_and_the_prediction_is_written(
    full: BaseStore,
) -> None:
    store = full
    llm = reader(favour="fall")
    dtw = open_retriever("dtw")
    result = forecast(store, ticker="BBB", day=DAY, llm=llm, retriever=dtw, config=CONFIG)
    assert result.label == "fall" and result.rise_probability < 0.5
    assert len(llm.calls) == 1  # one scoring call, no generation
    text = result.messages[1]["content"]
    assert build_query(store, "BBB", DAY).brief in text
    lines = text.split("Retrieved sequences:\n")[1].split("\n\n")[0].splitlines()
    pool = CONFIG.pool(store, result.query.decision)
    assert lines == [pool.brief(h.row) for h in result.hits]  # one line per window
    rows = list(
        store.select(
            f"""PREFIX fkg: <https://w3id.org/finkg/ns#> PREFIX prov: <http://www.w3.org/ns/prov#>
            SELECT ?label ?p ?asOf ?entity ?rank WHERE {{
            VALUES ?o {{ <{result.prediction.value}> }} GRAPH ?g {{
              ?o a fkg:MovementPrediction ; fkg:predictedLabel ?label ; fkg:riseProbability ?p ;
                 fkg:asOf ?asOf ; prov:wasGeneratedBy ?run .
              ?run prov:qualifiedUsage ?u . ?u prov:entity ?entity ; fkg:rank ?rank }} }}
            ORDER BY ?rank"""  # type: ignore[union-attr]
        )
    )
    assert [r["label"].value for r in rows] == ["fall"] * 5
    assert [r["entity"].value for r in rows] == [h.iri for h in result.hits]
    assert float(rows[0]["p"].value) == pytest.approx(result.rise_probability)
    assert validate_store(store, [store.graphs.outputs]).conforms
    before = len(list(store.quads(store.graphs.outputs)))
    forecast(store, ticker="BBB", day=DAY, llm=reader("fall"), retriever=dtw, config=CONFIG)
    assert len(list(store.quads(store.graphs.outputs))) == before  # a rerun adds nothing
    day = f'"{DAY}"^^<http://www.w3.org/2001/XMLSchema#date>'
    for h in result.hits:
        assert store.ask(
            f"ASK {{ GRAPH ?g {{ <{h.iri}> <{FKG.sessionDate.value}> ?d FILTER(?d < {day}) }} }}"
        )


def test_a_window_on_the_decision_instant_is_never_used(full: BaseStore) -> None:
    q = build_query(full, "CCC", DAY)
    pool = WindowPool.load(full, before=get_calendar().session_close(SESSIONS[-1]))
    late = pool.available.copy()
    pool.available = late
    row = int(np.flatnonzero(pool.days == np.datetime64(SESSIONS[AT - 1]))[0])
    pool.available[row] = np.datetime64(q.decision.astimezone(dt.UTC).replace(tzinfo=None), "us")
    assert row not in set(pool.eligible(q.decision))


@pytest.mark.parametrize(
    ("ticker", "day", "message"),
    [
        ("ZZZ", DAY, "unknown ticker.*'ZZZ'.*ingest its prices"),
        (
            "AAA",
            dt.date(2019, 3, 2),
            "not an XNYS session.*'2019-03-02'.*next session is 2019-03-04",
        ),
        ("AAA", SESSIONS[2], "five sessions before the query date|no bars of AAA"),
    ],
)
def test_bad_queries_name_the_value_and_the_fix(
    full: BaseStore, ticker: str, day: dt.date, message: str
) -> None:
    with pytest.raises(InputError, match=message) as e:
        build_query(full, ticker, day)
    assert e.value.exit_code == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--date", "2019-03-29T10:00"], "session date is YYYY-MM-DD"),
        (["--date", "2019-13-01"], "not a date"),
        (["--date", "2019-03-29", "--retriever", "colbert"], "unknown retriever"),
        (["--date", "2019-03-29", "--sample", "0"], "fraction"),
    ],
)
def test_cli_bad_inputs_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hash")
    result = CliRunner().invoke(
        cli, ["forecast", "--ticker", "AAA", *args, "--store", str(tmp_path / "s")], obj=settings
    )
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_label_probabilities_are_a_softmax() -> None:
    from finkg.tasks.movement.forecast import label_probabilities

    p = label_probabilities({"rise": -0.1, "fall": -2.0})
    assert p["rise"] + p["fall"] == pytest.approx(1.0)
    assert p["rise"] == pytest.approx(1 / (1 + math.exp(-1.9)))


def test_predict_without_writing_reads_the_same(full: BaseStore) -> None:
    q = build_query(full, "AAA", DAY)
    pool = WindowPool.load(full, before=q.decision)
    f = predict(
        full, q, pool, llm=reader(), retriever=open_retriever("bm25"), config=CONFIG, write=False
    )
    assert f.prediction is None and f.label == "rise" and len(f.hits) == 5


@pytest.mark.model
def test_a_packaged_reader_scores_both_labels(full: BaseStore, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test does)")
    from finkg.reader.llm import ReaderError
    from finkg.reader.transport.llamacpp import LlamaCpp
    from finkg.reader.transport.models import assemble

    try:
        path = assemble("smollm2-135m", tmp_path)
    except ReaderError as e:
        pytest.skip(str(e))
    llm = LlamaCpp(path, model_id="smollm2-135m", n_ctx=2048, threads=THREADS)
    dtw = open_retriever("dtw")
    one = MovementConfig(k=1, sample=1.0)
    f = forecast(full, ticker="CCC", day=DAY, llm=llm, retriever=dtw, config=one)
    assert set(f.logprobs) == {"rise", "fall"} and all(v < 0 for v in f.logprobs.values())
    assert f.label == max(f.logprobs, key=f.logprobs.get) and f.prediction is not None
    again = forecast(full, ticker="CCC", day=DAY, llm=llm, retriever=dtw, config=one)
    assert again.logprobs == f.logprobs  # a frozen reader reads the same prompt the same way


def test_a_stored_decision_head_decides_and_the_forecast_says_which(tmp_path: Path) -> None:
    from finkg.tasks.head_records import write_head
    from finkg.tasks.heads import Matured, fit_as_of

    store = filled(market(tmp_path))
    decision = get_calendar().session_open(DAY)
    # earlier forecasts of a reader that favoured "fall" by about 1.3 nats, half of them wrong
    history = [
        Matured(
            decision - dt.timedelta(days=30 - i), {"rise": -1.5, "fall": -0.2}, (0.0, 0.0), label
        )
        for i, label in enumerate(["rise", "fall"] * 10)
    ]
    state = fit_as_of(
        history, as_of=decision - dt.timedelta(days=1), kind="prior", classes=("rise", "fall")
    )
    head = write_head(store, "movement", state)
    later = fit_as_of(
        [*history, Matured(decision, {"rise": 0.0, "fall": -9.0}, (0.0, 0.0), "rise")],
        as_of=decision + dt.timedelta(hours=8),
        kind="prior",
        classes=("rise", "fall"),
    )
    write_head(store, "movement", later)  # fitted after the decision: never used for it
    dtw = open_retriever("dtw")
    raw = forecast(
        store, ticker="BBB", day=DAY, llm=reader("fall"), retriever=dtw, config=CONFIG, head="none"
    )
    decided = forecast(
        store, ticker="BBB", day=DAY, llm=reader("fall"), retriever=dtw, config=CONFIG
    )
    assert raw.label == "fall" and raw.head is None
    assert decided.head is not None and decided.head.iri == head
    assert decided.head.state.sha256 == state.sha256
    # the head removes the reader's preference for "fall": what is left favours "rise"
    assert decided.label == "rise" == state.decide(decided.logprobs, query_features(decided.query))
    output = decided.prediction.value  # type: ignore[union-attr]
    assert store.ask(f"ASK {{ GRAPH ?g {{ <{output}> <{FKG.decidedBy.value}> <{head.value}> }} }}")
    assert validate_store(store, [store.graphs.outputs, store.graphs.memory]).conforms
    with pytest.raises(InputError, match="unknown decision head"):
        forecast(
            store, ticker="BBB", day=DAY, llm=reader(), retriever=dtw, config=CONFIG, head="svm"
        )
