"""The scale benchmark's replicas are other companies: nothing of replica 0's identity is
left in a replica's files (`benchmarks/scale_unit.py`)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re

import numpy as np
import pytest

from benchmarks.scale_unit import NEWS_FILE, Unit
from finkg.errors import InputError


@pytest.fixture(scope="module")
def unit(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    (data / NEWS_FILE).parent.mkdir(parents=True)
    items = [
        {
            "symbol": "aapl",
            "publishedDate": "2020-03-02 09:15:00",
            "title": "Apple up",
            "site": "x",
            "text": "Apple rose.",
            "url": "https://e.org/1",
        },
        {
            "symbol": "MSFT",
            "publishedDate": "2014-01-02 09:15:00",
            "title": "Old",
            "site": "x",
            "text": "Out of the period.",
            "url": "https://e.org/2",
        },
    ]
    with gzip.open(data / NEWS_FILE, "wt") as f:
        f.writelines(json.dumps(item) + "\n" for item in items)
    return Unit(tmp_path_factory.mktemp("unit"), data, dt.date(2019, 1, 1), dt.date(2020, 12, 31))


def _identities(unit: Unit) -> dict[str, set[str]]:
    """Replica 0's identifiers, read from its own files."""
    companies = (unit.world / "companies.csv").read_text().splitlines()[1:]
    assets = (unit.world / "fartrans" / "asset_information.csv").read_text()
    return {
        "ticker": {line.split(",")[0] for line in companies},
        "cik": {line.split(",")[1] for line in companies},
        "isin": set(re.findall(r"ZZ[SF]\d{9}", assets)),
        "customer": set(unit.customers),
        "name": set(unit.names),
    }


def test_a_replica_keeps_no_identity_of_replica_0(unit, tmp_path):
    old = _identities(unit)
    folder = unit.write(4, tmp_path / "r4")
    written = sorted(p for p in folder.rglob("*") if p.is_file())
    assert len(written) == len(unit.files) + 1  # the world's files and the real news
    left = {}
    for path in written:
        text, name = path.read_text(), str(path.relative_to(folder))
        for kind, values in old.items():
            for v in values:
                pattern = rf"(?<!\w){re.escape(v)}(?!\w)"
                # in the text, the case finkg reads identities in (lower-case tickers inside
                # file names and image URLs are left: finkg keys nothing by them); file
                # names in any case
                if re.search(pattern, text) or re.search(pattern, name, re.I):
                    left.setdefault(kind, set()).add(v)
    assert left == {}
    news = [json.loads(line) for line in (folder / "real-news" / "news.jsonl").open()]
    assert [n["symbol"] for n in news] == ["AAPL4"]  # the period's item only, renamed


def test_two_replicas_share_no_identifier(unit, tmp_path):
    one = (unit.write(1, tmp_path / "r1") / "companies.csv").read_text().splitlines()[1:]
    two = (unit.write(2, tmp_path / "r2") / "companies.csv").read_text().splitlines()[1:]
    ids = lambda rows: {cell for row in rows for cell in row.split(",")[:2]}  # noqa: E731
    assert len(one) == len(two) == len(unit.tickers)
    assert ids(one).isdisjoint(ids(two))


def test_a_replica_past_the_last_is_refused(unit, tmp_path):
    with pytest.raises(InputError, match="distinct replicas"):
        unit.write(10_000, tmp_path / "too-far")


def test_the_recall_benchmark_replicates_texts_and_reports_by_day(unit):
    """`benchmarks/scale_recall.py` on three replicas of a few passages: the build's
    calibration is finkg's own (first-line probes), the CI, by whole days, holds the mean,
    and `--grow` grows a build over two replicas by the third."""
    from benchmarks.scale_recall import _day_ci, measure
    from finkg.retrieval.index.vectors import PROBE

    name = unit.names[0]
    texts = [f"{name} item {i} ZQAW\n\nbody {i} of {name} rates oil" for i in range(60)]
    heads = [f"{name} item {i}" for i in range(0, 60, 6)]
    days = ["2020-01-02"] * 5 + ["2020-01-03"] * 5
    figures = measure(texts, heads, days, unit, 3)
    assert figures["passages"] == 180 and figures["queries"] == 10 and figures["days"] == 2
    assert figures["calibration"]["probe"] == PROBE
    low, high = figures["recall_ci_days"]
    assert 0 <= low <= figures["recall"] <= high <= 1
    values = np.array([1.0] * 5 + [0.0] * 5)
    assert _day_ci(values, days) == (0.0, 1.0)  # two days: all, none or half of them
    grown = measure(texts, heads, days, unit, 3, added=1)["grown"]  # 120 rows, then 60 more
    assert grown["added"] == 60 and "60 rows added since its build" in grown["described"]
    assert grown["recall"] == 1.0 and grown["difference_ci_days"] == (0.0, 0.0)
