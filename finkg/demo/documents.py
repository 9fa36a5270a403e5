"""Four plain-text documents about the demo companies, with question/answer pairs.

An annual-report excerpt, an analyst note, a sector outlook and an earnings-call excerpt,
each 300-1500 words with revenue, percentages and dollar amounts.  Every answer string
appears verbatim in its document; the analyst note quotes the stock's closing price from
the demo's own price file on the note's date.  Templates are wrapped in the source for
reading; :func:`finkg.demo.document_text.fill` joins each paragraph's lines before filling
in the values. The annual report and the call are in `company_documents`, the analyst note
and the sector outlook in `research_documents`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from finkg.demo.company_documents import annual_report, earnings_call
from finkg.demo.document_text import Document
from finkg.demo.prices import PricePanel
from finkg.demo.research_documents import analyst_note, sector_outlook
from finkg.demo.universe import Company, stream


def make_documents(
    seed: int, companies: Sequence[Company], panel: PricePanel, days: Sequence[date]
) -> list[Document]:
    rng = stream(seed, "documents")
    n = len(companies)
    return [
        annual_report(rng, companies[0], days[0]),
        analyst_note(rng, companies[1 % n], panel, days),
        sector_outlook(rng, companies, companies[2 % n].sector, days[min(30, len(days) - 1)]),
        earnings_call(rng, companies[3 % n], days[min(20, len(days) - 1)]),
    ]


def write_documents(out_dir: Path, docs: Sequence[Document]) -> None:
    """Each document and its `.meta.json` sidecar (publication date, title, tickers), the
    metadata finkg's document loader reads beside a file."""
    (out_dir / "documents").mkdir(parents=True, exist_ok=True)
    for d in docs:
        (out_dir / d.path).write_bytes(d.text.encode())
        meta = {"published": d.published, "title": d.title, "tickers": list(d.tickers)}
        (out_dir / f"{d.path}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
