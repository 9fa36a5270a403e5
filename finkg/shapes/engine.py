"""Running compiled checks (`compile.py`) on Oxigraph and reading their rows as violations.

- Subclasses stated in the data widen class targets and sh:class: when the data states a
  subclass the compiled checks did not know, the shapes are compiled again with it.
- A check runs only where its target classes occur (or it has other targets), in one pass
  with the others of its shape and path where it can (`passes.py`), `workers` passes at a
  time: they are independent reads, and Oxigraph (and a SPARQL server) answers
  queries in parallel, without Python's lock.
- Rows where Oxigraph could not compare two numbers (?cmp unbound: integers beyond 64 bits,
  decimals beyond 18 places) are decided in Python, exactly; the rest stand as violations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pyoxigraph as ox
import rdflib
from rdflib.namespace import RDFS

from finkg import queries
from finkg.queries.results import Term
from finkg.shapes.checks import Check
from finkg.shapes.compile import compile_shapes
from finkg.shapes.passes import Pass, plan
from finkg.shapes.report import Report, Violation
from finkg.shapes.terms import numeric_holds

Select = Callable[[str], list[dict[str, Term | None]]]  # a query's solutions
Progress = Callable[[str, int, int], None]  # (stage, checks run, checks to run)
_RANGES = ("MinInclusive", "MinExclusive", "MaxInclusive", "MaxExclusive")


def run_checks(
    select: Select,
    triples: int,
    *,
    shapes: rdflib.Graph,
    ontology: rdflib.Graph,
    checks: Sequence[Check],
    progress: Progress | None = None,
    workers: int = 1,
) -> Report:
    """Run `checks` (compiled from `shapes` with `ontology`) through `select`, `workers` at a
    time; `progress` hears after each check how many of those that apply have run."""
    present = {_text(row["class"]) for row in select(queries.load("classes_present").text)}
    stated = [
        (_rdflib(row["sub"]), _rdflib(row["super"]))
        for row in select(queries.load("subclass_pairs").text)
    ]
    extra = [(s, o) for s, o in stated if s and o and (s, RDFS.subClassOf, o) not in ontology]
    if extra:
        widened = rdflib.Graph()
        widened += ontology
        for s, o in extra:
            widened.add((s, RDFS.subClassOf, o))
        checks = compile_shapes(shapes, widened)
    found: set[Violation] = set()
    applying = [c for c in checks if c.other_targets or c.classes & present]
    say = progress or (lambda _stage, _done, _total: None)
    say("checking shapes", 0, len(applying))
    done = 0
    for run, rows in _each(select, plan(applying), workers):
        for check, row in run.rows(rows):
            if _holds_after_all(check, row):
                continue
            value, path = row.get("value"), row.get("path")
            found.add(
                Violation(
                    focus=_text(row["focus"]),
                    shape=check.shape,
                    message=check.message,
                    path=_text(path) if path is not None else check.path or None,
                    value=None if value is None else _text(value),
                    severity=check.severity,
                )
            )
        done += len(run.checks)
        say("checking shapes", done, len(applying))
    violations = sorted(found, key=lambda v: (v.shape, v.focus, v.path or "", v.value or ""))
    return Report(not violations, violations, triples)


def _each(
    select: Select, passes: Sequence[Pass], workers: int
) -> Iterator[tuple[Pass, list[dict[str, Term | None]]]]:
    """Each pass with its rows, in the order of `passes`, `workers` queries at a time."""
    if workers < 2:
        yield from ((run, select(run.query)) for run in passes)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="finkg-check") as pool:
        yield from zip(passes, pool.map(select, (run.query for run in passes)), strict=True)


def _text(term: Term | None) -> str:
    """An IRI's, blank node's or literal's text (a triple term's N-Triples) of a variable
    the query always binds."""
    if term is None:
        raise ValueError("a check's query left a variable unbound that it always binds")
    return str(term) if isinstance(term, ox.Triple) else term.value


def _rdflib(term: object) -> rdflib.term.Node | None:
    """An IRI as rdflib's; None for anything else (a class named by a blank node, an OWL
    restriction, is no target and no sh:class)."""
    return rdflib.URIRef(term.value) if isinstance(term, ox.NamedNode) else None


def _holds_after_all(check: Check, row: dict[str, Term | None]) -> bool:
    """Whether Python finds the constraint holds where Oxigraph could not compare."""
    if "cmp" not in row or row["cmp"] is not None:
        return False
    if check.component in _RANGES:
        arg = check.arg
        if not (isinstance(arg, tuple) and len(arg) == 3):
            raise TypeError(f"{check.shape}: {check.component} without its bound: {arg!r}")
        op, lexical, datatype = arg
        bound = ox.Literal(lexical, datatype=ox.NamedNode(datatype))
        return numeric_holds(row["value"], op, bound) is True
    op = "<" if check.component == "LessThan" else "<="
    return numeric_holds(row["value"], op, row.get("other")) is True
