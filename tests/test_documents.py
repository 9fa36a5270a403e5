"""Documents through the paper-003 lifecycle: states, audit trail, failures and resumption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finkg.demo.world import WorldSpec, build_world
from finkg.errors import InputError
from finkg.kg import lifecycle
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents, upload
from finkg.kg.store import BaseStore
from finkg.shapes.validate import validate_store

FKG = "https://w3id.org/finkg/ns#"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("world")
    build_world(root, WorldSpec(tickers=4, sessions=80, users=6))
    return root


def _docs(world: Path) -> list[Path]:
    return sorted(p for p in (world / "documents").iterdir() if not p.name.endswith(".json"))


def _count(store: BaseStore, cls: str) -> int:
    rows = store.select(
        f"SELECT (COUNT(DISTINCT ?n) AS ?c) WHERE {{ GRAPH ?g {{ ?n a <{FKG}{cls}> }} }}"
    )
    return int(rows.rows[0][0].value)  # type: ignore[union-attr]


def _path(store: BaseStore, doc: str) -> list[str]:
    rows = store.select(
        "SELECT ?to WHERE { GRAPH ?g { ?t <"
        + FKG
        + "document> <"
        + doc
        + "> ; <"
        + FKG
        + "toState> ?to ; <http://www.w3.org/ns/prov#endedAtTime> ?at } } ORDER BY ?at"
    )
    return [r["to"].value.rsplit("#", 1)[1] for r in rows]  # type: ignore[union-attr]


def test_documents_reach_ready_with_an_audited_path(store: BaseStore, world: Path) -> None:
    ingest(
        store,
        "companies",
        loader("companies"),
        [world / "companies.csv"],
        IngestOptions(graphs=store.graphs),
    )
    report = ingest_documents(store, _docs(world))
    assert report.rejects == [] and report.ready == 4 and report.chunks >= 4
    for outcome in report.outcomes:
        assert _path(store, outcome.document.value) == list(lifecycle.STATES)
    assert validate_store(store).conforms
    rows = store.select(
        "SELECT ?at ?rule WHERE { GRAPH ?g { ?c a <"
        + FKG
        + "DocumentChunk> ; <"
        + FKG
        + "availableAt> ?at ; <"
        + FKG
        + "timeRule> ?rule } } LIMIT 1"
    )
    assert "end of that day" in rows.rows[0][1].value  # type: ignore[union-attr]
    mentions = store.select("SELECT ?m WHERE { GRAPH ?g { ?c <" + FKG + "mentions> ?m } }")
    assert len(mentions) > 0
    generation = store.generation()
    again = ingest_documents(store, _docs(world))
    assert again.already_ready == 4 and store.generation() == generation


def test_chunk_offsets_point_into_the_normalized_text(store: BaseStore, world: Path) -> None:
    ingest_documents(store, _docs(world)[:1])
    rows = store.select(
        "SELECT ?text ?start ?end ?doc WHERE { GRAPH ?g { ?c <"
        + FKG
        + "text> ?text ; <"
        + FKG
        + "charStart> ?start ; <"
        + FKG
        + "charEnd> ?end ; <http://www.w3.org/ns/prov#"
        "wasDerivedFrom> ?doc . ?doc <" + FKG + "normalizedText> ?full } }"
    )
    full = store.select("SELECT ?t WHERE { GRAPH ?g { ?d <" + FKG + "normalizedText> ?t } }")
    text = full.rows[0][0].value  # type: ignore[union-attr]
    for r in rows:
        assert text[int(r["start"].value) : int(r["end"].value)] == r["text"].value  # type: ignore[union-attr]


@pytest.mark.parametrize("stage", ["_normalized", "_analyzed"])
def test_a_failed_stage_is_recorded_and_resumed_without_duplicates(
    store: BaseStore, world: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    real = getattr(lifecycle, stage)

    def broken(*args: object, **kw: object) -> object:
        raise InputError("injected failure", field=stage)

    monkeypatch.setattr(lifecycle, stage, broken)
    [failed] = ingest_documents(store, _docs(world)[:1]).outcomes
    assert failed.state == "Error" and "injected failure" in (failed.error or "")
    before = "Uploaded" if stage == "_normalized" else "Normalized"
    assert _path(store, failed.document.value)[-1] == "Error"
    monkeypatch.setattr(lifecycle, stage, real)
    [resumed] = ingest_documents(store, _docs(world)[:1]).outcomes
    assert resumed.state == "Ready"
    assert resumed.transitions[0] == lifecycle.STATES[lifecycle.STATES.index(before) + 1]
    path = _path(store, failed.document.value)
    assert path.count("Uploaded") == 1 and path.count("Error") == 1
    chunks = store.select(
        "SELECT (COUNT(?c) AS ?n) WHERE { GRAPH ?g { ?c a <" + FKG + "DocumentChunk> } }"
    )
    texts = store.select(
        "SELECT (COUNT(?t) AS ?n) WHERE { GRAPH ?g { ?d <" + FKG + "normalizedText> ?t } }"
    )
    assert int(texts.rows[0][0].value) == 1  # type: ignore[union-attr]
    assert int(chunks.rows[0][0].value) == resumed.chunks  # type: ignore[union-attr]
    assert validate_store(store).conforms


def test_word_and_excel_files(store: BaseStore, tmp_path: Path) -> None:
    import docx
    import openpyxl

    word = docx.Document()
    word.add_paragraph("Acme Widgets raised its full-year guidance to $1.2 billion.")
    word.add_table(rows=1, cols=2).rows[0].cells[0].text = "Revenue"
    word.save(tmp_path / "note.docx")
    book = openpyxl.Workbook()
    book.active.title = "Q3"
    book.active.append(["Revenue", 58.3, "12%"])
    book.save(tmp_path / "figures.xlsx")
    report = ingest_documents(store, [tmp_path / "note.docx", tmp_path / "figures.xlsx"])
    assert report.ready == 2, report.rejects
    texts = {
        r["t"].value
        for r in store.select(  # type: ignore[union-attr]
            "SELECT ?t WHERE { GRAPH ?g { ?d <" + FKG + "normalizedText> ?t } }"
        )
    }
    assert "Acme Widgets raised its full-year guidance to $1.2 billion.\n\nRevenue" in texts
    assert "Sheet: Q3\nRevenue | 58.3 | 12%" in texts


def test_without_a_publication_time_a_document_is_available_from_ingestion(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memo.txt"
    path.write_text("Liquidity remains strong.")
    doc = upload(path)
    assert doc.time_quality == "approximate" and "from its ingestion" in doc.time_rule
    (tmp_path / "memo.txt.meta.json").write_text(
        json.dumps({"published": "2020-04-30T16:30:00-04:00", "tickers": ["aapl"]})
    )
    doc = upload(path)
    assert doc.published.isoformat() == "2020-04-30T16:30:00-04:00"
    assert doc.time_quality == "exact" and doc.tickers == ("AAPL",)


def test_unreadable_and_empty_files_are_rejected(store: BaseStore, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("   ")
    fake = tmp_path / "fake.docx"
    fake.write_bytes(b"PK\x03\x04 not really a docx")
    report = ingest_documents(store, [empty, fake, tmp_path / "missing.pdf"])
    reasons = {Path(r.source).name: r.reason for r in report.rejects}
    assert set(reasons) == {"empty.txt", "fake.docx", "missing.pdf"}
    assert "not a readable Word document" in reasons["fake.docx"]
