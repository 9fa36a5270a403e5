"""EDGAR's own formats: the submissions index (`CIK##########.json`) and the full-submission
SGML (`<SEC-DOCUMENT>` with an `<SEC-HEADER>` and one `<DOCUMENT>` per file).

Both carry acceptance times, the SGML header's `<ACCEPTANCE-DATETIME>YYYYMMDDHHMMSS` and
the index's `acceptanceDateTime`; `acceptance` reads them (as US Eastern wall time). Every
index time is parsed here, so a bad one rejects its index with the row it is in.

>>> accession_in("0000320193-24-000123.txt"), accession_in("000032019324000123")
('0000320193-24-000123', '0000320193-24-000123')
>>> archive_url("0000320193", "0000320193-24-000123", "aapl-20240928.htm")
'https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm'
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from finkg.errors import InputError
from finkg.kg.ingest import acceptance, jsontext
from finkg.kg.ingest.acceptance import Clock

ARCHIVES = "https://www.sec.gov/Archives/edgar/data"
ACCESSION = re.compile(r"(?<!\d)(\d{10})-?(\d{2})-?(\d{6})(?!\d)")
_RECENT_KEYS = ("accessionNumber", "form", "filingDate")
_OPTIONAL_KEYS = ("items", "reportDate", "acceptanceDateTime", "primaryDocument")


@dataclass(frozen=True)
class Filing:
    """One row of a submissions index."""

    accession: str
    cik: str
    form: str
    filing_date: dt.date | None
    report_date: dt.date | None
    acceptance: str | None  # as written in the index
    items: tuple[str, ...]
    primary_document: str | None
    row: int = 0  # the row's position in filings.recent, from 0


@dataclass(frozen=True)
class Submissions:
    """A company's submissions index: who it is and its recent filings."""

    cik: str
    name: str
    tickers: tuple[str, ...]
    industry: str | None
    fiscal_year_end: str | None  # MMDD
    filings: tuple[Filing, ...]
    clock: Clock


def cik10(value: object) -> str:
    """A CIK as ten digits with leading zeros."""
    text = str(value).strip()
    if not text.isdigit() or len(text) > 10:
        raise InputError("a CIK is up to ten digits", field="cik", value=value)
    return text.zfill(10)


def accession_in(name: str) -> str | None:
    """The accession number written in a file name (with or without dashes), if any."""
    m = ACCESSION.search(name)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None


def archive_url(cik: str, accession: str, document: str | None = None) -> str:
    """The EDGAR archive URL of a filing's document, or of its full submission (`.txt`)."""
    folder = f"{ARCHIVES}/{int(cik)}/{accession.replace('-', '')}"
    return f"{folder}/{document or accession + '.txt'}"


def _date(text: object, *, field: str) -> dt.date | None:
    if text in (None, ""):
        return None
    try:
        return dt.date.fromisoformat(str(text)[:10])
    except ValueError:
        raise InputError("not a date (YYYY-MM-DD)", field=field, value=text) from None


def parse_submissions(data: bytes) -> Submissions:
    """A submissions index from its JSON; anything else is an InputError naming the field."""
    try:
        doc = jsontext.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise InputError(f"not valid JSON: {e}") from None
    listed = doc.get("filings", {}) if isinstance(doc, dict) else None
    recent = listed.get("recent") if isinstance(listed, dict) else None
    if not isinstance(doc, dict) or not isinstance(recent, dict) or "cik" not in doc:
        raise InputError(
            "not an EDGAR submissions index: needs 'cik' and 'filings.recent'",
            field="filings.recent",
            hint="give the JSON from https://data.sec.gov/submissions/CIK##########.json",
        )
    cik = cik10(doc["cik"])
    missing = [k for k in _RECENT_KEYS if not isinstance(recent.get(k), list)]
    if missing:
        raise InputError(
            "missing lists in filings.recent: " + ", ".join(missing), field="filings.recent"
        )
    lengths = {k: len(v) for k, v in recent.items() if isinstance(v, list)}
    if len(set(lengths.values())) > 1:
        raise InputError(
            "filings.recent lists have unequal lengths",
            field="filings.recent",
            value=", ".join(f"{k}={n}" for k, n in sorted(lengths.items())),
        )
    filings, walls = [], []
    for i, accession in enumerate(recent["accessionNumber"]):
        row = {k: recent[k][i] for k in (*_RECENT_KEYS, *_OPTIONAL_KEYS) if k in recent}
        at = f"[{i}]"
        if not isinstance(accession, str) or accession_in(accession) != accession:
            raise InputError(
                "not an accession number",
                field="filings.recent.accessionNumber" + at,
                value=accession,
            )
        items = tuple(s.strip() for s in str(row.get("items") or "").split(",") if s.strip())
        if row.get("acceptanceDateTime"):
            field = "filings.recent.acceptanceDateTime" + at
            at_wall = acceptance.exact(str(row["acceptanceDateTime"]), field=field, rule="").at
            walls.append(at_wall.replace(tzinfo=None))
        filings.append(
            Filing(
                accession=accession,
                cik=cik,
                form=str(row["form"]).strip(),
                filing_date=_date(row.get("filingDate"), field="filings.recent.filingDate" + at),
                report_date=_date(row.get("reportDate"), field="filings.recent.reportDate" + at),
                acceptance=row.get("acceptanceDateTime") or None,
                items=items,
                primary_document=row.get("primaryDocument") or None,
                row=i,
            )
        )
    tickers = tuple(str(t).upper() for t in doc.get("tickers") or [] if t)
    name = str(doc.get("name") or "").strip()
    if not name:
        raise InputError("missing field", field="name")
    fye = str(doc.get("fiscalYearEnd") or "").strip()
    return Submissions(
        cik=cik,
        name=name,
        tickers=tickers,
        industry=str(doc.get("sicDescription") or "").strip() or None,
        fiscal_year_end=fye if re.fullmatch(r"\d{4}", fye) else None,
        filings=tuple(filings),
        clock=Clock.of(walls),
    )


@dataclass(frozen=True)
class Header:
    """What a full submission's SGML header says about the filing."""

    accession: str
    form: str
    cik: str | None  # the first CENTRAL INDEX KEY (the filer's)
    company: str | None
    acceptance: str | None  # as written
    filed: dt.date | None
    period: dt.date | None
    items: tuple[str, ...] = ()  # ITEM INFORMATION descriptions


@dataclass(frozen=True)
class Document:
    """One `<DOCUMENT>` of a full submission: its type, file name and `<TEXT>` content."""

    type: str
    filename: str | None
    text: bytes
    line: int  # where its <DOCUMENT> tag is, from 1


@dataclass(frozen=True)
class Submission:
    header: Header
    documents: list[Document] = field(default_factory=list)

    def primary(self) -> Document | None:
        """The first document whose type is the form; else the first document."""
        return next((d for d in self.documents if d.type == self.header.form), None) or (
            self.documents[0] if self.documents else None
        )


def is_sgml(data: bytes) -> bool:
    head = data[:8192].upper()
    return b"<SEC-DOCUMENT>" in head or b"<SEC-HEADER>" in head or b"<IMS-HEADER>" in head


_HEADER = re.compile(
    rb"<(SEC|IMS)-HEADER>(.*?)(</(SEC|IMS)-HEADER>|(?=<DOCUMENT>)|\Z)", re.S | re.I
)
_DOCUMENT = re.compile(rb"<DOCUMENT>(.*?)(</DOCUMENT>|\Z)", re.S | re.I)
_TEXT = re.compile(rb"<TEXT>\s*(.*?)\s*(</TEXT>|\Z)", re.S | re.I)


def _tag(block: bytes, name: str) -> str | None:
    m = re.search(rb"<" + name.encode() + rb">[ \t]*([^\r\n<]*)", block, re.I)
    return m.group(1).decode("latin-1").strip() or None if m else None


def _field(header: str, name: str) -> list[str]:
    return [m.strip() for m in re.findall(rf"^\s*{re.escape(name)}:\s*(.*)$", header, re.M)]


def _first(header: str, name: str) -> str | None:
    """The first value of a header field, None when it has none."""
    return next(iter(_field(header, name)), None)


def parse_sgml(data: bytes) -> Submission:
    """A full submission's header and documents. No header, no accession number or form in
    it, or a file cut short (a header or document that is never closed) is an InputError."""
    m = _HEADER.search(data)
    if not m:
        raise InputError("no <SEC-HEADER> in this full submission", line=1, field="SEC-HEADER")
    line_of = lambda pos: data.count(b"\n", 0, pos) + 1  # noqa: E731
    if not m.group(3) and m.end() == len(data):
        raise InputError(
            "truncated: the header is never closed and no document follows",
            line=line_of(m.start()),
            field="SEC-HEADER",
        )
    block = m.group(0)
    header = block.decode("latin-1")
    accession = _first(header, "ACCESSION NUMBER")
    form = _first(header, "CONFORMED SUBMISSION TYPE")
    if not accession or accession_in(accession) != accession:
        raise InputError(
            "no ACCESSION NUMBER in the header",
            line=line_of(m.start()),
            field="ACCESSION NUMBER",
            value=accession,
        )
    if not form:
        raise InputError(
            "no CONFORMED SUBMISSION TYPE in the header",
            line=line_of(m.start()),
            field="CONFORMED SUBMISSION TYPE",
        )
    ciks = _field(header, "CENTRAL INDEX KEY")
    names = _field(header, "COMPANY CONFORMED NAME")
    filed = _first(header, "FILED AS OF DATE")
    period = _first(header, "CONFORMED PERIOD OF REPORT")
    head = Header(
        accession=accession,
        form=form,
        cik=cik10(ciks[0]) if ciks else None,
        company=names[0] if names else None,
        acceptance=_tag(block, "ACCEPTANCE-DATETIME"),
        filed=_yyyymmdd(filed, "FILED AS OF DATE"),
        period=_yyyymmdd(period, "CONFORMED PERIOD OF REPORT"),
        items=tuple(_field(header, "ITEM INFORMATION")),
    )
    documents = []
    for d in _DOCUMENT.finditer(data, m.end(2)):
        if not d.group(2):
            raise InputError(
                "truncated: a <DOCUMENT> is never closed", line=line_of(d.start()), field="DOCUMENT"
            )
        body = d.group(1)
        text = _TEXT.search(body)
        documents.append(
            Document(
                type=(_tag(body, "TYPE") or "").upper(),
                filename=_tag(body, "FILENAME"),
                text=text.group(1) if text else b"",
                line=line_of(d.start()),
            )
        )
    return Submission(head, documents)


def _yyyymmdd(text: str | None, name: str) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(text, "%Y%m%d").date()  # noqa: DTZ007 (a date)
    except ValueError:
        raise InputError("not a date (YYYYMMDD)", field=name, value=text) from None


def unwrap(text: bytes) -> bytes:
    """A document's `<TEXT>` without EDGAR's `<XBRL>` wrapper and `<PAGE>` markers."""
    text = re.sub(rb"^\s*<XBRL>\s*|\s*</XBRL>\s*$", b"", text, flags=re.I)
    return re.sub(rb"(?m)^[ \t]*<PAGE>[ \t]*\d*[ \t]*\r?$\n?", b"", text)
