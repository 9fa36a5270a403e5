"""The benchmarks' own SPARQL: one `.rq` file each under `benchmarks/queries/`, with the
header finkg's packaged queries use (`finkg/queries/`), run through `finkg.queries.run`."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from finkg import queries

FOLDER = Path(__file__).with_name("queries")


@cache
def load(name: str) -> queries.NamedQuery:
    return queries.load(FOLDER / f"{name}.rq")


def run(store, name: str, values: Mapping[str, object] | None = None) -> Any:
    """An ASK query's answer, or a SELECT query's solutions as a list."""
    found = queries.run(store, load(name), values)
    return found if isinstance(found, bool) else list(found)  # type: ignore[arg-type]


def chunk_count(store) -> int:
    """How many document chunks the store holds."""
    rows = run(store, "chunk_count")
    return int(rows[0]["n"].value) if rows else 0


def documents(store) -> dict:
    """Each document's node by its title (FinanceBench's doc_name, TAT-QA's uid)."""
    return {r["title"].value: r["d"] for r in run(store, "documents_by_title")}
