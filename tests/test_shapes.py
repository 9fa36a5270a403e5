"""Shapes, data-driven: every tests/data/invalid file breaks exactly the one shape named in
its first line (`# breaks: fsh:...`), and tests/data/valid conforms. The data goes through
the store first, as it does in finkg, so literal forms are the store's."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from finkg.kg.store import BaseStore
from finkg.shapes.checks import Check
from finkg.shapes.passes import plan
from finkg.shapes.validate import FSH, finkg_checks, validate_quads, validate_store

DATA = Path(__file__).parent / "data"
INVALID = sorted((DATA / "invalid").glob("*.ttl"))
VALID = sorted((DATA / "valid").glob("*.ttl"))


def _load(store: BaseStore, path: Path) -> None:
    # ox.parse, not read_rdf: some fixtures hold naive timestamps, which read_rdf refuses
    # at the door; the shapes must still catch them in a store written by other tools.
    triples = ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
    store.write(
        add=[ox.Quad(t.subject, t.predicate, t.object, store.graphs.news) for t in triples],
        note=f"fixture {path.name}",
    )


def test_there_are_enough_invalid_cases() -> None:
    assert len(INVALID) >= 30


ENGINES = ("sparql", "pyshacl")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_data_conforms(store: BaseStore, path: Path, engine: str) -> None:
    _load(store, path)
    report = validate_store(store, engine=engine)
    assert report.conforms, report.text()
    assert report.triples > 50


def test_a_store_check_reports_its_progress(store: BaseStore) -> None:
    """`finkg validate` was silent for 109 s on the demo store: it now says how far it is."""
    _load(store, VALID[0])
    heard: list[tuple[str, int, int]] = []
    report = validate_store(store, progress=lambda *event: heard.append(event))
    assert report.conforms
    total = heard[0][2]
    assert total > 1 and heard[0][1] == 0
    done = [d for _, d, _ in heard]  # checks that share a pass are done together
    assert done[-1] == total and all(a < b for a, b in itertools.pairwise(done))
    assert len(done) > 2
    assert {t for _, _, t in heard} == {total}


def test_checks_run_side_by_side_and_report_as_one_at_a_time(store: BaseStore) -> None:
    """`finkg validate` runs FINKG_THREADS checks at a time (the demo store: 40 s with one,
    22 s with two on 2 cores); the report and its progress are the same as one at a time."""
    for path in INVALID:
        _load(store, path)
    alone = validate_store(store)
    together = threading.Barrier(2, timeout=10)  # the first two checks meet only in parallel
    met: list[int] = []
    entered = iter(range(2))
    lock = threading.Lock()
    select = store.select

    def meeting(query: str, **kwargs: Any) -> Any:
        if "?focus" in query:  # a check, not the lookups before them
            with lock:
                first_two = next(entered, None) is not None
            if first_two:
                met.append(together.wait())
        return select(query, **kwargs)

    heard: list[tuple[str, int, int]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "select", meeting)
        side_by_side = validate_store(store, workers=3, progress=lambda *e: heard.append(e))
    assert sorted(met) == [0, 1]
    assert side_by_side == alone
    assert len({v.shape for v in alone.violations}) >= 30
    done = [d for _, d, _ in heard]
    assert done[-1] == heard[0][2] and all(a < b for a, b in itertools.pairwise(done))


def test_a_shared_pass_gives_each_check_the_rows_of_its_own_query(store: BaseStore) -> None:
    """Checks of one shape and path run as one query (`passes.py`): every check gets from it
    exactly the (focus, value) rows its own query returns, on data breaking every shape."""
    g = store.graphs.news
    for path in INVALID:  # each file's nodes apart, so no file mends another's break
        triples = ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
        store.write(
            add=[
                ox.Quad(*(_apart(t, path.stem) for t in (x.subject, x.predicate, x.object)), g)
                for x in triples
            ],
            note=f"fixture {path.name}",
        )
    checks = finkg_checks()
    passes = plan(checks)
    joined = [p for p in passes if len(p.checks) > 1]
    assert len(passes) < len(checks) / 2 and joined
    seen: set[tuple[str, str, str]] = set()
    for run in joined:
        rows = list(store.select(run.query, default_graphs="union"))
        got: dict[Check, set[tuple[str, str | None]]] = {c: set() for c in run.checks}
        for check, row in run.rows(rows):
            got[check].add(_focus_value(row))
        for check in run.checks:
            alone = {_focus_value(r) for r in store.select(check.query, default_graphs="union")}
            assert got[check] == alone, (check.shape, check.component)
            seen |= {(check.shape, check.component, f) for f, _ in alone}
    # the fixtures break checks of most kinds that share a pass, so the rows are not all empty
    assert {c for _, c, _ in seen} >= {"MinCount", "MaxCount", "Datatype", "In", "Class"}


def _apart(term: Any, stem: str) -> Any:
    ids = "https://w3id.org/finkg/id/"
    if isinstance(term, ox.NamedNode) and term.value.startswith(ids):
        return ox.NamedNode(f"{ids}{stem}/{term.value.removeprefix(ids)}")
    return term


def _focus_value(row: Any) -> tuple[str, str | None]:
    value = row.get("value")
    return row["focus"].value, None if value is None else str(value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_each_invalid_file_breaks_exactly_its_shape(
    store: BaseStore, path: Path, engine: str
) -> None:
    expected = path.read_text().splitlines()[0].removeprefix("# breaks: ").strip()
    _load(store, path)
    report = validate_store(store, engine=engine)
    assert not report.conforms
    broken = {v.shape.replace(FSH, "fsh:") for v in report.violations}
    assert broken == {expected}, report.text()
    assert all(v.focus and v.message for v in report.violations)


@pytest.mark.parametrize("path", INVALID + VALID, ids=lambda p: p.stem)
def test_both_engines_find_the_same_violations(path: Path) -> None:
    triples = ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
    quads = [ox.Quad(t.subject, t.predicate, t.object) for t in triples]
    found = {
        engine: {
            (v.focus, v.shape, v.path, v.value)
            for v in validate_quads(quads, engine=engine).violations
        }
        for engine in ENGINES
    }
    assert found["sparql"] == found["pyshacl"]
