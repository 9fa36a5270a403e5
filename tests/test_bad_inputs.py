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
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.rdf_files import ingest_rdf
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store

BAD = Path(__file__).resolve().parent / "data" / "bad"
CASES = json.loads((BAD / "cases.json").read_text())
RECORDS = [c for c in CASES if c["kind"] != "documents"]  # the batch loaders
DOCUMENTS = [c for c in CASES if c["kind"] == "documents"]  # one lifecycle per file


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
        "documents",
    }
    assert all((BAD / c["file"]).is_file() for c in CASES)


@pytest.mark.parametrize("case", RECORDS, ids=[c["file"] for c in RECORDS])
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


@pytest.mark.parametrize("case", RECORDS, ids=[c["file"] for c in RECORDS])
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


def _added(before: set[str], store: BaseStore) -> list[str]:
    return sorted(_lines(store) - before)


def _lines(store: BaseStore) -> set[str]:
    text = ox.serialize(store.quads(), format=ox.RdfFormat.N_QUADS) or b""
    return set(text.decode().splitlines())


@pytest.mark.parametrize("case", DOCUMENTS, ids=[c["file"] for c in DOCUMENTS])
def test_a_bad_document_is_rejected_naming_its_file_and_field(
    seeded: BaseStore, case: dict
) -> None:
    """A fault in the file or its sidecar is named and nothing is written; a file that
    cannot be read ends in the Error state: the lifecycle's audited write, and nothing else
    (paper 003: a failed document is recorded so it can be resumed)."""
    before = _lines(seeded)
    report = ingest_documents(seeded, [BAD / case["file"]])
    assert report.ready == 0 and len(report.rejects) == 1
    reject = report.rejects[0]
    assert Path(reject.source).name == case["names"]
    assert (reject.line, reject.field) == (case["line"], case["field"])
    assert case["reason"].lower() in reject.reason.lower()
    added = _added(before, seeded)
    if case["field"] != "Error":
        assert added == []
        return
    graphs = {seeded.graphs.documents.value, seeded.graphs.audit.value}
    assert all(line.rsplit(" ", 2)[-2][1:-1] in graphs for line in added)
    assert not any("#DocumentChunk>" in line for line in added)
    assert any("#Error>" in line for line in added)


def test_with_skip_bad_every_bad_document_lands_in_the_rejects_file(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from finkg.cli import cli

    rejects = tmp_path / "rejects.jsonl"
    env = {"FINKG_HOME": str(tmp_path / "home"), "FINKG_STORE": str(tmp_path / "store")}
    files = [str(BAD / c["file"]) for c in DOCUMENTS]
    args = ["ingest", "documents", *files, "--skip-bad", "--rejects", str(rejects)]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    lines = {Path(r["source"]).name: r for r in map(json.loads, rejects.read_text().splitlines())}
    assert set(lines) == {c["names"] for c in DOCUMENTS}
    for c in DOCUMENTS:
        assert lines[c["names"]]["field"] == c["field"]
        assert c["reason"].lower() in lines[c["names"]]["reason"].lower()
