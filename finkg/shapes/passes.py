"""One pass over a shape's focus and value nodes for all the checks that can share it.

Each compiled check is a query of its own, and each reads every focus node of its shape and
every value of its path: `fkg:text` on every passage is read once for sh:minCount, once for
sh:maxCount, once for sh:datatype and once for sh:minLength. `plan` joins the checks whose
`Shared.pattern` is the same (one shape and path) into one query that reads the nodes once
and binds one flag per check:

    SELECT DISTINCT ?focus ?value ?f0 ?f1 WHERE {
      FOCUS OPTIONAL { ?focus PATH ?value }   # the shared pattern
      BIND (flag0 AS ?f0) BIND (flag1 AS ?f1)
      FILTER (?f0 || ?f1)
    }

so only violating rows leave the engine, and `Pass.rows` gives each check the rows its own
query would have returned. A check alone on its pattern, and every check without `shared`
(the value ranges, the pairs, sh:closed, SHACL-SPARQL, counts other than 1), runs its own
query.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from finkg.queries.results import Term
from finkg.shapes.checks import Check

Row = dict[str, Term | None]


@dataclass(frozen=True)
class Pass:
    """One query and the checks whose violations it returns."""

    query: str
    checks: tuple[Check, ...]

    def rows(self, rows: list[Row]) -> Iterator[tuple[Check, Row]]:
        """Each check with each row of its violations, as the check's own query gives them."""
        if len(self.checks) == 1:  # a check alone runs its own query (`plan`)
            yield from ((self.checks[0], row) for row in rows)
            return
        for row in rows:
            for i, check in enumerate(self.checks):
                if _true(row.get(f"f{i}")):
                    assert check.shared is not None  # plan joins shared checks only
                    value = row.get("value") if check.shared.with_value else None
                    yield check, {"focus": row["focus"], "value": value}


def plan(checks: Sequence[Check]) -> list[Pass]:
    """The passes that run `checks`: one per shared pattern, in the order of their first
    check; a check that shares with none runs alone."""
    groups: dict[str, list[Check]] = {}
    for check in checks:
        if check.shared is not None:
            groups.setdefault(check.shared.pattern, []).append(check)
    passes: list[Pass] = []
    for check in checks:
        group = groups.get(check.shared.pattern, []) if check.shared is not None else []
        if len(group) < 2:
            passes.append(Pass(check.query, (check,)))
        elif group[0] is check:
            passes.append(Pass(_joined(group), tuple(group)))
    return passes


def _joined(group: Sequence[Check]) -> str:
    shared = [c.shared for c in group if c.shared is not None]
    another = next((s.another for s in shared if s.another), "")
    binds = " ".join(f"BIND ({s.flag} AS ?f{i})" for i, s in enumerate(shared))
    flags = " || ".join(f"?f{i}" for i in range(len(shared)))
    head = " ".join(f"?f{i}" for i in range(len(shared)))
    return (
        f"SELECT DISTINCT ?focus ?value {head} WHERE {{ {shared[0].pattern} {another} "
        f"{binds} FILTER ({flags}) }}"
    )


def _true(term: Term | None) -> bool:
    """A flag that is set: "true", or 1 as Virtuoso writes a boolean."""
    return isinstance(term, ox.Literal) and term.value in ("true", "1")


__all__ = ["Pass", "plan"]
