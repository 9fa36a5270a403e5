"""The unit `benchmarks/scale.py` grows a store by, and its replicas.

One unit is
- the demo world (`finkg demo`'s default `WorldSpec`, seed 7): 8 companies and a market ETF
  over 260 sessions with their filings, prices and derived windows, news, FAR-Trans customers
  and research documents, about 950,000 triples (the store the engines were first compared
  on), and
- the real news of a period from `--data` (`event/news/nasdaq_news_2015_2020.jsonl.gz`), about
  11,000 items for 2019-2020: the passages whose indexes the unit grows.

Replica r > 0 is the same files under other identities, so that every node finkg mints for it
is new: the demo's tickers get another two-letter prefix (`ZQAW` becomes `ZAAW`, `ZBAW`, ...,
then `Y?AW`, `X?AW`; four letters, as filings' ticker detection expects), its CIKs
99,000,00k become 99,rrr,00k (and so its accession numbers), its ISINs take r in their body
with a new check digit, its customer IDs are hashed with r, its companies' short names take
the prefix too (`Ivorel` becomes `IvorelZc`: finkg finds companies in documents by name;
EDGAR headers keep their capitalised names, as finkg keys a filer by its CIK; lower-case
tickers inside file names and image URLs in the text stay too: finkg keys nothing by them),
and its FAR-Trans transaction IDs (which key each transaction's source document) move up by
r × 10,000,000. The real news keeps its text and URL under the symbol with r appended
(`AAPL` becomes `AAPL7`). Dates and text stay the same: a replica is another set of
companies over the same sessions, as the S&P 500 is beside the Nasdaq-100.

>>> names = Renamer.for_replica(3, customers=frozenset({"C560802F869BD7A2C6F3"}),
...                              names=("Ivorel", "Acme Widgets"))
>>> names.text("Ivorel Biologics Inc beat Acme Widgets Corp")
'IvorelZc Biologics Inc beat Acme WidgetsZc Corp'
>>> names.text("(Nasdaq:ZQIB) CIK 0099000002, accession 0099000002-19-000004, ZZS000000029")
'(Nasdaq:ZCIB) CIK 0099003002, accession 0099003002-19-000004, ZZS030000023'
>>> names.path("documents/zqib_analyst_note.txt")
'documents/zcib_analyst_note.txt'
>>> Renamer.for_replica(0, customers=frozenset()).text("ZQIB 0099000002")
'ZQIB 0099000002'
>>> news_symbol("aapl", 7), news_symbol("AAPL", 0)
('AAPL7', 'AAPL')
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from finkg.demo.universe import isin, make_companies
from finkg.demo.world import WorldSpec, build_world
from finkg.errors import InputError

NEWS_FILE = "event/news/nasdaq_news_2015_2020.jsonl.gz"
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# two-letter ticker prefixes for replicas 1, 2, ...: Z?, Y?, X? (ZQ is replica 0's)
PREFIXES = tuple(f + s for f in "ZYX" for s in _LETTERS if f + s != "ZQ")
MAX_REPLICAS = len(PREFIXES) + 1
TRANSACTION_STEP = 10_000_000

_TICKER = re.compile(r"(?<![A-Za-z])ZQ(?=[A-Z]{2}(?![A-Za-z]))")
_TICKER_LOWER = re.compile(r"(?<![A-Za-z])zq(?=[a-z]{2}(?![A-Za-z]))")
_CIK = re.compile(r"(?<![\d.])(0{0,2})99000(\d{3})(?![\d.])")
_ISIN = re.compile(r"(?<![A-Z0-9])ZZ([SF])(\d{8})\d(?![A-Z0-9])")
_CUSTOMER = re.compile(r"(?<![0-9A-F])[0-9A-F]{20}(?![0-9A-F])")


@dataclass(frozen=True)
class Renamer:
    """The identity substitutions of one replica."""

    replica: int
    customers: frozenset[str]  # the demo world's customer IDs
    names: tuple[str, ...] = ()  # the demo companies' short names (finkg finds companies by name)

    @classmethod
    def for_replica(
        cls, replica: int, *, customers: frozenset[str], names: tuple[str, ...] = ()
    ) -> Renamer:
        if not 0 <= replica < MAX_REPLICAS:
            raise InputError(
                f"a unit has {MAX_REPLICAS} distinct replicas",
                field="replica",
                value=replica,
                hint=f"ask for at most {MAX_REPLICAS} units",
            )
        return cls(replica, customers, names)

    def text(self, text: str) -> str:
        r = self.replica
        if r == 0:
            return text
        prefix = PREFIXES[r - 1]
        text = _TICKER.sub(prefix, text)
        text = _CIK.sub(lambda m: f"{m[1]}99{r:03d}{m[2]}", text)
        text = _ISIN.sub(lambda m: isin(f"ZZ{m[1]}{r:02d}{m[2][2:]}"), text)
        text = _CUSTOMER.sub(lambda m: self._customer(m[0]), text)
        if self.names:
            pattern = r"\b(?:" + "|".join(map(re.escape, self.names)) + r")\b"
            text = re.sub(pattern, lambda m: m[0] + prefix.capitalize(), text)
        return text

    def transactions(self, csv_text: str) -> str:
        """FAR-Trans `transactions.csv` (already through `text`) with its IDs moved.

        >>> Renamer(2, frozenset()).transactions("customerID,ISIN,transactionID,x\\nA,B,17,y\\n")
        'customerID,ISIN,transactionID,x\\nA,B,20000017,y\\n'
        """
        lines = csv_text.splitlines(keepends=True)
        column = lines[0].rstrip("\r\n").split(",").index("transactionID")
        out = [lines[0]]
        for line in lines[1:]:
            cells = line.split(",")
            if len(cells) > column and cells[column].isdigit():
                cells[column] = str(self.replica * TRANSACTION_STEP + int(cells[column]))
            out.append(",".join(cells))
        return "".join(out)

    def path(self, relative: str) -> str:
        if self.replica == 0:
            return relative
        renamed = self.text(relative)
        return _TICKER_LOWER.sub(PREFIXES[self.replica - 1].lower(), renamed)

    def _customer(self, customer: str) -> str:
        if customer not in self.customers:
            return customer
        digest = hashlib.sha256(f"{customer}/{self.replica}".encode()).hexdigest()
        return digest[:20].upper()


def news_symbol(symbol: str, replica: int) -> str:
    symbol = symbol.upper()
    return symbol if replica == 0 else f"{symbol}{replica}"


class Unit:
    """The unit's source files, written once to `folder`; `write(r, out)` writes replica r."""

    def __init__(self, folder: Path, data: Path, start: dt.date, end: dt.date) -> None:
        news = data / NEWS_FILE
        if not news.is_file():
            raise InputError(
                "the real news file is missing",
                field="--data",
                value=str(data),
                hint=f"pass a folder laid out like ../shared/data (it needs {NEWS_FILE})",
            )
        self.world = folder / "world"
        build_world(self.world, WorldSpec(), overwrite=True)
        self.files = sorted(
            p.relative_to(self.world)
            for p in self.world.rglob("*")
            if p.is_file() and p.name != "world.json"
        )
        rows = (self.world / "fartrans" / "customer_information.csv").read_text().splitlines()
        self.customers = frozenset(line.split(",", 1)[0] for line in rows[1:] if line)
        rows = (self.world / "companies.csv").read_text().splitlines()
        self.tickers = frozenset(line.split(",", 1)[0] for line in rows[1:] if line)
        spec = WorldSpec()
        self.names = tuple(c.short for c in make_companies(spec.tickers, spec.seed))
        self.news: list[dict] = []
        with gzip.open(news, "rt") as f:
            for line in f:
                record = json.loads(line)
                if start.isoformat() <= record["publishedDate"][:10] <= end.isoformat():
                    self.news.append(record)
        if not self.news:
            raise InputError(
                "no news item falls in the period",
                field="--from/--to",
                value=f"{start} to {end}",
                hint="the real news covers 2015-01 to 2020-12",
            )

    def write(self, replica: int, out: Path) -> Path:
        """Replica `replica`'s world folder (its news as `real-news/news.jsonl`) under `out`."""
        names = Renamer.for_replica(replica, customers=self.customers, names=self.names)
        if out.exists():
            shutil.rmtree(out)
        for relative in self.files:
            target = out / names.path(str(relative))
            target.parent.mkdir(parents=True, exist_ok=True)
            text = names.text((self.world / relative).read_text())
            if relative.name == "transactions.csv":
                text = names.transactions(text)
            target.write_text(text)
        (out / "real-news").mkdir()
        with (out / "real-news" / "news.jsonl").open("w") as f:
            for record in self.news:
                renamed = dict(record, symbol=news_symbol(record["symbol"], replica))
                f.write(json.dumps(renamed) + "\n")
        return out
