"""Impact decisions by scoring options through decision heads (issue 27 items 1-2), on a small
demo world: a biased reader's raw argmax is constant, its head's is not; every scored signal
keeps the options' probabilities and names the head that decided; heads start from the
stored validation decisions, and a run resumed in parts decides as one run does."""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from finkg import queries
from finkg.config import Settings
from finkg.demo.world import WorldSpec
from finkg.kg.calendar import get_calendar
from finkg.kg.store import open_store
from finkg.ontology.terms import FKG
from finkg.reader.llm import ScriptedLLM
from finkg.reader.rules import respond, rule_of
from finkg.reader.rules import score as rule_score
from finkg.tasks.impact.history import head_history, scored_items
from finkg.tasks.impact.job import Span, run_job
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.impact.scoring import CLASSES, FEATURES
from tests.worlds import build, load

NY = ZoneInfo("America/New_York")
CAL = get_calendar()
SPEC = WorldSpec(tickers=4, sessions=230, users=1, seed=3)
DAYS = CAL.sessions(SPEC.start, SPEC.start + dt.timedelta(days=400))[: SPEC.sessions]
PROXY = "ZQMX"


def _at(i: int) -> dt.datetime:
    return dt.datetime.combine(DAYS[i], dt.time(0), NY)


VALIDATION = Span(_at(150), _at(185))
TEST = Span(_at(185), _at(215))
# the rule's direction raises its option by 2 nats; "down" starts 2.8 nats above the others:
# the raw argmax says "down" whatever the rule says
BIAS = {"up": -3.0, "neutral": -3.0, "down": -0.2}
OPTION = {1: "up", 0: "neutral", -1: "down"}


def biased_scores(messages, options):  # type: ignore[no-untyped-def]
    if set(options) != set(BIAS):  # the citation question: the rule analyst's answer
        return rule_score(messages, options)
    direction, _, _ = rule_of(messages[-1]["content"])
    return {o: BIAS[o] + (2.0 if o == OPTION[direction] else 0.0) for o in options}


def biased() -> ScriptedLLM:
    return ScriptedLLM(respond=respond, scores=biased_scores, model_id="biased-rule-analyst")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("scored")
    files = build(root / "files", SPEC)
    settings = Settings(home=root / "home", embedder="hash", threads=2)
    store = open_store(root / "store", settings=settings)
    load(files, store)
    store.close()
    return root, settings


def _run(root: Path, settings: Settings, name: str, head: str, spans=(TEST,), variants=("static",)):  # type: ignore[no-untyped-def]
    """Copy the world's store to `name` and run the scored job over each span in turn (once
    per module: a test that needs the same run reuses it)."""
    if (root / name).exists():
        return root / name
    shutil.copytree(root / "store", root / name)
    config = ImpactConfig(proxy=PROXY, head=head)
    with open_store(root / name, settings=settings) as store:
        for span in spans:
            run_job(
                store,
                settings,
                test=span,
                validation_span=VALIDATION,
                variants=list(variants),
                config=config,
                llm=biased(),
            )
    return root / name


def _signals(path: Path, settings: Settings) -> list[dict]:
    with open_store(path, settings=settings) as store:
        rows = queries.run(
            store,
            "impact_scored_signals",
            {"firstDay": TEST.first_day, "lastDay": TEST.last_day},
        )
        out = []
        for r in rows:
            signal = {
                "prediction": r["prediction"].value,
                "horizon": int(r["horizon"].value),
                "value": int(r["value"].value),
                "p": [float(r[k].value) for k in ("up", "neutral", "down")],
                "parameters": json.loads(r["parameters"].value),
            }
            out.append(signal)
        return out


def test_the_raw_argmax_of_a_biased_reader_is_constant_and_its_head_is_not(world) -> None:
    root, settings = world
    raw = _signals(_run(root, settings, "raw", "none"), settings)
    prior = _signals(_run(root, settings, "prior", "prior"), settings)
    assert len(raw) == len(prior) > 60  # three horizons of 20+ anchors
    assert {s["value"] for s in raw} == {-1}
    mix = {v: sum(s["value"] == v for s in prior) for v in (-1, 0, 1)}
    assert mix[0] > 0 and mix[-1] > 0 and mix[0] + mix[1] > len(prior) / 3, mix
    # the same scores under both heads: the head decides, the reader's probabilities stay
    assert [s["p"] for s in raw] == [s["p"] for s in prior]
    for s in prior:
        assert math.isclose(sum(s["p"]), 1.0, abs_tol=1e-12)
        params = s["parameters"]
        assert params["reply"] == "scored" and params["head"] == "prior"
        assert set(params["features"]) == set(FEATURES)
        assert set(params["logprobs"][f"{s['horizon']}D"]) == set(CLASSES)


def test_each_scored_signal_names_the_head_that_decided_it(world) -> None:
    root, settings = world
    with open_store(root / "prior", settings=settings) as store:
        rows = list(
            store.select(
                """PREFIX fkg: <https://w3id.org/finkg/ns#>
                SELECT ?signal ?task ?n ?asOf ?decision WHERE {
                  ?p fkg:signal ?signal ; fkg:asOf ?decision .
                  ?signal fkg:decidedBy ?head .
                  ?head a fkg:DecisionHead ; fkg:task ?task ; fkg:sampleSize ?n ;
                        fkg:asOf ?asOf .
                }""",
                default_graphs="union",
            )
        )
        heads = {
            q.subject for q in store.quads(store.graphs.memory) if q.object == FKG.DecisionHead
        }
    assert len(rows) > 60 and len(heads) > 3
    assert {r["task"].value for r in rows} == {
        "impact-1@static",
        "impact-3@static",
        "impact-5@static",
    }
    for r in rows:  # fitted at or before the decision it made
        decided = dt.datetime.fromisoformat(r["decision"].value)
        assert dt.datetime.fromisoformat(r["asOf"].value) <= decided
    assert max(int(r["n"].value) for r in rows) > 20  # later decisions learnt from labels


def test_heads_start_from_the_stored_validation_decisions(world) -> None:
    root, settings = world
    path = _run(root, settings, "validated", "prior", spans=(VALIDATION, TEST))
    with open_store(path, settings=settings) as store:
        history = head_history(
            store,
            first_day=VALIDATION.first_day,
            last_day=VALIDATION.last_day,
            proxy=PROXY,
            calendar=CAL,
        )
        items = scored_items(
            store, None, first_day=TEST.first_day, last_day=TEST.last_day, proxy=PROXY, calendar=CAL
        )
    assert min(len(v) for v in history.values()) > 20
    assert all(m.label in CLASSES for v in history.values() for m in v)
    first = min(i.decision for i in items)
    first_heads = [i for i in items if i.decision == first]
    # the validation decisions matured before the test's first decision: its head used them
    with open_store(path, settings=settings) as store:
        query = (
            "PREFIX fkg: <https://w3id.org/finkg/ns#> SELECT ?n WHERE { "
            f"<{first_heads[0].prediction}> fkg:signal ?s . "
            "?s fkg:decidedBy ?h . ?h fkg:sampleSize ?n . }"
        )
        n = [int(r["n"].value) for r in store.select(query, default_graphs="union")]
    assert n and min(n) >= 20


def test_a_scored_run_resumed_in_halves_decides_as_one_run_does(world) -> None:
    root, settings = world
    middle = _at(200)
    whole = _signals(_run(root, settings, "prior", "prior", spans=(TEST,)), settings)
    halves = _signals(
        _run(
            root, settings, "two", "prior", spans=(Span(TEST.start, middle), Span(middle, TEST.end))
        ),
        settings,
    )
    assert len(whole) > 60
    strip = [{k: v for k, v in s.items() if k != "parameters"} for s in whole]
    assert strip == [{k: v for k, v in s.items() if k != "parameters"} for s in halves]
    assert [s["parameters"]["heads"] for s in whole] == [s["parameters"]["heads"] for s in halves]
