"""SEC filings: EDGAR indexes, full submissions, HTML and PDF documents -> item-aware passages."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from finkg.demo.world import WorldSpec, build_world
from finkg.errors import InputError
from finkg.kg.graphs import Graphs
from finkg.kg.ingest import (
    IngestOptions,
    acceptance,
    doctext,
    edgar,
    filings,
    ingest,
    loader,
    passages,
)
from finkg.kg.ingest.core import Item, Reject
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF
from finkg.shapes.validate import validate_quads

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
EDGAR = SHARED / "event" / "edgar"
PDFS = SHARED / "event" / "filings_pdf"
needs_shared = pytest.mark.skipif(not EDGAR.is_dir(), reason="../shared/data/event/edgar is absent")

CIK = "0099000001"  # the demo world's first company
HEADER = """<SEC-DOCUMENT>{acc}.txt : 20200430
<SEC-HEADER>{acc}.hdr.sgml : 20200430
<ACCEPTANCE-DATETIME>{accepted}
ACCESSION NUMBER:		{acc}
CONFORMED SUBMISSION TYPE:	{form}
FILED AS OF DATE:		20200430
FILER:
	COMPANY DATA:
		COMPANY CONFORMED NAME:			ACME WIDGETS CORP
		CENTRAL INDEX KEY:			{cik}
</SEC-HEADER>
"""


# ---------------------------------------------------------------- fixtures and helpers


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("world")
    build_world(out, WorldSpec(tickers=4, sessions=80, users=6))
    return out / "edgar"


def edgar_files(folder: Path) -> list[Path]:
    return sorted((folder / "submissions").glob("*.json")) + sorted(
        (folder / "documents").glob("*.txt")
    )


def options(**kw: object) -> IngestOptions:
    return IngestOptions(graphs=Graphs(), **kw)  # type: ignore[arg-type]


def read(paths: Sequence[Path], **kw: object) -> tuple[list[Item], list[Reject]]:
    out = list(filings.load(list(paths), options(**kw)))
    return [i for i in out if isinstance(i, Item)], [r for r in out if isinstance(r, Reject)]


def value(item: Item, prop: NamedNode) -> str | None:
    found = [q.object.value for q in item.quads if q.subject == item.key and q.predicate == prop]
    return found[0] if found else None


def passage_items(items: list[Item]) -> list[Item]:
    return [i for i in items if value(i, RDF.type) == FKG.FilingPassage.value]


def sgml(
    *,
    acc: str = f"{CIK}-20-000001",
    accepted: str = "20200430163000",
    form: str = "8-K",
    cik: str = CIK,
    body: str = "Item 2.02 Results of Operations.\n\nRevenue rose 12% to $409.6 million.",
) -> str:
    head = HEADER.format(acc=acc, accepted=accepted, form=form, cik=cik)
    if not accepted:
        head = head.replace("<ACCEPTANCE-DATETIME>\n", "")
    return head + f"<DOCUMENT>\n<TYPE>{form}\n<SEQUENCE>1\n<TEXT>\n{body}\n</TEXT>\n</DOCUMENT>\n"


def index(tmp: Path, rows: list[dict[str, str]], *, name: str = "CIK0099000001.json") -> Path:
    keys = ("accessionNumber", "form", "filingDate", "reportDate", "acceptanceDateTime")
    recent = {k: [r[k] for r in rows] for k in (*keys, "items", "primaryDocument")}
    doc = {
        "cik": CIK,
        "name": "Acme Widgets Corp",
        "tickers": ["ZQAW"],
        "sicDescription": "Electronic Components, NEC",
        "fiscalYearEnd": "1231",
        "filings": {"recent": recent},
    }
    path = tmp / name
    path.write_text(json.dumps(doc))
    return path


def row(acc: str, form: str, filed: str, accepted: str, **kw: str) -> dict[str, str]:
    return {
        "accessionNumber": acc,
        "form": form,
        "filingDate": filed,
        "reportDate": kw.get("report", filed),
        "acceptanceDateTime": accepted,
        "items": kw.get("items", ""),
        "primaryDocument": kw.get("doc", f"doc-{acc}.htm"),
    }


def tiny_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF whose text is `lines` (pypdf writes it; Helvetica, one line each)."""
    pypdf = pytest.importorskip("pypdf")
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = pypdf.PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    escaped = [re.sub(r"([()\\])", r"\\\1", line) for line in lines]
    ops = "BT /F1 10 Tf 12 TL 50 760 Td " + " ".join(f"({t}) Tj T*" for t in escaped) + " ET"
    stream = DecodedStreamObject()
    stream.set_data(ops.encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(stream)
    with path.open("wb") as f:
        writer.write(f)
    return path


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The text the loader extracts from each file, by file (a spy on `doctext.extract`)."""
    texts: dict[str, str] = {}
    real = doctext.extract

    def spy(data: bytes, kind: str, *, source: str = "<document>") -> str:
        texts[source] = real(data, kind, source=source)
        return texts[source]

    monkeypatch.setattr(doctext, "extract", spy)
    return texts


def assert_passages_fit(items: list[Item], texts: dict[str, str]) -> int:
    """Every passage is its slice of its file's extracted text, lies inside one item section
    (and carries that section's item), and has 150-400 words unless it is the last of its
    section. Returns how many passages were checked."""
    by_file: dict[str, list[Item]] = {}
    for item in passage_items(items):
        by_file.setdefault(item.source, []).append(item)
    for source, found in by_file.items():
        text = texts[source]
        sections = passages.sections(text, form=value(found[0], FKG.form) or "")
        spans = [
            (int(value(i, FKG.charStart) or 0), int(value(i, FKG.charEnd) or 0)) for i in found
        ]
        for item, (start, end) in zip(found, spans, strict=True):
            assert value(item, FKG.text) == text[start:end], source
            (section,) = [s for s in sections if s.start <= start and end <= s.end]
            assert value(item, FKG.item) == section.item, (source, start)
            n = len(text[start:end].split())
            last = not any(section.start <= s < section.end and s > start for s, _ in spans)
            assert n <= passages.MAX_WORDS and (last or n >= passages.MIN_WORDS), (source, n)
    return sum(map(len, by_file.values()))


def words(n: int, seed: str = "word") -> str:
    """`n` words in sentences of ten."""
    out = []
    for i in range(0, n, 10):
        out.append(" ".join(f"{seed}{j}" for j in range(i, min(i + 10, n))).capitalize() + ".")
    return " ".join(out)


# ---------------------------------------------------------------- the demo world


def test_every_demo_filing_yields_passages_that_pass_the_shapes(world: Path) -> None:
    items, rejects = read(edgar_files(world))
    assert rejects == []
    found = passage_items(items)
    docs = {value(i, PROV.wasDerivedFrom) for i in found}
    assert len(docs) == len(list((world / "documents").glob("*.txt")))
    companies = [i for i in items if value(i, RDF.type) == FKG.Company.value]
    assert len(companies) == 4 and all(value(c, FKG.cik) for c in companies)
    report = validate_quads(q for i in items for q in i.quads)
    assert report.conforms, report.text()
    for item in found:  # each passage item is complete on its own (checked in chunks)
        assert validate_quads(item.quads).conforms
        assert value(item, FKG.timeQuality) == "exact"
        assert value(item, FKG.sourceFamily) == FKG.SecFiling.value


def test_passage_text_is_exactly_the_slice_of_the_extracted_text(world: Path) -> None:
    items, _ = read(edgar_files(world))
    by_doc: dict[str, list[Item]] = {}
    for item in passage_items(items):
        by_doc.setdefault(value(item, FKG.accessionNumber) or "", []).append(item)
    for accession, found in by_doc.items():
        sub = edgar.parse_sgml((world / "documents" / f"{accession}.txt").read_bytes())
        text = doctext.extract(edgar.unwrap(sub.primary().text), doctext.TEXT)  # type: ignore[union-attr]
        found.sort(key=lambda i: int(value(i, FKG.passageIndex) or 0))
        assert [int(value(i, FKG.passageIndex) or -1) for i in found] == list(range(len(found)))
        for item in found:
            start, end = int(value(item, FKG.charStart) or 0), int(value(item, FKG.charEnd) or 0)
            assert value(item, FKG.text) == text[start:end]
            assert item.key == mint("passage", accession, value(item, FKG.passageIndex))


def test_demo_8k_items_are_kept_and_never_crossed(world: Path, extracted: dict[str, str]) -> None:
    items, _ = read(edgar_files(world))
    assert assert_passages_fit(items, extracted) == len(passage_items(items))
    labels = {value(i, FKG.item) for i in passage_items(items)}
    assert {"2.02", "9.01", "Item 7", "Item 1A"} <= labels
    for item in passage_items(items):
        text = re.sub(r"^PART [IV]+\n+", "", value(item, FKG.text) or "")
        headings = re.findall(r"(?m)^Item \d+(?:\.\d\d|[A-C])?\b", text)
        assert len(headings) <= 1 and (not headings or text.startswith(headings[0]))


def test_the_demo_edgar_folder_ingests_cleanly_and_twice_adds_nothing(
    store: BaseStore, world: Path
) -> None:
    paths = [world]  # a folder stands for the files under it
    assert sorted(filings.expand(paths)) == sorted(edgar_files(world))
    opts = IngestOptions(graphs=store.graphs)
    first = ingest(store, "filings", loader("filings"), paths, opts)
    assert first.rejects == [] and first.written > 100
    again = ingest(store, "filings", loader("filings"), paths, opts)
    assert again.written == 0 and again.quads == 0
    rows = store.select(
        "PREFIX fkg: <https://w3id.org/finkg/ns#> SELECT (COUNT(?p) AS ?n) "
        "WHERE { GRAPH ?g { ?p a fkg:FilingPassage ; fkg:about ?c } }"
    )
    assert int(next(iter(rows))["n"].value) == first.written - 4  # type: ignore[union-attr]


# ---------------------------------------------------------------- passages


def test_long_sections_are_cut_into_150_to_400_words_at_paragraphs() -> None:
    body = "\n\n".join(words(n, f"p{i}x") for i, n in enumerate((120, 90, 200, 60, 310, 45)))
    text = (
        f"Cover page.\n\nItem 2.02 Results of Operations.\n\n{body}\n\nItem 9.01 Exhibits.\n\n99.1"
    )
    found = passages.split(text, form="8-K")
    sections = passages.sections(text, form="8-K")
    results = [p for p in found if p.item == "2.02"]
    assert len(results) >= 3
    for p in results[:-1]:
        assert 150 <= len(text[p.start : p.end].split()) <= 400
        assert text[p.end : p.end + 2] == "\n\n"  # cut at a paragraph end
    for p in found:
        inside = [s for s in sections if s.start <= p.start and p.end <= s.end]
        assert len(inside) == 1 and inside[0].item == p.item
        assert p.words == len(text[p.start : p.end].split())
    assert [p.item for p in found][-1] == "9.01"


def test_a_paragraph_longer_than_a_passage_is_cut_at_sentences_and_no_tiny_tail() -> None:
    text = "Item 7. Management's Discussion\n\n" + words(1010)
    found = passages.split(text, form="10-K")
    assert all(150 <= p.words <= 400 for p in found)
    assert all(text[p.end - 1] == "." for p in found)
    assert sum(p.words for p in found) == len(text.split())


def test_a_table_of_contents_is_not_taken_for_the_items() -> None:
    toc = "\n".join(
        f"Item {n}. | {t} | {p}" for n, t, p in [("1", "Business", 1), ("7", "MD&A", 9)]
    )
    body = f"PART I\n\nItem 1. Business\n\n{words(200)}\n\nItem 7. MD&A\n\n{words(50)}"
    text = f"Contents\n{toc}\n\n{body}"
    sections = passages.sections(text, form="10-K")
    assert [s.item for s in sections] == [None, "Item 1", "Item 7"]
    assert text[sections[1].start :].startswith("PART I\n\nItem 1. Business")


def test_10q_items_carry_their_part() -> None:
    text = "PART I\n\nItem 2. MD&A\n\nText.\n\nPART II\n\nItem 1A. Risk Factors\n\nMore text."
    assert [s.item for s in passages.sections(text, form="10-Q")] == [
        "Part I, Item 2",
        "Part II, Item 1A",
    ]


# ---------------------------------------------------------------- text extraction


def test_html_extraction_drops_hidden_xbrl_scripts_and_styles_and_keeps_rows() -> None:
    html = (
        b"<html><head><title>t</title><style>p{}</style></head><body>"
        b'<div style="display:none"><ix:header><ix:hidden>0000320193</ix:hidden></ix:header></div>'
        b"<script>var x = 1;</script><p>Item 2.02&#160;Results</p>"
        b"<table><tr><td><div>Revenue</div></td><td></td><td>$</td><td>58,313</td></tr>"
        b"<tr><td>EPS</td><td>2.55</td></tr></table><p>End <b>bold</b></p></body></html>"
    )
    text = doctext.html_to_text(html)
    assert text == "Item 2.02 Results\n\nRevenue | $ | 58,313\nEPS | 2.55\n\nEnd bold"
    assert doctext.html_to_text(html) == text  # deterministic
    assert doctext.html_to_text(b"<p>caf\xe9 \x93Q\x94</p>") == "caf\u00e9 \u201cQ\u201d"  # cp1252


# ---------------------------------------------------------------- times


def _times(items: list[Item]) -> set[tuple[str | None, str | None]]:
    return {(value(i, FKG.availableAt), value(i, FKG.timeQuality)) for i in passage_items(items)}


def test_an_after_close_sgml_acceptance_is_new_york_time_not_utc(tmp_path: Path) -> None:
    summer = tmp_path / "summer.txt"
    summer.write_text(sgml(accepted="20200430163000"))
    winter = tmp_path / "winter.txt"
    winter.write_text(sgml(acc=f"{CIK}-20-000002", accepted="20200130163000"))
    items, rejects = read([summer, winter], companies_by_cik={CIK: "ZQAW"})
    assert rejects == []
    assert _times(items) == {
        ("2020-04-30T16:30:00-04:00", "exact"),
        ("2020-01-30T16:30:00-05:00", "exact"),
    }


def test_an_index_acceptance_with_z_is_read_as_new_york_wall_time(tmp_path: Path) -> None:
    acc = f"{CIK}-20-000007"
    idx = index(tmp_path, [row(acc, "8-K", "2020-04-30", "2020-04-30T16:30:25.000Z")])
    doc = tmp_path / f"{acc}.htm"
    doc.write_text("<html><body><p>Item 2.02 Results of Operations</p><p>Up.</p></body></html>")
    items, rejects = read([doc, idx])  # the index is read first, whatever the order
    assert rejects == []
    assert _times(items) == {("2020-04-30T16:30:25-04:00", "exact")}
    rule = value(passage_items(items)[0], FKG.timeRule) or ""
    assert "acceptanceDateTime" in rule and "America/New_York" in rule
    source = [
        q.object for q in passage_items(items)[0].quads if q.predicate.value.endswith("source")
    ]
    assert source == [
        NamedNode(
            f"https://www.sec.gov/Archives/edgar/data/99000001/{acc.replace('-', '')}/doc-{acc}.htm"
        )
    ]


def test_an_index_whose_times_look_like_utc_gives_approximate_times(tmp_path: Path) -> None:
    rows = [
        row(f"{CIK}-20-{i:06d}", "4", "2020-03-02", f"2020-03-02T{h:02d}:10:00.000Z")
        for i, h in enumerate([0, 1, 2, 23, 22, 21, 0, 1, 2, 23, 0, 1], start=10)
    ]
    rows.append(row(f"{CIK}-20-000001", "8-K", "2020-03-02", "2020-03-02T21:05:00.000Z"))
    idx = index(tmp_path, rows)
    doc = tmp_path / f"{CIK}-20-000001.txt"
    doc.write_text("Item 8.01 Other Events.\n\nThe Company moved.")
    items, rejects = read([idx, doc])
    assert rejects == []
    assert _times(items) == {("2020-03-02T21:05:00-05:00", "approximate")}
    assert "UTC" in (value(passage_items(items)[0], FKG.timeRule) or "")


def test_a_filing_date_alone_gives_22_00_new_york_marked_approximate(tmp_path: Path) -> None:
    doc = tmp_path / "sub.txt"
    doc.write_text(sgml(accepted=""))
    items, _ = read([doc], companies_by_cik={CIK: "ZQAW"})
    assert _times(items) == {("2020-04-30T22:00:00-04:00", "approximate")}
    assert "22:00" in (value(passage_items(items)[0], FKG.timeRule) or "")


def test_a_pdf_without_an_index_gets_an_approximate_time_with_its_rule(tmp_path: Path) -> None:
    pdf = tiny_pdf(
        tmp_path / "ZQAW_2019_10K.pdf",
        [
            "FORM 10-K",
            "For the fiscal year ended December 31, 2019",
            "",
            "Item 7. MD&A",
            "Revenue rose.",
        ],
    )
    items, rejects = read([pdf], companies_by_cik={CIK: "ZQAW"})
    assert rejects == []
    found = passage_items(items)
    assert found and _times(items) == {("2020-04-14T22:00:00-04:00", "approximate")}
    rule = value(found[0], FKG.timeRule) or ""
    assert "2019-12-31" in rule and "105 days" in rule
    assert value(found[0], FKG.accessionNumber) is None
    assert validate_quads(q for i in items for q in i.quads).conforms


COVER = [
    "FORM 10-K",
    "For the fiscal year ended December 31, 2019",
    "Title of each class Trading Symbol(s) Name of each exchange on which registered",
    "Common Stock, par value $0.01 per share ZQAW The Nasdaq Global Select Market",
    "Securities registered pursuant to Section 12(g) of the Act: None",
    "",
    "Item 7. MD&A",
    "Revenue rose.",
]


def test_a_pdf_named_by_company_is_placed_by_its_covers_trading_symbol(tmp_path: Path) -> None:
    """The shared data's annual reports are named ACTIVISIONBLIZZARD_2019_10K.pdf: no CIK,
    no index; the cover's symbol table names a company the store has prices of."""
    pdf = tiny_pdf(tmp_path / "ZEDCORPORATION_2019_10K.pdf", COVER)
    items, rejects = read([pdf], priced_tickers=frozenset({"ZQAW", "ZQBV"}))
    assert rejects == []
    found = passage_items(items)
    assert found and {value(i, FKG.about) for i in found} == {
        mint("company", "ZQAW", base=Graphs().base).value
    }
    assert _times(items) == {("2020-04-14T22:00:00-04:00", "approximate")}
    assert validate_quads(q for i in items for q in i.quads).conforms


def test_a_cover_symbol_without_prices_in_the_store_names_no_company(tmp_path: Path) -> None:
    pdf = tiny_pdf(tmp_path / "ZEDCORPORATION_2019_10K.pdf", COVER)
    items, rejects = read([pdf], priced_tickers=frozenset({"ZQBV"}))
    assert items == [] and [r.field for r in rejects] == ["file name"]
    assert "cannot tell the company" in rejects[0].reason


def test_a_pdf_named_by_a_priced_ticker_needs_no_cik(tmp_path: Path) -> None:
    pdf = tiny_pdf(tmp_path / "ZQBV_2019_10K.pdf", COVER)
    items, rejects = read([pdf], priced_tickers=frozenset({"ZQAW", "ZQBV"}))
    assert rejects == []
    about = {value(i, FKG.about) for i in passage_items(items)}
    assert about == {mint("company", "ZQBV", base=Graphs().base).value}  # the name comes first


def test_a_pdf_named_by_fiscal_year_finds_its_10k_in_the_index(tmp_path: Path) -> None:
    acc = f"{CIK}-20-000003"
    idx = index(
        tmp_path,
        [
            row(acc, "10-K", "2020-02-19", "2020-02-19T10:00:17.000Z", report="2019-12-31"),
            row(
                f"{CIK}-19-000003",
                "10-K",
                "2019-02-19",
                "2019-02-19T10:00:17.000Z",
                report="2018-12-31",
            ),
        ],
    )
    pdf = tiny_pdf(
        tmp_path / "ZQAW_2019_10K.pdf", ["Annual report", "Item 1. Business", "Widgets."]
    )
    items, rejects = read([idx, pdf])
    assert rejects == []
    assert _times(items) == {("2020-02-19T10:00:17-05:00", "exact")}
    assert {value(i, FKG.accessionNumber) for i in passage_items(items)} == {acc}


def test_approximate_times_are_never_before_the_deadline() -> None:
    assert acceptance.by_fiscal_year(2019, "10-K", "0131").at.date().isoformat() == "2020-05-15"
    assert acceptance.by_fiscal_year(2019, "10-K", None).at.date().isoformat() == "2020-06-13"
    assert acceptance.by_period(dt.date(2020, 3, 31), "S-1", "x") is None


# ---------------------------------------------------------------- bad input


BAD_SGML = {
    "no header": "<SEC-DOCUMENT>\n<DOCUMENT>\n<TYPE>8-K\n<TEXT>\nhi\n</TEXT>\n</DOCUMENT>\n",
    "truncated": sgml().split("</TEXT>")[0],
    "bad time": sgml(accepted="20201345163000"),
    "future": sgml(accepted="29990101120000"),
    "empty text": sgml(body="<html><script>var a;</script></html>"),
    "unknown company": sgml(cik="0000000042"),
}


@pytest.mark.parametrize("case", sorted(BAD_SGML))
def test_bad_full_submissions_are_rejected_naming_the_file(tmp_path: Path, case: str) -> None:
    path = tmp_path / f"{case.replace(' ', '-')}.txt"
    path.write_text(BAD_SGML[case])
    items, rejects = read([path], companies_by_cik={CIK: "ZQAW"})
    assert items == [] and len(rejects) == 1
    assert rejects[0].source == str(path)
    assert {
        "no header": "SEC-HEADER",
        "truncated": "DOCUMENT",
        "bad time": "ACCEPTANCE-DATETIME",
        "future": "ACCEPTANCE-DATETIME",
        "empty text": "text",
        "unknown company": "CIK",
    }[case] == rejects[0].field
    if case == "unknown company":
        assert "0000000042" in (rejects[0].value or "") and "submissions JSON" in rejects[0].reason


def test_bad_files_and_indexes_are_rejected_naming_the_file(tmp_path: Path) -> None:
    cases: dict[str, bytes] = {
        "empty.txt": b"",
        "missing.htm": b"",  # not written: unreadable
        "cut.html.gz": gzip.compress(bytes(range(256)) * 40)[:100],
        "not-index.json": b'{"hello": "world"}',
        "broken.json": b'{"cik": "1", "filings": {"recent": ',
        "CIK0099000002.json": json.dumps(
            {
                "cik": "99000002",
                "name": "B",
                "tickers": ["B"],
                "filings": {
                    "recent": {
                        "accessionNumber": ["0099000002-20-000001"],
                        "form": [],
                        "filingDate": ["2020-01-02"],
                    }
                },
            }
        ).encode(),
        "bad-time.json": json.dumps(
            {
                "cik": "99000003",
                "name": "C",
                "tickers": ["C"],
                "filings": {
                    "recent": {
                        "accessionNumber": ["0099000003-20-000001"],
                        "form": ["8-K"],
                        "filingDate": ["2020-01-02"],
                        "acceptanceDateTime": ["yesterday"],
                    }
                },
            }
        ).encode(),
        "stranger_2019_10K.pdf": b"%PDF-1.4 not really",
    }
    paths = []
    for name, data in cases.items():
        path = tmp_path / name
        if name != "missing.htm":
            path.write_bytes(data)
        paths.append(path)
    items, rejects = read(paths)
    assert items == []
    assert sorted(Path(r.source).name for r in rejects) == sorted(cases)
    why = {Path(r.source).name: r for r in rejects}
    assert "cannot read" in why["missing.htm"].reason
    assert "cannot read" in why["cut.html.gz"].reason
    assert "empty" in why["empty.txt"].reason
    assert "submissions index" in why["not-index.json"].reason
    assert "unequal lengths" in why["CIK0099000002.json"].reason
    assert why["bad-time.json"].field == "filings.recent.acceptanceDateTime[0]"
    assert why["stranger_2019_10K.pdf"].field == "file name"


def test_ingest_stops_on_a_bad_filing_naming_it(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "0099000001-20-000001.txt"
    path.write_text(BAD_SGML["no header"])
    with pytest.raises(InputError) as error:
        ingest(store, "filings", loader("filings"), [path], IngestOptions(graphs=store.graphs))
    assert path.name in str(error.value)


def test_ingest_knows_the_priced_companies_a_cover_can_name(
    store: BaseStore, tmp_path: Path
) -> None:
    bars = tmp_path / "ZQAW.csv"
    bars.write_text("Date,Open,High,Low,Close,Adj Close,Volume\n2020-01-02,10,11,9,10.5,10.5,100\n")
    ingest(store, "prices", loader("prices"), [bars], IngestOptions(graphs=store.graphs))
    pdf = tiny_pdf(tmp_path / "ZEDCORPORATION_2019_10K.pdf", COVER)
    report = ingest(store, "filings", loader("filings"), [pdf], IngestOptions(graphs=store.graphs))
    assert report.rejects == [] and report.written > 0


# ---------------------------------------------------------------- real EDGAR files


@pytest.mark.realdata
@needs_shared
def test_the_real_aapl_after_close_8k_is_16_30_new_york(tmp_path: Path) -> None:
    acc = "0000320193-24-000120"
    doc = tmp_path / f"{acc}.htm"
    doc.write_text(
        "<html><body><p>Item 2.02 Results of Operations and Financial Condition</p>"
        "<p>Apple announced its results.</p></body></html>"
    )
    index = EDGAR / "submissions" / "CIK0000320193.json"
    if acc not in {f.accession for f in edgar.parse_submissions(index.read_bytes()).filings}:
        pytest.skip(f"{acc} is not in this copy of {index.name}")
    items, rejects = read([index, doc])
    assert rejects == []
    assert _times(items) == {("2024-10-31T16:30:25-04:00", "exact")}
    assert {value(i, FKG.item) for i in passage_items(items)} == {"2.02"}


@pytest.mark.realdata
@needs_shared
def test_the_real_full_submissions_all_yield_passages(extracted: dict[str, str]) -> None:
    paths = sorted((EDGAR / "sgml").glob("*.txt"))
    ciks = {edgar.parse_sgml(p.read_bytes()).header.cik: f"T{i}" for i, p in enumerate(paths)}
    items, rejects = read(paths, companies_by_cik=ciks)
    assert rejects == []
    assert assert_passages_fit(items, extracted) == len(passage_items(items))
    by_file = {i.source for i in passage_items(items)}
    assert by_file == {str(p) for p in paths}
    assert all(value(i, FKG.timeQuality) == "exact" for i in passage_items(items))
    assert validate_quads(q for i in items for q in i.quads).conforms


@pytest.mark.realdata
@needs_shared
def test_the_real_tsla_header_wins_over_its_utc_looking_index() -> None:
    paths = [
        EDGAR / "submissions" / "CIK0001318605.json",
        EDGAR / "sgml" / "0001564590-20-004475-minimal.txt",
    ]
    items, rejects = read(paths)
    assert rejects == []
    assert _times(items) == {("2020-02-13T07:12:18-05:00", "exact")}


@pytest.mark.realdata
@needs_shared
def test_a_real_10k_is_cut_at_its_items_not_its_table_of_contents(
    extracted: dict[str, str],
) -> None:
    paths = [
        EDGAR / "submissions" / "CIK0000320193.json",
        EDGAR / "html" / "aapl-10-k-2024-11-01.html.gz",
    ]
    items, rejects = read(paths)
    assert rejects == []
    assert assert_passages_fit(items, extracted) > 100
    found = passage_items(items)
    labels = [value(i, FKG.item) for i in found]
    order = list(dict.fromkeys(x for x in labels if x))
    assert order[:4] == ["Item 1", "Item 1A", "Item 1B", "Item 1C"] and order[-1] == "Item 16"
    assert all(len((value(i, FKG.text) or "").split()) <= 400 for i in found)
    assert _times(items) == {("2024-11-01T06:01:36-04:00", "exact")}
    assert Literal("text/html") in {q.object for q in found[0].quads}


@pytest.mark.realdata
@pytest.mark.skipif(not (PDFS / "APPLE_2019_10K.pdf").is_file(), reason="no real 10-K PDF")
@needs_shared
def test_a_real_10k_pdf_named_by_company_and_year_finds_its_acceptance(
    extracted: dict[str, str],
) -> None:
    # APPLE_2019_10K.pdf: "APPLE" is the one indexed company whose name starts so; its cover
    # page's "fiscal year ended September 28, 2019" is the reportDate of one 10-K row
    pdf = PDFS / "APPLE_2019_10K.pdf"
    items, rejects = read([pdf, EDGAR / "submissions" / "CIK0000320193.json"])
    assert rejects == []
    assert _times(items) == {("2019-10-30T18:12:36-04:00", "exact")}
    found = passage_items(items)
    assert {value(i, FKG.accessionNumber) for i in found} == {"0000320193-19-000119"}
    assert {"Item 1A", "Item 7", "Item 8"} <= {value(i, FKG.item) for i in found}
    assert assert_passages_fit(items, extracted) == len(found) > 100
    assert Literal("application/pdf") in {q.object for q in found[0].quads}
