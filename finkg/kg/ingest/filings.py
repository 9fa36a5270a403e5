"""SEC filings as item-aware passages: EDGAR submissions indexes (`CIK##########.json`),
full submissions (SGML `.txt`), primary documents (HTML or inline XBRL, optionally `.gz`),
PDFs and text files, in any mix; the indexes are read first, whatever the order.

- A folder stands for the `.json`, `.txt`, `.htm(l)`, `.pdf` files under it (`.gz` too).
- Each submissions index gives a `fkg:Company` (its first ticker) in the market graph, and
  its `filings.recent` rows (form, items, dates, acceptance time, primary document).
- Each other file is one filing, matched to its index row by the SGML header's accession
  number, or else as `identify` says (accession or primary-document file name, inline-XBRL
  cover facts, `{ticker}-{form}-{YYYY-MM-DD}` and `{TICKER}_{YYYY}_{FORM}` names).
- Its `fkg:availableAt` is the SGML header's `<ACCEPTANCE-DATETIME>`, else the matched
  row's `acceptanceDateTime`, both US Eastern wall time (exact); else an approximate time
  that is never earlier than the truth, with the rule in `fkg:timeRule` (`acceptance`).
- Its text is the primary document's (the SGML `<DOCUMENT>` whose type is the form),
  extracted by `doctext`; its passages (`passages`) are `fkg:FilingPassage`s in the
  filings graph, `mint("passage", accession, index)`, with `fkg:text` exactly
  `text[charStart:charEnd]`, derived from the source document `mint("filing", accession)`;
  its primary statements' figures are statement facts (`kg/facts`), each derived from the
  passage that holds its row and written in that passage's item.
  A file with no accession number is keyed by its content hash (`sha256-<32 hex>`).
- Source documents: SHA-256 of the file's bytes (of the decompressed bytes for `.gz`);
  `dcterms:source` is the EDGAR archive URL (the full submission's for SGML, the primary
  document's for a matched HTML or text file), else the file's URI. Every passage item
  carries its source document's quads, so each checked chunk of items is complete.
- The company is the index's first ticker for the filing's CIK, else the store's company
  with that CIK (`IngestOptions.companies_by_cik`). Where no CIK is known, a ticker of a
  company with prices in the store (`IngestOptions.priced_tickers`) names it: in the file
  name (`ATVI_2019_10K.pdf`), else, for a PDF or text file, the first one in its cover
  page's "Trading Symbol(s)" table. A CIK finkg cannot place, or an HTML document with
  neither, is rejected before its text is extracted (PDF extraction is slow: about 0.1 s
  a page).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from finkg.errors import InputError
from finkg.kg.facts.rdf import Span, fact_quads
from finkg.kg.facts.read import read_facts
from finkg.kg.ingest import acceptance, common, doctext, edgar, identify, passages
from finkg.kg.ingest.acceptance import Availability
from finkg.kg.ingest.core import IngestOptions, Item, Reject
from finkg.kg.ingest.identify import Index
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, PROV, RDF, RDFS

SGML_MEDIA_TYPE = "text/plain"  # EDGAR serves full submissions as text


@dataclass(frozen=True)
class Filed:
    """One filing document, identified: what it is, whose, and when it became public."""

    form: str
    ticker: str
    accession: str | None
    when: Availability
    text: str
    source: str  # dcterms:source
    media_type: str
    data: bytes  # what the content hash is of


def load(paths: Sequence[Path], options: IngestOptions) -> Iterator[Item | Reject]:
    index = Index(dict(options.companies_by_cik), options.priced_tickers)
    documents = []
    for path in expand(paths):
        if not _is_index(path):
            documents.append(path)
            continue
        try:
            sub = edgar.parse_submissions(doctext.read_bytes(path))
        except InputError as e:
            yield Reject.of(e, source=str(path), line=e.line)
            continue
        index.add(sub)
        if sub.tickers:
            yield _company(sub, options, source=str(path))
    for path in documents:
        try:
            items = list(_passages(_identify(path, index), options, source=str(path)))
        except InputError as e:
            yield Reject.of(e, source=str(path), line=e.line)
            continue
        yield from items


SUFFIXES = (".json", ".txt", ".htm", ".html", ".xhtml", ".pdf")


def expand(paths: Sequence[Path]) -> list[Path]:
    """The paths, with each folder replaced by the filing files under it (sorted)."""
    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            out.append(path)
            continue
        found = [
            p
            for p in path.rglob("*")
            if p.is_file() and p.name.lower().removesuffix(".gz").endswith(SUFFIXES)
        ]
        out += sorted(found)
    return out


def _is_index(path: Path) -> bool:
    if ".json" in [s.lower() for s in path.suffixes]:
        return True
    try:
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rb") as f:
            return f.read(64).lstrip().startswith(b"{")
    except (OSError, EOFError):
        return False  # read as a document, which reports the error


def _company(sub: edgar.Submissions, options: IngestOptions, *, source: str) -> Item:
    node = mint("company", sub.tickers[0], base=options.base)
    q = common.Quads(options.graphs.market)
    q.node(
        node,
        (RDF.type, FKG.Company),
        (RDFS.label, common.string(sub.name)),
        (FKG.ticker, common.string(sub.tickers[0])),
        (FKG.cik, common.string(sub.cik)),
        (FKG.industry, common.string(sub.industry) if sub.industry else None),
    )
    return Item(node, q.items, source)


def _identify(path: Path, index: Index) -> Filed:
    raw = doctext.read_bytes(path)
    if not raw.strip():
        raise InputError("empty file: no filing in it")
    if edgar.is_sgml(raw):
        return _from_sgml(path, raw, index)
    return _from_document(path, raw, index)


def _ticker(index: Index, cik: str | None, path: Path) -> str:
    ticker = index.ticker(cik)
    if ticker:
        return ticker
    if cik:
        raise InputError(
            "no company with this CIK",
            field="CIK",
            value=cik,
            hint=f"ingest its submissions JSON (CIK{cik}.json) in the same call, or first a "
            "companies CSV with this CIK",
        )
    raise InputError(
        "cannot tell the company of this filing",
        field="file name",
        value=path.name,
        hint="name it TICKER_YYYY_FORM.pdf or ticker-form-YYYY-MM-DD.htm with the ticker of a "
        "company whose prices are in the store, or ingest the company's submissions JSON in "
        "the same call",
    )


def _no_time(form: str) -> InputError:
    return InputError(
        "no acceptance time, filing date or period end for this filing",
        field="acceptanceDateTime",
        value=form,
        hint="ingest its submissions JSON in the same call",
    )


def _from_sgml(path: Path, raw: bytes, index: Index) -> Filed:
    sub = edgar.parse_sgml(raw)
    h = sub.header
    row = index.by_accession.get(h.accession)
    cik = h.cik or (row.cik if row else None)
    ticker = _ticker(index, cik, path)
    when: Availability | None
    if h.acceptance:
        rule = "SGML header ACCEPTANCE-DATETIME, US Eastern wall time (America/New_York)"
        when = acceptance.exact(h.acceptance, field="ACCEPTANCE-DATETIME", rule=rule)
    else:
        when = _row_time(row, "the accession number in the SGML header", index)
        if when is None and h.filed:
            when = acceptance.by_filing_date(h.filed, "FILED AS OF DATE in the SGML header")
    if when is None:
        raise _no_time(h.form)
    primary = sub.primary()
    if primary is None or not primary.text.strip():
        line = primary.line if primary else None
        raise InputError("no document text in this full submission", field="DOCUMENT", line=line)
    body = edgar.unwrap(primary.text)
    html = re.search(rb"<(html|body|p|div|table)\b", body[:20000], re.I)
    kind = doctext.HTML if html else doctext.TEXT
    return Filed(
        form=h.form,
        ticker=ticker,
        accession=h.accession,
        when=when,
        text=doctext.extract(body, kind, source=str(path)),
        source=edgar.archive_url(cik, h.accession) if cik else path.resolve().as_uri(),
        media_type=SGML_MEDIA_TYPE,
        data=raw,
    )


def _from_document(path: Path, raw: bytes, index: Index) -> Filed:
    kind = doctext.media_type(path, raw)
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    stem = name.rsplit(".", 1)[0]
    row, how = identify.by_name(name, index)
    clues = identify.name_clues(stem, index)
    if kind == doctext.HTML:
        identify.html_clues(clues, raw)
    cik = row.cik if row else clues.cik
    ticker = index.ticker(cik) or clues.ticker
    if ticker is None and (cik is not None or kind == doctext.HTML or not index.priced_tickers):
        ticker = _ticker(index, cik, path)  # refused before the (slow, for PDFs) extraction
    form = row.form if row else clues.form
    if not form:
        raise InputError(
            "cannot tell which filing this is",
            field="file name",
            value=path.name,
            hint="name it after its accession number or EDGAR primaryDocument and ingest the "
            "submissions JSON in the same call, or name it TICKER_YYYY_10K.pdf / "
            "ticker-10-k-YYYY-MM-DD.htm",
        )
    text = doctext.extract(raw, kind, source=str(path))
    if kind != doctext.HTML:
        identify.cover_clues(clues, text, index)
    ticker = ticker or clues.ticker or _ticker(index, cik, path)
    if row is None:
        row, how = identify.by_clues(clues, index)
    when = _row_time(row, how, index) or _clue_time(clues, form, index, cik)
    if when is None:
        raise _no_time(form)
    source = path.resolve().as_uri()
    if row and row.primary_document and kind != doctext.PDF:
        source = edgar.archive_url(row.cik, row.accession, row.primary_document)
    return Filed(
        form=row.form if row else form,
        ticker=ticker,
        accession=row.accession if row else edgar.accession_in(stem),
        when=when,
        text=text,
        source=source,
        media_type=kind,
        data=raw,
    )


def _row_time(row: edgar.Filing | None, how: str, index: Index) -> Availability | None:
    """The time an index row gives: its acceptance time (exact, unless its index looks like
    UTC: then approximate, see `edgar.Clock`), else its filing date."""
    if row is None:
        return None
    if row.acceptance:
        rule = (
            "EDGAR submissions acceptanceDateTime read as US Eastern wall time "
            f"(America/New_York, its Z ignored); matched by {how}"
        )
        when = acceptance.exact(row.acceptance, field="acceptanceDateTime", rule=rule)
        clock = index.companies[row.cik].clock
        if not clock.looks_utc:
            return when
        rule = (
            f"approximate: {rule}; {clock.outside_as_eastern} of this index's {clock.total} "
            "times fall outside EDGAR's 06:00-22:00 Eastern hours when read so, as if they were "
            "UTC, so this may be 4-5 hours later than the true acceptance, never earlier"
        )
        return Availability(when.at, acceptance.APPROXIMATE, rule)
    if row.filing_date:
        where = f"filingDate of the index, matched by {how}"
        return acceptance.by_filing_date(row.filing_date, where)
    return None


def _clue_time(c: identify.Clues, form: str, index: Index, cik: str | None) -> Availability | None:
    if c.filed:
        return acceptance.by_filing_date(c.filed, "from the file name")
    if c.period:
        return acceptance.by_period(c.period, form, c.period_from)
    if c.year:
        sub = index.companies.get(cik or "")
        return acceptance.by_fiscal_year(c.year, form, sub.fiscal_year_end if sub else None)
    return None


def _passages(filed: Filed, options: IngestOptions, *, source: str) -> Iterator[Item]:
    if not filed.text:
        raise InputError("no text after extraction", field="text")
    pieces = passages.split(filed.text, form=filed.form)
    key = filed.accession or "sha256-" + common.content_hash(filed.data)[7:39]
    doc = mint("filing", key, base=options.base)
    company = mint("company", filed.ticker, base=options.base)
    sourcedoc = (
        common.Quads(options.graphs.filings)
        .source_document(doc, data=filed.data, source=filed.source, media_type=filed.media_type)
        .items
    )
    w = filed.when
    nodes = [mint("passage", key, str(i), base=options.base) for i in range(len(pieces))]
    facts = _facts(filed, key, pieces, nodes, company, options)
    for i, p in enumerate(pieces):
        node = nodes[i]
        q = common.Quads(options.graphs.filings, list(sourcedoc) + facts.get(node, []))
        q.node(
            node,
            (RDF.type, FKG.FilingPassage),
            (FKG.text, common.string(filed.text[p.start : p.end])),
            (FKG.charStart, common.integer(p.start)),
            (FKG.charEnd, common.integer(p.end)),
            (FKG.passageIndex, common.integer(i)),
            (FKG.item, common.string(p.item) if p.item else None),
            (FKG.accessionNumber, common.string(filed.accession) if filed.accession else None),
            (FKG.form, common.string(filed.form)),
            (FKG.availableAt, common.datetime(w.at)),
            (FKG.timeQuality, common.string(w.quality)),
            (FKG.timeRule, common.string(w.rule)),
            (FKG.sourceFamily, FKG.SecFiling),
            (FKG.about, company),
            (PROV.wasDerivedFrom, doc),
        )
        yield Item(node, q.items, source)


def _facts(filed: Filed, key: str, pieces, nodes, company, options) -> dict[object, list]:
    """The filing's statement facts (`kg/facts`), by the passage that holds each row: they
    go into that passage's item, so a filing's facts are written (and re-ingested) with it."""
    spans = [Span(n, p.start, p.end) for n, p in zip(nodes, pieces, strict=True)]
    quads = fact_quads(
        read_facts(filed.text),
        key=key,
        spans=spans,
        page_starts=(),
        available_at=common.datetime(filed.when.at),
        about=[company],
        graph=options.graphs.filings,
        base=options.base,
    )
    holder = {q.subject: q.object for q in quads if q.predicate == PROV.wasDerivedFrom}
    out: dict[object, list] = {}
    for q in quads:
        out.setdefault(holder[q.subject], []).append(q)
    return out
