"""The event-impact job (paper 000) on a small demo world: variants, feedback, backtest, CLI."""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.config import Settings
from finkg.demo.world import WorldSpec
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.store import open_store
from finkg.ontology.terms import FKG
from finkg.reader.llm import ScriptedLLM
from finkg.reader.rules import respond as rule_respond
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.index.live import LiveVectors
from finkg.tasks.impact.anchors import anchors
from finkg.tasks.impact.job import backtest_job, feedback_job, memory_of, run_job
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.span import Span
from tests.readers import SMALL_READER, THREADS
from tests.worlds import analyst, build, load

NY = ZoneInfo("America/New_York")
CAL = get_calendar()
SPEC = WorldSpec(tickers=4, sessions=230, users=1, seed=3)
DAYS = CAL.sessions(SPEC.start, SPEC.start + dt.timedelta(days=400))[: SPEC.sessions]


def _at(i: int) -> dt.datetime:
    return dt.datetime.combine(DAYS[i], dt.time(0), NY)


TEST = Span(_at(185), _at(215))
VALIDATION = Span(_at(150), _at(185))
CONFIG = ImpactConfig(proxy="ZQMX")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("impact")
    files = build(root / "files", SPEC)
    settings = Settings(home=root / "home", embedder="hash", threads=THREADS)
    store = open_store(root / "store", settings=settings)
    load(files, store)
    store.close()
    return root, settings


def test_variants_run_feed_back_and_backtest(world) -> None:
    root, settings = world
    with open_store(root / "store", settings=settings) as store:
        validated, runs = run_job(
            store,
            settings,
            test=TEST,
            validation_span=VALIDATION,
            variants=["static", "cited"],
            config=CONFIG,
            llm=analyst(),
        )
        assert validated.labels > 50 and set(validated.weights[1]) == {-1, 0, 1}
        n = runs["static"].predictions
        assert n > 20 and runs["cited"].predictions == n
        assert runs["static"].feedback.outcomes == 0  # no memory, nothing to feed back
        assert runs["cited"].feedback.outcomes > 0
        again = feedback_job(
            store,
            as_of=TEST.end + dt.timedelta(days=14),
            since=TEST.first_day,
            variants=["cited"],
            validation_span=VALIDATION,
            proxy="ZQMX",
        )["cited"]
        generation = store.generation()
        twice = feedback_job(
            store,
            as_of=TEST.end + dt.timedelta(days=14),
            since=TEST.first_day,
            variants=["cited"],
            validation_span=VALIDATION,
            proxy="ZQMX",
        )["cited"]
        assert again.outcomes >= runs["cited"].feedback.outcomes  # the last ones matured later
        assert twice.outcomes == again.outcomes
        assert store.generation() == generation + 1  # the same quads again: nothing new stored
        in_span = [
            a
            for a in anchors(store, start=TEST.start, end=TEST.end, calendar=CAL)
            if a.prediction_day <= TEST.last_day  # the backtest selects by prediction day
        ]
        png = root / "equity.png"
        results, benchmarks = backtest_job(
            store,
            test=TEST,
            variants=["static", "cited"],
            proxy="ZQMX",
            png=png,
            vectors=LiveVectors(store, HashEmbedder(dim=384)),
        )
    static, cited = results
    assert static.predictions == cited.predictions == len(in_span) > n - 3
    assert static.labelled > 0 and 0 <= static.macro_f1_all <= 1
    assert not math.isnan(static.citation_rate)
    assert static.portfolio is not None and len(static.portfolio.daily) > 20
    assert [b.name for b in benchmarks] == ["ZQMX", "equal-weight universe"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    for r in results:  # the context every run read: nothing from its future
        assert r.audit.predictions == r.predictions and r.audit.passages > r.predictions
        assert r.audit.future == 0


def test_unknown_variants_are_refused_before_any_work(world) -> None:
    root, settings = world
    with open_store(root / "store", settings=settings) as store:
        with pytest.raises(InputError, match="variant"):
            memory_of(store, "shuffled-labels:x")
        with pytest.raises(InputError, match="everything"):
            run_job(
                store,
                settings,
                test=TEST,
                validation_span=VALIDATION,
                variants=["everything"],
                config=CONFIG,
                llm=analyst(),
            )


def _cli(root: Path, settings: Settings, *args: str):
    env = {
        "FINKG_HOME": str(settings.home),
        "FINKG_EMBEDDER": "hash",
        "FINKG_THREADS": str(THREADS),
        "FINKG_READER": SMALL_READER,
    }
    return CliRunner().invoke(cli, [*args, "--store", str(root / "store")], env=env)


def test_the_cli_refuses_bad_dates_and_variants(world) -> None:
    root, settings = world
    bad = _cli(root, settings, "impact", "run", "--from", "2019-13-01", "--to", "2019-12-01")
    assert bad.exit_code == 2 and "2019-13-01" in bad.output
    bad = _cli(
        root,
        settings,
        "impact",
        "run",
        "--from",
        str(DAYS[190]),
        "--to",
        str(DAYS[191]),
        "--variant",
        "cited,bogus",
    )
    assert bad.exit_code == 2 and "bogus" in bad.output
    bad = _cli(root, settings, "impact", "run", "--from", str(DAYS[190]), "--to",
               str(DAYS[191]), "--peer-share", "1.5")  # fmt: skip
    assert bad.exit_code == 2 and "peer_share" in bad.output and "1.5" in bad.output


@pytest.mark.model
def test_the_cli_runs_and_backtests_with_a_packaged_reader(world) -> None:
    root, settings = world
    first, last = str(DAYS[200]), str(DAYS[202])
    ran = _cli(
        root,
        settings,
        "impact",
        "run",
        "--from",
        first,
        "--to",
        last,
        "--variant",
        "static",
        "--validation",
        f"{DAYS[150]}:{DAYS[184]}",
        "--proxy",
        "ZQMX",
        "--peer-share",
        "0",
    )
    assert ran.exit_code == 0, ran.output
    assert "static: " in ran.output and " predictions" in ran.output
    with open_store(root / "store", settings=settings) as store:
        used = {
            json.loads(r["p"].value).get("peer_share")
            for r in store.select(
                f"SELECT ?p WHERE {{ GRAPH ?g {{ ?run <{FKG.parameters.value}> ?p }} }}"
            )
        }
    assert 0.0 in used  # the pool the runs used, as asked
    report = root / "report.md"
    tested = _cli(
        root,
        settings,
        "impact",
        "backtest",
        "--from",
        first,
        "--to",
        last,
        "--variant",
        "static",
        "--proxy",
        "ZQMX",
        "--report",
        str(report),
    )
    assert tested.exit_code == 0, tested.output
    text = report.read_text()
    assert "Frozen + No Memory" in text and "ZQMX" in text


def test_a_backtest_span_may_end_on_a_weekend(world) -> None:
    """Regression: a span whose last day is not a session failed in the portfolio step."""
    root, settings = world
    saturday = next(
        DAYS[i] + dt.timedelta(days=d)
        for i in range(190, 215)
        for d in (1, 2, 3)
        if (DAYS[i] + dt.timedelta(days=d)).weekday() == 5
    )
    span = Span(_at(190), dt.datetime.combine(saturday + dt.timedelta(days=1), dt.time(0), NY))
    assert not CAL.is_session(span.last_day)
    with open_store(root / "store", settings=settings) as store:
        run_job(
            store,
            settings,
            test=span,
            validation_span=VALIDATION,
            variants=["static"],
            config=CONFIG,
            llm=analyst(),
        )
        results, _ = backtest_job(
            store,
            test=span,
            variants=["static"],
            proxy="ZQMX",
            png=None,
            vectors=LiveVectors(store, HashEmbedder(dim=384)),
        )
    assert results[0].predictions > 0 and results[0].portfolio is not None


def _compact(messages) -> str:  # type: ignore[no-untyped-def]
    """The rule analyst's reply in the compact form: its signals, one citation list."""
    full = json.loads(rule_respond(messages))["signals"]
    return json.dumps(
        {h: full[h]["signal"] for h in ("1D", "3D", "5D")} | {"ids": full["1D"]["ids"]}
    )


def _reasons(store) -> int:  # type: ignore[no-untyped-def]
    return sum(q.predicate == FKG.reason for q in store.quads(store.graphs.outputs))


def test_variants_run_together_as_each_would_alone_with_compact_replies(world) -> None:
    """One pass over the anchors with several variants (each anchor's reads back to back)
    gives every variant exactly what a run of its own gives: each memory sees only its own
    matured feedback. Compact replies are stored as full predictions: every horizon cites
    the reply's list, and no reasons are written."""
    root, settings = world
    config = ImpactConfig(proxy="ZQMX", reply="compact")
    results = {}
    for name, variants in (("together", ["static", "cited"]), ("alone", ["cited"])):
        shutil.copytree(root / "store", root / name)
        llm = ScriptedLLM(respond=_compact, model_id="rule-analyst-compact")
        with open_store(root / name, settings=settings) as store:
            reasons = _reasons(store)
            _, runs = run_job(
                store,
                settings,
                test=TEST,
                validation_span=VALIDATION,
                variants=variants,
                config=config,
                llm=llm,
            )
            assert runs["cited"].json_invalid == 0 and runs["cited"].feedback.updates > 0
            results[name], _ = backtest_job(
                store,
                test=TEST,
                variants=["cited"],
                proxy="ZQMX",
                png=None,
                vectors=LiveVectors(store, HashEmbedder(dim=384)),
            )
            assert _reasons(store) == reasons  # compact replies carry none
    together, alone = results["together"][0], results["alone"][0]
    assert together.predictions == alone.predictions > 20
    assert together.citation_rate > 0
    same = ("macro_f1", "non_neutral_f1", "rank_ic", "citation_rate")  # repr: nan == nan
    assert [repr(getattr(together, f)) for f in same] == [repr(getattr(alone, f)) for f in same]


def test_a_run_resumed_in_two_parts_feeds_back_what_one_run_does(world) -> None:
    """The prequential runner names the predictions it feeds back instead of searching the
    store for them; predictions an earlier run left, still maturing when the next run
    starts, must be fed back all the same: two runs over the halves of the test span end
    with the outcomes and the memory one run over the whole span writes."""
    root, settings = world
    config = ImpactConfig(proxy="ZQMX", reply="compact")
    middle = _at(200)
    memories = {}
    for name, spans in (
        ("whole", [TEST]),
        ("halves", [Span(TEST.start, middle), Span(middle, TEST.end)]),
    ):
        shutil.copytree(root / "store", root / name)
        llm = ScriptedLLM(respond=_compact, model_id="rule-analyst-compact")
        with open_store(root / name, settings=settings) as store:
            for span in spans:
                run_job(
                    store,
                    settings,
                    test=span,
                    validation_span=VALIDATION,
                    variants=["cited"],
                    config=config,
                    llm=llm,
                )
            outcomes = {
                q.subject for q in store.quads(store.graphs.outputs) if q.object == FKG.Outcome
            }
            memories[name] = (outcomes, set(store.quads(store.graphs.memory)))
    assert len(memories["whole"][0]) > 20 and len(memories["whole"][1]) > 50
    assert memories["halves"] == memories["whole"]
