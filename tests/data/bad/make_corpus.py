"""Write the bad-input corpus: one malformed file per case, for every loader.

    python tests/data/bad/make_corpus.py   # rewrites the files beside it

Each case is (file name, loader kind, what is wrong); `cases.json` (written too) lists them
with the line and field the error must name, which `tests/test_bad_inputs.py` checks. The
files are committed; this script documents how each was made and remakes them.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def news(**fields: object) -> str:
    record: dict[str, object] = {
        "symbol": "ZQAW",
        "publishedDate": "2019-03-01 16:30:00",
        "title": "Acme beats estimates",
        "site": "wire",
        "text": "Acme beat estimates.",
        "url": "https://example.org/acme-1",
    }
    record.update(fields)
    return json.dumps({k: v for k, v in record.items() if v is not None}) + "\n"


GOOD_NEWS = news(url="https://example.org/acme-0")
FNSPID_HEADER = "Date,Article_title,Stock_symbol,Url,Publisher,Author,Article\n"
FNSPID_ROW = (
    '2020-06-05 06:30:54 UTC,Acme beats,ZQAW,https://example.org/f1,wire,A. B.,"Acme beat."\n'
)
BARS = "Date,Open,High,Low,Close,Adj Close,Volume\n"
BAR1 = "2019-03-01,10.0,10.5,9.5,10.2,10.2,1000\n"
BAR2 = "2019-03-04,10.2,10.6,9.9,10.4,10.4,1200\n"
CUSTOMERS = "customerID,customerType,riskLevel,investmentCapacity\n"
ASSETS = "ISIN,assetName,assetCategory,assetSubCategory,sector,industry\n"
ISIN = "GRS000000018"  # a valid ISIN (check digit 8), defined by good/fartrans-assets.csv
CLOSES = "ISIN,timestamp,closePrice\n"
TRANSACTIONS = "customerID,ISIN,transactionID,transactionType,timestamp,totalValue,units\n"
PREFIX = (
    "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
)
NEWS_GRAPH = "https://w3id.org/finkg/id/graph/news"
AUDIT_GRAPH = "https://w3id.org/finkg/id/graph/audit"
ONTOLOGY_GRAPH = "https://w3id.org/finkg/id/graph/ontology"
ARTICLE = (  # a news article and its source document, but for its fkg:text
    "<https://e.org/doc> a fkg:SourceDocument ;\n"
    '  fkg:contentHash "sha256:' + "ab" * 32 + '" ;\n'
    "  <http://purl.org/dc/terms/source> <https://example.org/news/1> .\n"
    "<https://e.org/news-1> a fkg:NewsArticle ;\n"
    '  fkg:availableAt "2020-04-30T16:30:00-04:00"^^xsd:dateTime ;\n'
    '  fkg:timeQuality "exact" ;\n'
    '  fkg:timeRule "publishedDate read as America/New_York" ;\n'
    "  fkg:sourceFamily fkg:News ;\n"
    "  fkg:about <https://w3id.org/finkg/id/company/ZQAW> ;\n"
    "  <http://www.w3.org/ns/prov#wasDerivedFrom> <https://e.org/doc> .\n"
)
LAUGHS = (  # a billion laughs, seven levels deep: 659 bytes once stored 100 MB
    '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n<!ENTITY a0 "aaaaaaaaaa">\n'
    + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">\n' for i in range(1, 8))
    + ']>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns:fkg="https://w3id.org/finkg/ns#">\n'
    '<rdf:Description rdf:about="https://e.org/a"><fkg:text>&a7;</fkg:text>'
    "</rdf:Description>\n</rdf:RDF>\n"
)


def submissions(**recent: list[object]) -> str:
    base: dict[str, list[object]] = {
        "accessionNumber": ["0000320193-19-000119"],
        "filingDate": ["2019-10-30"],
        "acceptanceDateTime": ["2019-10-30T16:30:27.000Z"],
        "form": ["8-K"],
        "items": ["2.02,9.01"],
        "primaryDocument": ["a8-kq420199282019.htm"],
    }
    base.update(recent)
    return json.dumps(
        {"cik": "320193", "name": "Apple Inc.", "tickers": ["AAPL"], "filings": {"recent": base}}
    )


# (file, kind, expected line or None, expected field or None, reason substring, content)
CASES: list[tuple[str, str, int | None, str | None, str, bytes | str]] = [
    # news: nasdaq-news JSON Lines / JSON
    ("news-empty.jsonl", "news", None, None, "empty file", ""),
    ("news-blank-lines.jsonl", "news", None, None, "empty file", "\n\n  \n"),
    ("news-truncated.jsonl", "news", 2, None, "not valid JSON", GOOD_NEWS + news()[:60]),
    (
        "news-latin1.jsonl",
        "news",
        None,
        None,
        "cannot read file",
        GOOD_NEWS.encode() + GOOD_NEWS.replace("Acme", "Société Générale").encode("latin-1"),
    ),
    ("news-utf16.jsonl", "news", None, None, "cannot read file", GOOD_NEWS.encode("utf-16")),
    ("news-no-symbol.jsonl", "news", 2, "symbol", "missing field", GOOD_NEWS + news(symbol=None)),
    (
        "news-empty-symbol.jsonl",
        "news",
        2,
        "symbol",
        "missing field",
        GOOD_NEWS + news(symbol="  "),
    ),
    (
        "news-no-date.jsonl",
        "news",
        2,
        "publishedDate",
        "missing field",
        GOOD_NEWS + news(publishedDate=None),
    ),
    (
        "news-impossible-date.jsonl",
        "news",
        2,
        "publishedDate",
        "not a timestamp",
        GOOD_NEWS + news(publishedDate="2019-02-30 10:00:00"),
    ),
    (
        "news-hour-25.jsonl",
        "news",
        2,
        "publishedDate",
        "not a timestamp",
        GOOD_NEWS + news(publishedDate="2019-03-01 25:00:00"),
    ),
    (
        "news-words-for-date.jsonl",
        "news",
        2,
        "publishedDate",
        "not a timestamp",
        GOOD_NEWS + news(publishedDate="March 1st, 2019"),
    ),
    (
        "news-bad-offset.jsonl",
        "news",
        2,
        "publishedDate",
        "not a timestamp",
        GOOD_NEWS + news(publishedDate="2019-03-01T16:30:00+25:00"),
    ),
    ("news-title-number.jsonl", "news", 2, "title", "expected a string", GOOD_NEWS + news(title=5)),
    ("news-no-title.jsonl", "news", 2, "title", "missing field", GOOD_NEWS + news(title=None)),
    ("news-not-object.jsonl", "news", 2, None, "not a JSON object", GOOD_NEWS + "[1, 2]\n"),
    (
        "news-array-element.json",
        "news",
        None,
        None,
        "array element 2 is not an object",
        "[" + GOOD_NEWS.strip() + ", 5]",
    ),
    ("news-broken-array.json", "news", 1, None, "not valid JSON", "[" + GOOD_NEWS.strip() + ","),
    (
        "news-control-char.jsonl",
        "news",
        2,
        None,
        "not valid JSON",
        GOOD_NEWS + news()[:-3].replace("estimates", "esti\x00mates") + "}\n",
    ),
    (
        "news-oversized-title.jsonl.gz",
        "news",
        2,
        "title",
        "longer than",
        gzip.compress((GOOD_NEWS + news(title="x" * 1_000_001)).encode(), mtime=0),
    ),
    ("news-not-gzip.jsonl.gz", "news", None, None, "cannot read file", GOOD_NEWS),
    # issue 24: accepted, or a traceback
    (
        "news-future.jsonl",
        "news",
        2,
        "publishedDate",
        "after the moment of ingestion",
        GOOD_NEWS + news(publishedDate="2100-01-04 09:00:00"),
    ),
    (
        "news-dst-gap.jsonl",
        "news",
        2,
        "publishedDate",
        "no such local time",
        GOOD_NEWS + news(publishedDate="2019-03-10 02:30:00"),
    ),
    (
        "news-dst-overlap.jsonl",
        "news",
        2,
        "publishedDate",
        "ambiguous local time",
        GOOD_NEWS + news(publishedDate="2019-11-03 01:30:00"),
    ),
    (
        "news-javascript-url.jsonl",
        "news",
        2,
        "url",
        "not an http(s) URL",
        GOOD_NEWS + news(url="javascript:alert(1)"),
    ),
    (
        "news-url-spaces.jsonl",
        "news",
        2,
        "url",
        "not a valid IRI",
        GOOD_NEWS + news(url="https://example.org/acme 1"),
    ),
    (
        "news-surrogate.jsonl",
        "news",
        2,
        "title",
        "lone surrogate",
        GOOD_NEWS + news(title="Acme \ud800 beats"),
    ),
    (
        "news-deep.jsonl",
        "news",
        2,
        None,
        "nested deeper than",
        GOOD_NEWS + '{"title": ' + "[" * 5_000 + "]" * 5_000 + "}\n",
    ),
    (
        "news-same-url-other-title.jsonl",
        "news",
        3,
        "key",
        "news-same-url-other-title.jsonl line 2",
        GOOD_NEWS + news() + news(title="Acme misses estimates"),
    ),
    # news: FNSPID CSV
    (
        "fnspid-no-title-column.csv",
        "news",
        1,
        "header",
        "missing columns",
        "Date,Stock_symbol,Url\n2020-06-05 06:30:54 UTC,ZQAW,https://example.org/f\n",
    ),
    (
        "fnspid-extra-values.csv",
        "news",
        3,
        "row",
        "more values than columns",
        FNSPID_HEADER + FNSPID_ROW + FNSPID_ROW.strip() + ",extra,more\n",
    ),
    (
        "fnspid-bad-date.csv",
        "news",
        3,
        "Date",
        "not a timestamp",
        FNSPID_HEADER + FNSPID_ROW + FNSPID_ROW.replace("2020-06-05", "2020-13-05"),
    ),
    ("fnspid-empty.csv", "news", None, None, "empty file", ""),
    # prices: one CSV per ticker, named by it
    ("ZQBA.csv", "prices", None, None, "empty file", ""),
    (
        "ZQBB.csv",
        "prices",
        1,
        "header",
        "missing columns",
        "Date,Open,High,Low,Adj Close,Volume\n2019-03-01,10,11,9,10,100\n",
    ),
    (
        "ZQBC.csv",
        "prices",
        3,
        "Close",
        "not a finite number",
        BARS + BAR1 + BAR2.replace("10.4,10.4", "NaN,10.4"),
    ),
    (
        "ZQBD.csv",
        "prices",
        3,
        "Open",
        "must be positive",
        BARS + BAR1 + BAR2.replace("10.2,10.6", "-10.2,10.6"),
    ),
    (
        "ZQBE.csv",
        "prices",
        3,
        "Date",
        "not a date",
        BARS + BAR1 + BAR2.replace("2019-03-04", "2019-02-30"),
    ),
    (
        "ZQBF.csv",
        "prices",
        3,
        "Volume",
        "not a number",
        BARS + BAR1 + BAR2.replace(",1200", ",lots"),
    ),
    (
        "ZQBG.csv",
        "prices",
        3,
        "Volume",
        "must not be negative",
        BARS + BAR1 + BAR2.replace(",1200", ",-5"),
    ),
    (
        "ZQBH.csv",
        "prices",
        3,
        "High",
        "not a finite number",
        BARS + BAR1 + BAR2.replace("10.6", "inf"),
    ),
    ("ZQBI.csv", "prices", 3, "row", "values for", BARS + BAR1 + BAR2.strip() + ",7,8\n"),
    ("ZQBJ.csv", "prices", 3, "Close", "missing price", BARS + BAR1 + "2019-03-04,10.2,10.6,9.9\n"),
    ("ZQBK.csv", "prices", None, None, "cannot read file", (BARS + BAR1).encode("utf-16")),
    (
        "ZQBL.csv",
        "prices",
        3,
        "Date",
        "duplicate session",
        BARS + BAR1 + BAR1.replace("10.2,10.2", "10.3,10.3"),
    ),
    ("ZQBM.csv", "prices", 3, "Date", "not a date", BARS + BAR1 + "Monday,10,11,9,10,10,100\n"),
    (
        "ZQBN.csv",
        "prices",
        3,
        "Open",
        "out of range",
        BARS + BAR1 + "2019-03-04,1e400,1e400,1e400,1e400,1e400,5\n",
    ),
    # numbers Oxigraph's xsd:decimal cannot hold (issue 24: validate flagged them after ingest)
    (
        "ZQBO.csv",
        "prices",
        3,
        "Volume",
        "out of range",
        BARS + BAR1 + BAR2.replace(",1200", ",1e25"),
    ),
    (
        "ZQBP.csv",
        "prices",
        3,
        "Close",
        "more decimal places",
        BARS + BAR1 + BAR2.replace("10.4,10.4", "10.4000000000000000001,10.4"),
    ),
    (
        "ZQBQ.csv",
        "prices",
        3,
        "Open",
        "more decimal places",
        BARS + BAR1 + "2019-03-04,1e-30,10.6,1e-30,10.4,10.4,1200\n",
    ),
    ("ZQBR.csv", "prices", 3, "High", "out of range", BARS + BAR1 + BAR2.replace("10.6", "1e300")),
    (
        "ZQBS.csv",
        "prices",
        3,
        "Date",
        "after the moment of ingestion",
        BARS + BAR1 + BAR2.replace("2019-03-04", "2035-12-03"),  # the calendar ends in 2035
    ),
    # companies
    (
        "companies-same-ticker-other-name.csv",
        "companies",
        4,
        "key",
        "companies-same-ticker-other-name.csv line 2",
        "ticker,name\nZQDD,Acme\nZQEE,Beta\nZQDD,Acme Holdings\n",
    ),
    (
        "companies-huge-field.csv",
        "companies",
        2,
        "row",
        "field larger than field limit",
        "ticker,name\nZQDD," + "x" * 200_000 + "\n",
    ),
    ("companies-no-name.csv", "companies", 1, "header", "missing columns", "ticker\nZQAW\n"),
    ("companies-empty.csv", "companies", None, None, "empty file", ""),
    ("companies-bad-cik.csv", "companies", 2, "cik", "CIK", "ticker,name,cik\nZQAW,Acme,12ab\n"),
    (
        "companies-bad-ticker.csv",
        "companies",
        2,
        "https://w3id.org/finkg/ns#ticker",
        "upper-case",
        "ticker,name\nZQ AW!,Acme\n",
    ),
    # FAR-Trans
    (
        "fartrans-unknown-columns.csv",
        "fartrans",
        1,
        "header",
        "FAR-Trans",
        "id,when,what\n1,2020-01-01,x\n",
    ),
    (
        "fartrans-no-customer-id.csv",
        "fartrans",
        3,
        "customerID",
        "missing",
        CUSTOMERS + "C1,Mass,Conservative,CAP_LT30K\n,Mass,Income,CAP_LT30K\n",
    ),
    (
        "fartrans-bad-isin.csv",
        "fartrans",
        2,
        "ISIN",
        "ISIN",
        ASSETS + "GRS000000002,Acme,Bond,Corp,Ind,Mach\n",
    ),
    (
        "fartrans-negative-close.csv",
        "fartrans",
        2,
        "closePrice",
        "must be positive",
        CLOSES + f"{ISIN},2020-01-02,-3.5\n",
    ),
    (
        "fartrans-unknown-asset.csv",
        "fartrans",
        2,
        "ISIN",
        "unknown asset",
        TRANSACTIONS + "C1,GRS000000026,T1,Buy,2020-01-02 10:00:00,100.0,2\n",
    ),
    (
        "fartrans-bad-type.csv",
        "fartrans",
        2,
        "transactionType",
        "Buy or Sell",
        TRANSACTIONS + f"C1,{ISIN},T1,Hold,2020-01-02 10:00:00,100.0,2\n",
    ),
    (
        "fartrans-impossible-time.csv",
        "fartrans",
        2,
        "timestamp",
        "not a date",
        CLOSES + f"{ISIN},2020-02-31,3.5\n",
    ),
    (
        "fartrans-nan-value.csv",
        "fartrans",
        2,
        "closePrice",
        "not a finite number",
        CLOSES + f"{ISIN},2020-01-02,NaN\n",
    ),
    (
        "fartrans-negative-units.csv",
        "fartrans",
        2,
        "units",
        "must be positive",
        TRANSACTIONS + f"C1,{ISIN},T1,Buy,2020-01-02 10:00:00,100.0,-2\n",
    ),
    (
        "fartrans-unknown-customer.csv",
        "fartrans",
        2,
        "customerID",
        "unknown customer",
        TRANSACTIONS + f"C9,{ISIN},T1,Buy,2020-01-02 10:00:00,100.0,2\n",
    ),
    (
        "fartrans-future.csv",
        "fartrans",
        2,
        "timestamp",
        "after the moment of ingestion",
        TRANSACTIONS + f"C1,{ISIN},T1,Buy,2100-01-04 10:00:00,100.0,2\n",
    ),
    (
        "fartrans-dst-gap.csv",
        "fartrans",
        2,
        "timestamp",
        "no such local time",
        TRANSACTIONS + f"C1,{ISIN},T1,Buy,2019-03-31 03:30:00,100.0,2\n",  # Europe/Athens
    ),
    # SEC filings
    ("CIK0000320193-truncated.json", "filings", 1, None, "not valid JSON", submissions()[:120]),
    (
        "CIK0000320193-no-recent.json",
        "filings",
        None,
        "filings.recent",
        "recent",
        json.dumps({"cik": "320193", "name": "Apple Inc.", "filings": {}}),
    ),
    (
        "CIK0000320193-bad-acceptance.json",
        "filings",
        None,
        "filings.recent.acceptanceDateTime[0]",
        "not an EDGAR acceptance time",
        submissions(acceptanceDateTime=["2019-10-32T16:30:27.000Z"]),
    ),
    (
        "CIK0000320193-future.json",
        "filings",
        None,
        "filings.recent.acceptanceDateTime[0]",
        "in the future",
        submissions(acceptanceDateTime=["2099-10-30T16:30:27.000Z"], filingDate=["2099-10-30"]),
    ),
    (
        "CIK0000320193-ragged.json",
        "filings",
        None,
        "filings.recent",
        "length",
        submissions(form=["8-K", "10-Q"]),
    ),
    (
        "ZQXX_2019_10K.pdf",
        "filings",
        None,
        "file name",
        "cannot tell the company",
        b"%PDF-1.4\n1 0 obj << /Type /Catalog",
    ),
    (
        "CIK0000320193-surrogate.json",
        "filings",
        None,
        "name",
        "lone surrogate",
        submissions().replace('"Apple Inc."', '"Apple \\ud800 Inc."'),
    ),
    (
        "CIK0000320193-deep.json",
        "filings",
        None,
        None,
        "nested deeper than",
        '{"cik": "320193", "filings": ' + "[" * 5_000 + "]" * 5_000 + "}",
    ),
    # RDF files
    (
        "broken.ttl",
        "rdf",
        3,
        None,
        "not valid Turtle",
        PREFIX + f'GRAPH <{NEWS_GRAPH}> {{ }}\n<https://e.org/a> fkg:text "x" ;\n  fkg:text .\n',
    ),
    ("broken.jsonld", "rdf", 1, None, "not valid JSON-LD", '{"@id": "https://e.org/a", "x": '),
    (
        "naive-time.trig",
        "rdf",
        4,
        "https://w3id.org/finkg/ns#availableAt",
        "no zone",
        PREFIX
        + f"<{NEWS_GRAPH}> {{\n"
        + '<https://e.org/a> fkg:availableAt "2020-01-02T10:00:00"^^xsd:dateTime . }\n',
    ),
    (
        "default-graph.nt",
        "rdf",
        1,
        None,
        "outside a named graph",
        '<https://e.org/a> <https://w3id.org/finkg/ns#text> "x" .\n',
    ),
    (
        "unknown-graph.nq",
        "rdf",
        1,
        "graph",
        "not one of finkg's",
        '<https://e.org/a> <https://w3id.org/finkg/ns#text> "x" <https://e.org/other> .\n',
    ),
    (
        "bad-iri.nq",
        "rdf",
        1,
        None,
        "not valid N-Quads",
        f'<https://e.org/a b> <https://w3id.org/finkg/ns#text> "x" <{NEWS_GRAPH}> .\n',
    ),
    # issue 24: what `ingest rdf` once wrote with exit 0
    (
        "rdf-commit-in-audit.trig",
        "rdf",
        3,
        "graph",
        "finkg alone",
        PREFIX + f"<{AUDIT_GRAPH}> {{\n"
        "<https://w3id.org/finkg/id/commit/x> a fkg:Commit ; fkg:sequence 999999 .\n}\n",
    ),
    (
        "rdf-redefines-ontology.trig",
        "rdf",
        3,
        "graph",
        "finkg alone",
        PREFIX + f"<{ONTOLOGY_GRAPH}> {{\n"
        "fkg:NewsArticle <http://www.w3.org/2000/01/rdf-schema#subClassOf> fkg:Nothing .\n}\n",
    ),
    ("rdf-entities.rdf", "rdf", 3, "DOCTYPE", "entity", LAUGHS),
    # issue 38: finkg's vocabulary redefined from a data graph (exit 0 before)
    (
        "rdf-redefines-vocabulary.trig",
        "rdf",
        4,
        "http://www.w3.org/2000/01/rdf-schema#subClassOf",
        "finkg's vocabulary",
        PREFIX + f"<{NEWS_GRAPH}> {{\n"
        "fkg:NewsArticle <http://www.w3.org/2000/01/rdf-schema#subClassOf> fkg:Nothing .\n"
        "fkg:availableAt <http://www.w3.org/2000/01/rdf-schema#range> xsd:string .\n}\n",
    ),
    (
        "rdf-redefines-prov.trig",
        "rdf",
        5,
        "http://www.w3.org/2000/01/rdf-schema#subClassOf",
        "finkg's vocabulary",
        PREFIX + "@prefix prov: <http://www.w3.org/ns/prov#> .\n" + f"<{NEWS_GRAPH}> {{\n"
        "prov:Entity <http://www.w3.org/2000/01/rdf-schema#subClassOf> fkg:Harmless .\n}\n",
    ),
    (
        "rdf-triple-term.trig",
        "rdf",
        4,
        "https://w3id.org/finkg/ns#about",
        "RDF 1.2",
        PREFIX + f"<{NEWS_GRAPH}> {{\n"
        "<https://e.org/a> fkg:about <<( <https://e.org/b> fkg:about <https://e.org/c> )>> .\n}\n",
    ),
    (
        "rdf-no-text.trig",
        "rdf",
        7,  # the node without it
        "https://w3id.org/finkg/ns#text",
        "fkg:text",
        PREFIX + f"<{NEWS_GRAPH}> {{\n" + ARTICLE + "}\n",
    ),
    (
        "rdf-future.trig",
        "rdf",
        8,
        "https://w3id.org/finkg/ns#availableAt",
        "after the moment of ingestion",
        PREFIX
        + f"<{NEWS_GRAPH}> {{\n"
        + ARTICLE.replace("2020-04-30", "2100-04-30").replace(
            "  fkg:sourceFamily", '  fkg:text "Acme raises guidance" ;\n  fkg:sourceFamily'
        )
        + "}\n",
    ),
    # documents (paper 003 lifecycle): the sidecar's faults are named in the sidecar and
    # nothing is written; an unreadable file ends in the Error state (an audited write)
    ("doc-empty.txt", "documents", None, None, "empty file", "  \n\t\n"),
    ("doc-archive.zip", "documents", None, "media type", "zip archive", b"PK\x03\x04 zipped"),
    ("doc-bad-date.txt", "documents", None, "published", "not a date", "Revenue rose 5%.\n"),
    ("doc-naive-time.txt", "documents", None, "published", "zone", "Revenue rose 5%.\n"),
    ("doc-future.txt", "documents", None, "published", "cannot be known", "Revenue rose.\n"),
    ("doc-published-number.txt", "documents", None, "published", "ISO date", "Revenue.\n"),
    ("doc-javascript-source.txt", "documents", None, "source", "not an http(s) URL", "Revenue.\n"),
    ("doc-bad-sidecar.txt", "documents", 1, None, "unreadable metadata", "Revenue.\n"),
    ("doc-tickers-string.txt", "documents", None, "tickers", "list of strings", "Revenue.\n"),
    ("doc-truncated.pdf", "documents", None, "Error", "pdf", b"%PDF-1.4\n1 0 obj << /Type"),
    ("doc-fake.docx", "documents", None, "Error", "not a readable Word", b"PK\x03\x04 no docx"),
    ("doc-broken.xlsx", "documents", None, "Error", "not a readable Excel", b"PK\x03\x04 no"),
]


# Good files some cases are read with (a FAR-Trans table refers to assets and customers).
GOOD = {
    "good/fartrans-assets.csv": ASSETS + f"{ISIN},Acme Bond,Bond,Corporate,Industrials,Machinery\n",
    "good/fartrans-customers.csv": CUSTOMERS + "C1,Mass,Conservative,CAP_LT30K\n",
    "good/companies.csv": "ticker,name\nZQAW,Acme Corp\n",  # the tests' store holds it
}
WITH = {"fartrans": ["good/fartrans-assets.csv", "good/fartrans-customers.csv"]}
SIDECAR = ".meta.json"
SIDECARS = {  # a document's metadata beside it; these cases' errors name the sidecar
    "doc-bad-date.txt": '{"published": "2019-02-30"}',
    "doc-naive-time.txt": '{"published": "2019-02-16T08:00:00"}',
    "doc-future.txt": '{"published": "2999-01-01T00:00:00+00:00"}',
    "doc-published-number.txt": '{"published": 20190216}',
    "doc-javascript-source.txt": '{"published": "2019-02-16", "source": "javascript:alert(1)"}',
    "doc-bad-sidecar.txt": '{"published": ',
    "doc-tickers-string.txt": '{"published": "2019-02-16", "tickers": "ZQAW"}',
}


def main() -> None:
    (HERE / "good").mkdir(exist_ok=True)
    for name, text in GOOD.items():
        (HERE / name).write_text(text)
    manifest = []
    for name, kind, line, field, reason, content in CASES:
        data = content.encode() if isinstance(content, str) else content
        (HERE / name).write_bytes(data)
        if name in SIDECARS:
            (HERE / (name + SIDECAR)).write_text(SIDECARS[name])
        manifest.append(
            {
                "file": name,
                "kind": kind,
                "with": WITH.get(kind, []),
                "line": line,
                "field": field,
                "reason": reason,
                "names": name + SIDECAR if name in SIDECARS else name,
            }
        )
    (HERE / "cases.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(CASES)} cases in {HERE}")


if __name__ == "__main__":
    main()
