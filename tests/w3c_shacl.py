"""The W3C SHACL core test suite (tests/data/w3c-shacl-core) read as cases, and each case
run through finkg's SHACL compiler: it agrees with the expected report (conforms, and the
set of focus nodes with results), is refused by name, or disagrees.

Used by tests/test_w3c_shacl.py and benchmarks/reliability.py.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from finkg.errors import InputError
from finkg.shapes.validate import read_shapes, validate_quads

SUITE = Path(__file__).parent / "data" / "w3c-shacl-core"
MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
SHT = "http://www.w3.org/ns/shacl-test#"
SH = "http://www.w3.org/ns/shacl#"


@dataclass(frozen=True)
class Case:
    name: str  # e.g. "property/minCount-001"
    data: Path
    shapes: Path
    conforms: bool
    focus: frozenset[str]  # the focus nodes of the expected results (N-Triples)
    quads: tuple[ox.Quad, ...]  # the data graph, parsed with the results when one file


@dataclass(frozen=True)
class Outcome:
    case: Case
    verdict: str  # "agree", "refused" or "disagree"
    detail: str


def _path(iri: str) -> Path:
    return Path(iri.removeprefix("file://"))


def cases(manifest: Path = SUITE / "manifest.ttl") -> Iterator[Case]:
    """Every test of `manifest` and the manifests it includes, in order."""
    store = ox.Store()
    store.load(path=str(manifest), format=ox.RdfFormat.TURTLE, base_iri=manifest.as_uri())
    for row in store.query(f"SELECT ?inc WHERE {{ ?m <{MF}include> ?inc }} ORDER BY ?inc"):
        yield from cases(_path(row["inc"].value))  # type: ignore[index]
    query = f"""SELECT ?test ?data ?shapes ?conforms WHERE {{
        ?test <{MF}action> ?action ; <{MF}result> ?result .
        ?action <{SHT}dataGraph> ?data ; <{SHT}shapesGraph> ?shapes .
        ?result <{SH}conforms> ?conforms }} ORDER BY ?test"""
    for row in store.query(query):
        test = row["test"].value  # type: ignore[index]
        focus = store.query(
            f"SELECT DISTINCT ?f WHERE {{ <{test}> <{MF}result>/<{SH}result>/<{SH}focusNode> ?f }}"
        )
        data = _path(row["data"].value)  # type: ignore[index]
        quads = (
            tuple(store)  # the same parse: blank nodes keep their labels
            if data == manifest
            else tuple(ox.parse(path=str(data), format=ox.RdfFormat.TURTLE, base_iri=data.as_uri()))
        )
        yield Case(
            name=str(_path(test).relative_to(SUITE)),
            data=data,
            shapes=_path(row["shapes"].value),  # type: ignore[index]
            conforms=row["conforms"].value == "true",  # type: ignore[index]
            focus=frozenset(str(r["f"]) for r in focus),  # type: ignore[index]
            quads=quads,
        )


def _nt(value: str, quads: tuple[ox.Quad, ...]) -> str:
    """A reported focus node (its `.value`) back as N-Triples, by finding it in the data."""
    for q in quads:
        for term in (q.subject, q.object):
            if term.value == value:
                return str(term)
    return str(ox.NamedNode(value)) if "://" in value or value.startswith("file:") else value


def run(case: Case) -> Outcome:
    """The case through finkg's SPARQL engine, checking literals exactly as written."""
    logging.getLogger("rdflib").setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():  # rdflib warns about the suite's ill-formed literals
            warnings.simplefilter("ignore")
            shapes = read_shapes([case.shapes])
        report = validate_quads(case.quads, shapes=shapes, exact=True)
    except InputError as e:  # ShapeCompileError included
        return Outcome(case, "refused", str(e))
    found = frozenset(_nt(v.focus, case.quads) for v in report.violations)
    if report.conforms == case.conforms and found == case.focus:
        return Outcome(case, "agree", f"{len(found)} focus node(s) with results")
    return Outcome(
        case,
        "disagree",
        f"conforms {report.conforms} (expected {case.conforms}); focus nodes "
        f"{sorted(found)} (expected {sorted(case.focus)})",
    )
