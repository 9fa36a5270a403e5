"""Concurrent impact runs (issue 29): the anchors of one decision session are read together,
then fed back and written in time order, so a concurrent run writes the same predictions,
runs, memory and decision-head state as a sequential one, and reports the same summary. Shown
with a fake reader that answers from a thread pool out of order, and with the endpoint reader
against finkg's stub server; a request that fails for good stops the run with its run named
and nothing half-written."""

from __future__ import annotations

import datetime as dt
import random
import shutil
import threading
import time
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from finkg.config import Settings
from finkg.kg.store import open_store
from finkg.ontology.terms import FKG, PROV
from finkg.reader.llm import ScriptedLLM
from finkg.reader.rules import respond
from finkg.reader.rules import score as rule_score
from finkg.reader.transport.endpoint import RequestFailed
from finkg.reader.transport.openai_http import OpenAICompatible
from finkg.reader.transport.stub import StubServer
from finkg.tasks.impact.job import run_job
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.impact.prequential import decision_sessions
from finkg.tasks.impact.scoring import CLASSES
from finkg.tasks.span import Span
from tests.readers import THREADS
from tests.test_impact_scored import PROXY, SPEC, TEST, VALIDATION, _at, biased_scores
from tests.test_remote_reader import TEMPLATE
from tests.worlds import build, load

VARIANTS = ("static", "cited")
SHORT = Span(_at(185), _at(200))  # 15 sessions: labels mature and feed back during the run
# wall-clock stamps: when a run started and ended, how long its reads took, when a record
# was written; and the commits (`/commit/` IRIs) that recorded the writes
CLOCK = {PROV.startedAtTime, PROV.endedAtTime, PROV.generatedAtTime, FKG.readerSeconds}


def citing_scores(messages, options):  # type: ignore[no-untyped-def]
    """The biased direction scores, and the rule analyst's own citation (the id it follows
    rated highest), so that the memory learns during a run without a citation head."""
    if set(options) == set(CLASSES):
        return biased_scores(messages, options)
    return rule_score(messages, options)


class ThreadedFake(ScriptedLLM):
    """The biased rule analyst, answering each read after a random pause from whichever
    thread asks, so reads finish out of order; it counts how many it served at once."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(respond=respond, scores=citing_scores, model_id="threaded-fake")
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._random = random.Random(0)
        self.in_flight = 0
        self.peak = 0

    def score(self, messages, options):  # type: ignore[no-untyped-def]
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            pause = self._random.random() * 0.004
        try:
            time.sleep(pause)
            return super().score(messages, options)
        finally:
            with self._lock:
                self.in_flight -= 1


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("concurrent")
    files = build(root / "files", SPEC)
    with open_store(root / "store", settings=Settings(home=root / "h", embedder="hash")) as s:
        load(files, s)
    return root


def _run(root: Path, name: str, llm, *, head: str = "prior"):  # type: ignore[no-untyped-def]
    """Both variants over the short span, on a copy of the world's store with a reply cache
    of its own; the run's summaries and what it wrote."""
    settings = Settings(home=root / f"home-{name}", embedder="hash", threads=THREADS)
    shutil.copytree(root / "store", root / name)
    config = ImpactConfig(proxy=PROXY, head=head)
    with open_store(root / name, settings=settings) as store:
        _, runs = run_job(
            store, settings, test=SHORT, validation_span=VALIDATION,
            variants=list(VARIANTS), config=config, llm=llm,
        )  # fmt: skip
        return runs, _state(store)


def _state(store) -> set:  # type: ignore[no-untyped-def]
    """The outputs and memory graphs, without wall-clock stamps and commit links."""
    out = set()
    for graph in (store.graphs.outputs, store.graphs.memory):
        for q in store.quads(graph):
            if q.predicate in CLOCK or "/commit/" in q.subject.value:
                continue
            if isinstance(q.object, NamedNode) and "/commit/" in q.object.value:
                continue
            out.add(q)
    return out


def _summary(runs) -> dict:  # type: ignore[no-untyped-def]
    return {
        name: (s.predictions, s.json_invalid, s.cached, s.reads, s.head_items, s.feedback)
        for name, s in runs.items()
    }


def test_sessions_hold_only_anchors_no_close_separates(world: Path) -> None:
    from finkg.kg.calendar import get_calendar
    from finkg.tasks.impact.anchors import anchors

    calendar = get_calendar()
    with open_store(world / "store", settings=Settings(home=world / "h", embedder="hash")) as s:
        found = anchors(s, start=TEST.start, end=TEST.end, calendar=calendar)  # the long one
    ordered = sorted(found, key=lambda a: (a.decision_time, a.news.value))
    sessions = decision_sessions(ordered, calendar)
    assert [a for part in sessions for a in part] == ordered
    assert any(len(part) > 1 for part in sessions)  # something to read together
    for part in sessions:
        first, last = part[0].decision_time, part[-1].decision_time
        day = dt.timedelta(days=1)
        closes = [
            calendar.session_close(d)
            for d in calendar.sessions(first.date() - day, last.date() + day)
        ]
        assert not any(first < c <= last for c in closes)


def test_a_concurrent_run_writes_what_a_sequential_one_writes(world: Path) -> None:
    one_runs, one = _run(world, "fake-1", ThreadedFake(1))
    fake = ThreadedFake(8)
    many_runs, many = _run(world, "fake-8", fake)
    assert fake.peak > 1  # reads really overlapped
    assert _summary(many_runs) == _summary(one_runs)
    assert many_runs["cited"].feedback.updates > 0  # the memory learned during the run
    assert many_runs["static"].head_items > 0  # and the heads
    assert one == many
    assert not any(q.predicate == FKG.failedRequest for q in one)


def test_through_the_endpoint_reader_too(world: Path) -> None:
    with StubServer(latency_s=0.002) as stub:
        seq = OpenAICompatible(stub.url, model="stub", template=TEMPLATE, concurrency=1)
        one_runs, one = _run(world, "stub-1", seq)
        par = OpenAICompatible(stub.url, model="stub", template=TEMPLATE, concurrency=16)
        many_runs, many = _run(world, "stub-16", par)
        assert stub.peak > 1
    assert _summary(many_runs) == _summary(one_runs)
    assert one == many
    # what the reads cost is on every run: requests answered (none for a cache hit), none
    # retried, the tokens the server counted
    requests = [int(q.object.value) for q in many if q.predicate == FKG.requests]
    assert len(requests) >= many_runs["static"].predictions + many_runs["cited"].predictions
    assert min(requests) >= 0 and max(requests) > 0
    assert {q.object.value for q in many if q.predicate == FKG.retries} == {"0"}


def test_a_request_failing_for_good_stops_the_run_with_its_run_named(world: Path) -> None:
    settings = Settings(home=world / "home-fail", embedder="hash", threads=THREADS)
    shutil.copytree(world / "store", world / "fail")
    config = ImpactConfig(proxy=PROXY, head="prior")
    # 200 requests answer, then every one fails: a read runs out of retries mid-run
    with StubServer(failures=[None] * 200 + [503] * 10_000) as stub:
        llm = OpenAICompatible(
            stub.url, model="stub", template=TEMPLATE, concurrency=8, retries=1, backoff_s=0.0
        )
        with open_store(world / "fail", settings=settings) as store:
            with pytest.raises(RequestFailed) as caught:
                run_job(
                    store, settings, test=SHORT, validation_span=VALIDATION,
                    variants=list(VARIANTS), config=config, llm=llm,
                )  # fmt: skip
            rows = list(
                store.select(
                    """PREFIX fkg: <https://w3id.org/finkg/ns#>
                    SELECT ?run ?failed ?requests WHERE {
                      ?run a fkg:Run ; fkg:failedRequest ?failed ; fkg:requests ?requests .
                      FILTER NOT EXISTS { ?output <http://www.w3.org/ns/prov#wasGeneratedBy> ?run }
                    }""",
                    default_graphs="union",
                )
            )
            assert len({r["run"] for r in rows}) == 1  # the run stopped at its first failure
            assert str(caught.value) in {r["failed"].value for r in rows}
            assert f"POST {stub.url}/v1/completions failed after 2 attempt(s)" in str(caught.value)
            # every prediction written is whole: its three signals, its run with its cost
            whole = store.select(
                """PREFIX fkg: <https://w3id.org/finkg/ns#>
                PREFIX prov: <http://www.w3.org/ns/prov#>
                SELECT ?p (COUNT(DISTINCT ?signal) AS ?n) WHERE {
                  ?p a fkg:ImpactPrediction ; fkg:signal ?signal ; prov:wasGeneratedBy ?run .
                  ?run fkg:requests ?r ; fkg:retries ?t ; fkg:readerSeconds ?s .
                } GROUP BY ?p""",
                default_graphs="union",
            )
            made = store.select(
                "SELECT ?p WHERE { ?p a <https://w3id.org/finkg/ns#ImpactPrediction> }",
                default_graphs="union",
            )
            assert len(list(made)) > 0
            assert sorted(int(r["n"].value) for r in whole) == [3] * len(list(made))
