"""Loaders, one module per source kind, sharing one batch writer (`core.ingest`)."""

from __future__ import annotations

import importlib

from finkg.errors import InputError
from finkg.kg.ingest.core import IngestOptions, IngestReport, Item, Loader, Reject, ingest

# The loaders by kind, each `finkg.kg.ingest.<kind>.load`, imported when asked for: the
# package itself imports only the writer, so a module the loaders use (`kg.derive`) can use
# the writer's types without importing every loader.
KINDS = ("companies", "fartrans", "filings", "news", "prices")


def loader(kind: str) -> Loader:
    """The loader of `kind` (one of KINDS)."""
    if kind not in KINDS:
        raise InputError(
            "unknown ingest kind",
            field="KIND",
            value=kind,
            hint="use one of " + ", ".join(KINDS) + " (or rdf)",
        )
    load: Loader = importlib.import_module(f"finkg.kg.ingest.{kind}").load
    return load


__all__ = ["KINDS", "IngestOptions", "IngestReport", "Item", "Reject", "ingest", "loader"]
