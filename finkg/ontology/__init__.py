"""finkg's ontology (`finkg.ttl`), its closed vocabulary (`terms.py`), the core line items
statement facts read as (`line_items.ttl`) and the JSON-LD context."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

ONTOLOGY_IRI = "https://w3id.org/finkg/ns"
CONTEXT_IRI = "https://w3id.org/finkg/context.jsonld"


def ontology_path() -> Path:
    """Path of `finkg.ttl` inside the installed package."""
    return Path(str(resources.files(__package__) / "finkg.ttl"))


def line_items_path() -> Path:
    """Path of `line_items.ttl`, the core line items statement facts read as (SKOS)."""
    return Path(str(resources.files(__package__) / "line_items.ttl"))


def ontology_files() -> list[Path]:
    """What the ontology graph holds: finkg.ttl and the line-item vocabulary."""
    return [ontology_path(), line_items_path()]


def context_path() -> Path:
    """Path of the published JSON-LD `@context` (`context.jsonld`)."""
    return Path(str(resources.files(__package__) / "context.jsonld"))


@cache
def _context_text() -> str:
    return context_path().read_text(encoding="utf-8")


def jsonld_context() -> dict[str, Any]:
    """finkg's JSON-LD context document (a fresh copy: callers may change it)."""
    return json.loads(_context_text())
