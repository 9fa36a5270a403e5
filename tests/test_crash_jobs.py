"""Crash safety of the event-impact job: SIGKILL while it writes a prediction (an output
with its run) or a feedback commit (outcomes with the memory updates they make). The store
opens, no commit is half visible, and running the job again ends where an uninterrupted
run ends: the same predictions, outcomes and memory, nothing twice."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from finkg.config import Settings
from finkg.demo.world import WorldSpec
from finkg.kg.calendar import get_calendar
from finkg.kg.store import open_store
from tests.worlds import build, load

ROOT = Path(__file__).resolve().parents[1]
SPEC = WorldSpec(tickers=4, sessions=200, users=1, seed=3)
DAYS = get_calendar().sessions(SPEC.start, SPEC.start + dt.timedelta(days=400))[: SPEC.sessions]
NY = ZoneInfo("America/New_York")

CHILD = textwrap.dedent(
    """
    import datetime as dt, sys
    from pathlib import Path
    from finkg.config import Settings
    from finkg.kg.store import open_store
    from finkg.tasks.impact.predict import ImpactConfig
    from finkg.tasks.impact.job import run_job
    from finkg.tasks.span import Span
    from tests.worlds import analyst

    location, home = Path(sys.argv[1]), Path(sys.argv[2])
    t = [dt.datetime.fromisoformat(a) for a in sys.argv[3:7]]
    settings = Settings(home=home, embedder="hash", threads=1)
    store = open_store(location, settings=settings)
    write = store.write

    def announced(**kw):
        print("begin", kw["note"].split()[0], flush=True)
        done = write(**kw)
        print("end", kw["note"].split()[0], flush=True)
        return done

    store.write = announced
    run_job(store, settings, test=Span(t[0], t[1]), validation_span=Span(t[2], t[3]),
            variants=["cited"], config=ImpactConfig(proxy="ZQMX"), llm=analyst())
    store.close()
    print("done", flush=True)
    """
)


def _at(i: int) -> str:
    return dt.datetime.combine(DAYS[i], dt.time(0), NY).isoformat()


Kill = tuple[str, str, int]  # ("begin" | "end", write kind, n)


def _run(location: Path, home: Path, *, kill: Kill | None = None) -> tuple[int, dict]:
    """Run the job; with `kill=(moment, kind, n)`, SIGKILL it as its n-th `kind` write
    begins (the kill lands inside the write) or right after it ends (before the next)."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(location), str(home), *map(_at, (170, 186, 140, 170))],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    writes: dict[str, int] = {}
    assert child.stdout is not None
    for line in child.stdout:
        moment, _, kind = line.strip().partition(" ")
        if moment not in ("begin", "end"):
            continue
        writes[kind] = writes.get(kind, 0) + (moment == "begin")
        if kill is not None and (moment, kind, writes[kind]) == kill:
            os.kill(child.pid, signal.SIGKILL)
            break
    child.wait(timeout=300)
    return child.returncode, writes


WALL_CLOCK = (
    "http://www.w3.org/ns/prov#startedAtTime",
    "http://www.w3.org/ns/prov#endedAtTime",
    "https://w3id.org/finkg/ns#readerSeconds",  # a run's reader time, measured by the clock
)
Subjects = dict[str, frozenset[tuple[str, str]]]


def _subjects(location: Path, settings: Settings) -> dict[str, Subjects]:
    """The job's graphs (outputs, memory) as subject -> its (predicate, object) pairs,
    leaving out the wall-clock times of runs and their reader seconds, which no two runs
    share."""
    with open_store(location, settings=settings, read_only=True) as s:
        out: dict[str, Subjects] = {}
        for name in ("outputs", "memory"):
            grouped: dict[str, set[tuple[str, str]]] = {}
            for q in s.quads(getattr(s.graphs, name)):
                if q.predicate.value not in WALL_CLOCK:
                    grouped.setdefault(str(q.subject), set()).add((str(q.predicate), str(q.object)))
            out[name] = {k: frozenset(v) for k, v in grouped.items()}
        return out


def _commits(location: Path, settings: Settings, label: str) -> int:
    with open_store(location, settings=settings, read_only=True) as s:
        rows = s.select(
            f"SELECT (COUNT(?c) AS ?n) WHERE {{ GRAPH <{s.graphs.audit.value}> {{ "
            "?c <http://www.w3.org/2000/01/rdf-schema#label> ?l "
            f'FILTER(STRSTARTS(?l, "{label} ")) }} }}'
        )
        return int(rows.rows[0][0].value)  # type: ignore[union-attr]


def _typed(subjects: Subjects, cls: str) -> set[str]:
    kind = (
        "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
        f"<https://w3id.org/finkg/ns#{cls}>",
    )
    return {s for s, pairs in subjects.items() if kind in pairs}


def _links(subjects: Subjects, nodes: set[str], predicate: str) -> set[str]:
    p = f"<https://w3id.org/finkg/ns#{predicate}>"
    return {o for s in nodes for (q, o) in subjects[s] if q == p}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings, dict[str, Subjects]]:
    """A loaded demo world, and what an uninterrupted job run leaves in it."""
    root = tmp_path_factory.mktemp("crash-jobs")
    settings = Settings(home=root / "home", embedder="hash", threads=1)
    store = open_store(root / "base", settings=settings)
    load(build(root / "files", SPEC), store)
    store.close()
    shutil.copytree(root / "base", root / "reference")
    assert _run(root / "reference", settings.home)[0] == 0
    return root, settings, _subjects(root / "reference", settings)


KILLS = {
    "in-output": ("begin", "impact", 6),
    "after-output": ("end", "impact", 6),
    "in-feedback": ("begin", "feedback", 4),
    "after-feedback": ("end", "feedback", 4),
}


@pytest.mark.parametrize("kill", KILLS.values(), ids=KILLS.keys())
def test_sigkill_in_a_job_write_leaves_whole_commits_and_resumes(world, kill, tmp_path) -> None:
    root, settings, reference = world
    location = tmp_path / "store"
    shutil.copytree(root / "base", location)
    code, writes = _run(location, settings.home, kill=kill)
    assert code == -signal.SIGKILL and writes[kill[1]] == kill[2]

    after = _subjects(location, settings)  # the store opens, and everything in it is whole:
    for name, subjects in after.items():  # each node holds exactly what it holds when done
        assert all(reference[name].get(s) == pairs for s, pairs in subjects.items()), name
    outputs, memory = after["outputs"], after["memory"]
    predictions = _typed(outputs, "ImpactPrediction")
    assert writes["impact"] - 1 <= len(predictions) <= writes["impact"]
    # a prediction and its run arrive together, one commit each
    assert len(_typed(outputs, "Run")) == len(predictions) == _commits(location, settings, "impact")
    # a memory update and the outcome it learns from arrive together
    updates = _typed(memory, "MemoryUpdate")
    outcomes = _typed(outputs, "Outcome")
    assert _links(memory, updates, "fromOutcome") <= outcomes
    learned_from = {
        s
        for s in _typed(reference["memory"], "MemoryUpdate")
        if _links(reference["memory"], {s}, "fromOutcome") & outcomes
    }
    assert learned_from == updates

    assert _run(location, settings.home)[0] == 0  # resumed: ends where an unbroken run ends
    assert _subjects(location, settings) == reference
