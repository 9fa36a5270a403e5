"""A fuzzed corpus for every loader, run through the CLI as a user would (issue 24).

Each case starts from a small valid input of one kind (`SEEDS`) and changes it one to three
times at random (`mutate`): cut it short, flip bytes, insert a hostile token (a NUL, a
lone surrogate escape, 200 open brackets, an XML entity, a triple term, ...), put an
extreme value in place of a number, a date or a URL, repeat, drop or shuffle lines, or
re-encode the file. `run_case` ingests it with `finkg ingest KIND` (sometimes with
--skip-bad) and returns what a user would see: the exit code and whether a traceback
escaped; on exit 2 whether the store is as it was (a document that cannot be read may
leave its Error state, the lifecycle's audited write, and nothing else).

The corpus is a pure function of its seed: `cases(seed, per_kind)`. The tests run a small
one (`tests/test_fuzz_ingest.py`); `benchmarks/reliability.py` runs a larger one and
reports the exit codes seen.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from click.testing import CliRunner

from finkg.cli import cli
from finkg.kg.store import open_store

KINDS = ("rdf", "companies", "news", "prices", "filings", "fartrans", "documents")
NEWS_GRAPH = "https://w3id.org/finkg/id/graph/news"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
FNSPID = "Date,Article_title,Stock_symbol,Url,Publisher,Author,Article\n"
ISIN = "GRS000000018"
ARTICLE_TTL = (
    "<https://e.org/doc> a fkg:SourceDocument ;\n"
    '  fkg:contentHash "sha256:' + "ab" * 32 + '" ;\n'
    "  dcterms:source <https://example.org/news/1> .\n"
    "<https://e.org/news-1> a fkg:NewsArticle ;\n"
    '  fkg:text "Acme raises guidance" ;\n'
    '  fkg:availableAt "2020-04-30T16:30:00-04:00"^^xsd:dateTime ;\n'
    '  fkg:timeQuality "exact" ;\n'
    '  fkg:timeRule "publishedDate read as America/New_York" ;\n'
    "  fkg:sourceFamily fkg:News ;\n"
    "  fkg:about <https://w3id.org/finkg/id/company/ZQAW> ;\n"
    "  prov:wasDerivedFrom <https://e.org/doc> .\n"
)
TTL_PREFIXES = (
    "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
    "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
    "@prefix prov: <http://www.w3.org/ns/prov#> .\n"
)
SGML = (
    "<SEC-DOCUMENT>0099000001-20-000001.txt : 20200430\n"
    "<SEC-HEADER>0099000001-20-000001.hdr.sgml : 20200430\n"
    "<ACCEPTANCE-DATETIME>20200430163000\n"
    "ACCESSION NUMBER:\t\t0099000001-20-000001\n"
    "CONFORMED SUBMISSION TYPE:\t8-K\n"
    "FILED AS OF DATE:\t\t20200430\n"
    "FILER:\n\tCOMPANY DATA:\n\t\tCOMPANY CONFORMED NAME:\t\t\tACME WIDGETS CORP\n"
    "\t\tCENTRAL INDEX KEY:\t\t\t0099000001\n</SEC-HEADER>\n"
    "<DOCUMENT>\n<TYPE>8-K\n<SEQUENCE>1\n<TEXT>\n"
    "Item 2.02 Results of Operations.\n\nRevenue rose 12% to $409.6 million.\n"
    "</TEXT>\n</DOCUMENT>\n"
)
SUBMISSIONS = json.dumps(
    {
        "cik": "0099000001",
        "name": "Acme Widgets Corp",
        "tickers": ["ZQAW"],
        "fiscalYearEnd": "1231",
        "filings": {
            "recent": {
                "accessionNumber": ["0099000001-20-000001"],
                "form": ["8-K"],
                "filingDate": ["2020-04-30"],
                "reportDate": ["2020-04-30"],
                "acceptanceDateTime": ["2020-04-30T16:30:00.000Z"],
                "items": ["2.02"],
                "primaryDocument": ["acme-8k.htm"],
            }
        },
    }
)

# kind -> (file name -> content, extra CLI arguments); the file mutated is picked at random
SEEDS: dict[str, list[tuple[dict[str, str], list[str]]]] = {
    "rdf": [
        ({"a.trig": TTL_PREFIXES + f"<{NEWS_GRAPH}> {{\n" + ARTICLE_TTL + "}\n"}, []),
        ({"a.ttl": TTL_PREFIXES + ARTICLE_TTL}, ["--graph", "news"]),
        (
            {
                "a.nq": f'<https://e.org/a> <{LABEL}> "x" <{NEWS_GRAPH}> .\n'
                f'<https://e.org/a> <https://w3id.org/finkg/ns#ticker> "ZQAW" <{NEWS_GRAPH}> .\n'
            },
            [],
        ),
        (
            {
                "a.jsonld": json.dumps(
                    {
                        "@id": NEWS_GRAPH,
                        "@graph": [
                            {
                                "@id": "https://e.org/a",
                                "http://www.w3.org/2000/01/rdf-schema#label": "x",
                            }
                        ],
                    }
                )
            },
            [],
        ),
        (
            {
                "a.rdf": '<?xml version="1.0"?>\n'
                '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
                'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">\n'
                '<rdf:Description rdf:about="https://e.org/a"><rdfs:label>x</rdfs:label>'
                "</rdf:Description>\n</rdf:RDF>\n"
            },
            ["--graph", "news"],
        ),
    ],
    "companies": [
        (
            {"companies.csv": "ticker,name,cik\nZQAW,Acme Corp,99000001\nZQAB,Beta,\n"},
            [],
        )
    ],
    "news": [
        (
            {
                "news.jsonl": "".join(
                    json.dumps(
                        {
                            "symbol": "ZQAW",
                            "publishedDate": f"2019-03-0{d} 16:30:00",
                            "title": f"Acme item {d}",
                            "site": "wire",
                            "text": "Acme beat estimates.",
                            "url": f"https://example.org/acme-{d}",
                        }
                    )
                    + "\n"
                    for d in (1, 4, 5)
                )
            },
            [],
        ),
        (
            {
                "news.csv": FNSPID
                + '2020-06-05 06:30:54 UTC,Acme beats,ZQAW,https://e.org/f1,wire,A. B.,"Beat."\n'
                + '2020-06-08 06:30:54 UTC,Acme again,ZQAW,https://e.org/f2,wire,A. B.,"Again."\n'
            },
            [],
        ),
    ],
    "prices": [
        (
            {
                "ZQAW.csv": "Date,Open,High,Low,Close,Adj Close,Volume\n"
                "2019-03-01,10.0,10.5,9.5,10.2,10.2,1000\n"
                "2019-03-04,10.2,10.6,9.9,10.4,10.4,1200\n"
                "2019-03-05,10.4,10.9,10.1,10.8,10.8,900\n"
            },
            [],
        )
    ],
    "filings": [
        ({"CIK0099000001.json": SUBMISSIONS, "0099000001-20-000001.txt": SGML}, []),
    ],
    "fartrans": [
        (
            {
                "customers.csv": "customerID,customerType,riskLevel,investmentCapacity\n"
                "C1,Mass,Conservative,CAP_LT30K\n",
                "assets.csv": "ISIN,assetName,assetCategory,assetSubCategory,sector,industry\n"
                f"{ISIN},Acme Bond,Bond,Corporate,Industrials,Machinery\n",
                "closes.csv": f"ISIN,timestamp,closePrice\n{ISIN},2020-01-02,3.5\n"
                f"{ISIN},2020-01-03,3.6\n",
                "transactions.csv": "customerID,ISIN,transactionID,transactionType,timestamp,"
                f"totalValue,units\nC1,{ISIN},T1,Buy,2020-01-02 10:00:00,100.0,2\n",
            },
            [],
        )
    ],
    "documents": [
        (
            {
                "report.txt": "Acme Widgets annual report.\n\nRevenue rose 5% to $10 million.\n",
                "report.txt.meta.json": json.dumps(
                    {
                        "published": "2019-02-16T08:00:00-05:00",
                        "title": "Annual report",
                        "tickers": ["ZQAW"],
                        "source": "https://example.org/report",
                    }
                ),
            },
            [],
        ),
        (
            {
                "page.html": "<html><head><title>Q1</title></head><body><h1>Results</h1>"
                "<p>Revenue rose 12%.</p></body></html>\n",
                "page.html.meta.json": '{"published": "2019-05-01"}',
            },
            [],
        ),
    ],
}

HOSTILE = [
    b"\x00",
    b"\\ud800",
    b"\\udfff",
    b"\xff\xfe",
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8 bytes
    b'"',
    b",",
    b"\n",
    b"\r",
    b"{" * 200,
    b"[" * 200,
    b"<" * 5,
    b'<!DOCTYPE x [<!ENTITY a "aaaa">]>',
    b"&a;",
    b"<<( <https://e.org/b> <https://e.org/c> <https://e.org/d> )>>",
    b"@en--ltr",
    b"^^<http://www.w3.org/2001/XMLSchema#decimal>",
    b"\xe2\x80\xae",  # right-to-left override
    b"\\",
    b"'",
    b"_:b0",
    b"GRAPH",
    b"<https://w3id.org/finkg/id/graph/audit>",
    b"<https://w3id.org/finkg/id/graph/ontology>",
    b"x" * 5000,
]
NUMBERS = [
    b"1e25", b"1e-30", b"1e300", b"NaN", b"-1", b"0", b"-0", b"INF", b"",
    b"1.0000000000000000001", b"99999999999999999999999", b"9223372036854775808", b"0x10",
    b"1_000",
]  # fmt: skip
DATES = [
    b"2100-01-04", b"2019-03-10 02:30:00", b"2019-11-03 01:30:00", b"0000-00-00", b"2019-02-30",
    b"9999-12-31T23:59:59Z", b"2035-12-31", b"1989-12-29", b"2019-03-01T25:00:00",
    b"2019-03-01T16:30:00+25:00", b"2019-03-01T16:30:00",
]  # fmt: skip
URLS = [
    b"javascript:alert(1)", b"https://e.org/a b", b"", b"http://[::1", b"file:///etc/passwd",
    b"data:text/html,x", b"//e.org/a", b"https://e.org/\\ud800",
]  # fmt: skip
_NUMBER = re.compile(rb"(?<![\w.])-?[0-9]+(\.[0-9]+)?(?![\w-])")
_DATE = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9:]{8})?")
_URL = re.compile(rb"https?://[^\s\"'<>,]+")


def _replace(
    pattern: re.Pattern[bytes], values: list[bytes]
) -> Callable[[bytes, random.Random], bytes]:
    def change(data: bytes, rng: random.Random) -> bytes:
        found = list(pattern.finditer(data))
        if not found:
            return data
        m = rng.choice(found)
        return data[: m.start()] + rng.choice(values) + data[m.end() :]

    return change


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _insert(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(HOSTILE) + data[at:]


def _lines(
    change: Callable[[list[bytes], random.Random], None],
) -> Callable[[bytes, random.Random], bytes]:
    def apply(data: bytes, rng: random.Random) -> bytes:
        lines = data.split(b"\n")
        change(lines, rng)
        return b"\n".join(lines)

    return apply


def _repeat(lines: list[bytes], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])


def _drop(lines: list[bytes], rng: random.Random) -> None:
    if len(lines) > 1:
        del lines[rng.randrange(len(lines))]


def _reencode(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", errors="replace")
    return text.encode(rng.choice(["utf-16", "latin-1", "utf-8-sig", "cp1252"]), errors="replace")


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": _truncate,
    "flip bytes": _flip,
    "insert hostile token": _insert,
    "extreme number": _replace(_NUMBER, NUMBERS),
    "odd date": _replace(_DATE, DATES),
    "odd URL": _replace(_URL, URLS),
    "repeat a line": _lines(_repeat),
    "drop a line": _lines(_drop),
    "shuffle lines": _lines(lambda lines, rng: rng.shuffle(lines)),
    "re-encode": _reencode,
}


@dataclass
class Case:
    kind: str
    files: dict[str, bytes]
    args: list[str]
    skip_bad: bool
    mutations: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.kind}: {', '.join(self.mutations)}{' (--skip-bad)' if self.skip_bad else ''}"


def cases(seed: int, per_kind: int) -> list[Case]:
    """`per_kind` mutated inputs of each kind, the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for kind in KINDS:
        for _ in range(per_kind):
            files, args = rng.choice(SEEDS[kind])
            data = {name: text.encode("utf-8") for name, text in files.items()}
            target = rng.choice(sorted(data))
            picked = rng.sample(sorted(MUTATIONS), rng.randint(1, 3))
            for name in picked:
                data[target] = MUTATIONS[name](data[target], rng)
            out.append(Case(kind, data, list(args), rng.random() < 0.25, picked))
    return out


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    traceback: str | None  # an exception that escaped the CLI
    unchanged: bool  # on exit 2: the store is as it was (see the module docstring)
    output: str


def _lines_of(location: Path) -> set[str]:
    with open_store(location, read_only=True) as s:
        text = s._store.dump(format=ox.RdfFormat.N_QUADS) or b""  # type: ignore[attr-defined]
    return set(text.decode().splitlines())


def _only_error_states(added: set[str]) -> bool:
    """Whether `added` is no more than a document's Error state: lifecycle statements in the
    documents and audit graphs, no chunk."""
    graphs = {
        "<https://w3id.org/finkg/id/graph/documents>",
        "<https://w3id.org/finkg/id/graph/audit>",
    }
    return all(line.rsplit(" ", 2)[-2] in graphs for line in added) and not any(
        "#DocumentChunk>" in line for line in added
    )


def run_case(case: Case, folder: Path, env: dict[str, str]) -> Outcome:
    """Ingest `case` (its files written under `folder`) into the store of `env`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
        if not name.endswith(".meta.json"):
            paths.append(str(folder / name))
    args = ["ingest", case.kind, *paths, *case.args]
    if case.skip_bad:
        args += ["--skip-bad", "--rejects", str(folder / "rejects.jsonl")]
    store = Path(env["FINKG_STORE"])
    before = _lines_of(store)
    result = CliRunner().invoke(cli, args, env=env)
    escaped = result.exception if not isinstance(result.exception, SystemExit) else None
    trace = None
    if escaped is not None:
        import traceback

        trace = "".join(traceback.format_exception(escaped))
    unchanged = True
    if result.exit_code == 2:
        added = _lines_of(store) - before
        unchanged = not added or (case.kind == "documents" and _only_error_states(added))
    return Outcome(result.exit_code, trace, unchanged, result.output)


def validate(env: dict[str, str]) -> tuple[int, str]:
    """`finkg validate` on the store of `env`: what every accepted input must pass."""
    result = CliRunner().invoke(cli, ["validate"], env=env)
    return result.exit_code, result.output
