"""Demo-world stores for pipeline tests, whole or cut at an instant, and a rule-based analyst.

`cut_world(src, dst, cutoff)` copies a world's source files keeping only what was public
before `cutoff` (news published, filings accepted, bars of sessions before its date): the
store built from the copy is what finkg would have held at that instant, which is what the
future-invariance tests compare against the full store.

`analyst()` is the rule-following reader of `finkg.reader.rules`: it follows the first
recent directional item of its evidence, in the order given, and never sees prices or labels.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

from finkg.demo.world import WorldSpec, build_world
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.reader.llm import ScriptedLLM
from finkg.reader.rules import rule_analyst

KINDS = (
    ("companies", ["companies.csv"]),
    ("prices", ["prices/*.csv"]),
    ("news", ["news/news.jsonl"]),
    ("filings", ["edgar/submissions/*.json", "edgar/documents/*.txt"]),
)


def build(folder: Path, spec: WorldSpec) -> Path:
    build_world(folder, spec)
    return folder


def load(files: Path, store: BaseStore | None = None) -> BaseStore:
    store = store or open_store(None)
    options = IngestOptions(graphs=store.graphs)
    for kind, patterns in KINDS:
        paths = sorted(p for pattern in patterns for p in files.glob(pattern))
        ingest(store, kind, loader(kind), paths, options)
    return store


def cut_world(src: Path, dst: Path, cutoff: dt.datetime) -> Path:
    """A copy of the world at `src` holding only what was public before `cutoff`."""
    wall = cutoff.astimezone(ZoneInfo("America/New_York")).replace(tzinfo=None)
    (dst / "news").mkdir(parents=True)
    (dst / "prices").mkdir()
    (dst / "edgar" / "submissions").mkdir(parents=True)
    (dst / "edgar" / "documents").mkdir()
    shutil.copy(src / "companies.csv", dst / "companies.csv")
    lines = (src / "news" / "news.jsonl").read_text().splitlines()
    kept = [x for x in lines if dt.datetime.fromisoformat(json.loads(x)["publishedDate"]) < wall]
    (dst / "news" / "news.jsonl").write_text("".join(x + "\n" for x in kept))
    for csv in (src / "prices").glob("*.csv"):
        rows = csv.read_bytes().decode().splitlines()
        body = [r for r in rows[1:] if dt.date.fromisoformat(r[:10]) < wall.date()]
        (dst / "prices" / csv.name).write_bytes(("\r\n".join([rows[0], *body]) + "\r\n").encode())
    accessions = set()
    for sub in (src / "edgar" / "submissions").glob("*.json"):
        doc = json.loads(sub.read_text())
        recent = doc["filings"]["recent"]
        keep = [
            i
            for i, t in enumerate(recent["acceptanceDateTime"])
            if dt.datetime.fromisoformat(t[:19]) < wall
        ]
        doc["filings"]["recent"] = {k: [v[i] for i in keep] for k, v in recent.items()}
        accessions |= {recent["accessionNumber"][i] for i in keep}
        (dst / "edgar" / "submissions" / sub.name).write_text(json.dumps(doc))
    for text in (src / "edgar" / "documents").glob("*.txt"):
        if text.stem in accessions:
            shutil.copy(text, dst / "edgar" / "documents" / text.name)
    return dst


def analyst() -> ScriptedLLM:
    return rule_analyst()
