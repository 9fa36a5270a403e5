"""The bad-input corpus (`tests/data/bad/`, made by its `make_corpus.py`): every malformed
file gets an error naming its file, line and field, and leaves the store as it was; with
--skip-bad it lands in the rejects file instead, and the good records beside it are kept."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.rdf_files import ingest_rdf
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store

BAD = Path(__file__).resolve().parent / "data" / "bad"
CASES = json.loads((BAD / "cases.json").read_text())


def digest(store: BaseStore) -> str:
    """SHA-256 of the store's quads, sorted as N-Quads lines."""
    raw = getattr(store, "_store", None)  # an embedded store dumps itself without Python quads
    if isinstance(raw, ox.Store):
        text = raw.dump(format=ox.RdfFormat.N_QUADS) or b""
    else:
        text = ox.serialize(store.quads(), format=ox.RdfFormat.N_QUADS) or b""
    return hashlib.sha256(b"\n".join(sorted(text.splitlines()))).hexdigest()


def _ingest(store: BaseStore, case: dict, **kw: object):
    path = BAD / case["file"]
    if case["kind"] == "rdf":
        return ingest_rdf(store, [path], **kw)  # type: ignore[arg-type]
    files = [BAD / w for w in case["with"]] + [path]
    return ingest(
        store, case["kind"], loader(case["kind"]), files, IngestOptions(graphs=store.graphs), **kw
    )


@pytest.fixture
def seeded() -> BaseStore:
    """A store with the ontology and one earlier ingest in it, so 'unchanged' means something."""
    store = open_store(None)
    init_store(store)
    ingest(
        store,
        "companies",
        loader("companies"),
        [BAD / "good" / "companies.csv"],
        IngestOptions(graphs=store.graphs),
    )
    return store


def test_the_corpus_covers_every_loader_with_fifty_cases() -> None:
    assert len(CASES) >= 50
    assert {c["kind"] for c in CASES} == {
        "news",
        "prices",
        "companies",
        "fartrans",
        "filings",
        "rdf",
    }
    assert all((BAD / c["file"]).is_file() for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_a_bad_file_is_named_with_its_line_and_field_and_nothing_is_written(
    seeded: BaseStore, case: dict
) -> None:
    before = digest(seeded)
    with pytest.raises(InputError) as error:
        _ingest(seeded, case)
    e = error.value
    assert Path(str(e.source)).name == case["file"]
    assert (e.line, e.field) == (case["line"], case["field"])
    assert case["reason"].lower() in str(e).lower()
    assert digest(seeded) == before


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_with_skip_bad_a_bad_record_lands_in_the_rejects_file(
    seeded: BaseStore, case: dict, tmp_path: Path
) -> None:
    rejects = tmp_path / "rejects.jsonl"
    report = _ingest(seeded, case, skip_bad=True, rejects_file=rejects)
    lines = [json.loads(x) for x in rejects.read_text().splitlines()]
    ours = [r for r in lines if Path(r["source"]).name == case["file"]]
    assert ours, lines
    assert (ours[0]["line"], ours[0]["field"]) == (case["line"], case["field"])
    assert case["reason"].lower() in ours[0]["reason"].lower()
    assert len(report.rejects) == len(lines)
