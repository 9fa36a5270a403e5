"""`benchmarks/validate_checks.py`: each shape check timed on stores of two sizes."""

from __future__ import annotations

import json
from pathlib import Path

from pyoxigraph import Literal, NamedNode, Quad

from benchmarks.validate_checks import main
from finkg.kg.store import open_store
from finkg.ontology.terms import FKG, RDF


def _store(path: Path, n: int) -> Path:
    with open_store(path) as store:
        quads = []
        for i in range(n):
            node = NamedNode(f"https://e.org/news/{i}")
            quads += [
                Quad(node, RDF.type, FKG.NewsArticle, store.graphs.news),
                Quad(node, FKG.text, Literal(f"item {i}"), store.graphs.news),
            ]
        store.write(add=quads, note="few")
    return path


def test_every_applying_check_is_timed_on_each_store_with_its_slope(tmp_path: Path) -> None:
    small, large = _store(tmp_path / "small", 20), _store(tmp_path / "large", 200)
    report = tmp_path / "checks.md"
    assert main([str(small), str(large), "--report", str(report), "--top", "3"]) == 0
    runs = json.loads(report.with_suffix(".json").read_text())
    assert [r["store"] for r in runs] == [str(small), str(large)]
    assert runs[1]["triples"] > runs[0]["triples"]
    # the same checks apply to both (news articles), and they find the articles' violations
    keys = [[(c["shape"], c["path"], c["component"]) for c in r["checks"]] for r in runs]
    assert keys[0] == keys[1] and keys[0]
    assert sum(c["rows"] for c in runs[1]["checks"]) > sum(c["rows"] for c in runs[0]["checks"])
    # the passes hold every applying check, in fewer queries, and find the violations too
    for r in runs:
        assert sum(p["checks"] for p in r["passes"]) == len(r["checks"]) > len(r["passes"])
        assert sum(p["rows"] for p in r["passes"]) > 0
    text = report.read_text()
    assert "The 3 slowest" in text and text.count("\n| ") >= 2 + 1 + 3
