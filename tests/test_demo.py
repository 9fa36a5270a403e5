"""finkg demo end to end on the small world: built through the loaders, conforming,
point-in-time, exported; it only ever replaces a store it built."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from finkg.config import Settings
from finkg.demo.run import run_demo
from finkg.demo.world import WorldSpec
from finkg.errors import InputError
from finkg.kg.store import open_store

SMALL = WorldSpec(tickers=4, sessions=80, users=6)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("demo")
    settings = Settings(home=root / "home")
    report = run_demo(
        store_location=str(root / "store"), files_dir=root / "files", settings=settings, spec=SMALL
    )
    return root, settings, report


def test_the_demo_store_conforms_and_holds_every_kind(demo) -> None:
    _, _, report = demo
    assert report.conforms, report.violations
    assert all(line.rejected == 0 for line in report.ingests)
    names = {g.name for g in report.stats.graphs}
    assert {"market", "news", "audit", "ontology"} <= names
    assert sum(1 for n in names if n and n.startswith("users/")) == SMALL.users
    classes = {c.class_iri.rsplit("#", 1)[1] for c in report.stats.classes}
    assert {"Company", "PriceBar", "NewsArticle", "Customer", "Transaction", "Asset"} <= classes


def test_point_in_time_rows_are_strictly_before_the_decision(demo) -> None:
    _, _, report = demo
    decision = dt.datetime.fromisoformat(report.decision_time)
    assert report.evidence_total > 0
    for row in report.evidence:
        assert dt.datetime.fromisoformat(row.available_at) < decision


def test_point_in_time_rows_can_be_told_apart(demo) -> None:
    """The five rows read identically: five indicator windows of one session, cut mid-word."""
    _, _, report = demo
    assert len({row.kind for row in report.evidence}) == len(report.evidence) >= 3
    assert len({row.text for row in report.evidence}) == len(report.evidence)
    assert {"NewsArticle", "IndicatorWindow"} <= {row.kind for row in report.evidence}
    for row in report.evidence:
        assert row.text and "\n" not in row.text and not row.text.endswith(("…", "_"))


def test_the_demo_says_what_to_try_next_and_each_of_those_runs(demo) -> None:
    import shlex

    from click.testing import CliRunner

    from finkg.cli import cli

    root, settings, report = demo
    commands = [shlex.split(c) for c in report.try_next]
    assert [c[1] for c in commands] == ["stats", "query", "audit", "ask", "recommend"]
    assert all(f"--store={root / 'store'}" in "=".join(c) for c in commands)
    env = {"FINKG_HOME": str(settings.home)}
    for argv in commands[:3]:  # ask and recommend load the local reader: test_docs runs them
        result = CliRunner().invoke(cli, argv[1:], env=env)
        assert result.exit_code == 0, (argv, result.output)
        assert "…" not in result.stdout


def test_the_subgraph_is_compact_json_ld_in_finkgs_context(demo) -> None:
    _, _, report = demo
    doc = json.loads(Path(report.subgraph_path).read_text())
    assert doc["@context"]["fkg"] == "https://w3id.org/finkg/ns#"
    triples = list(ox.parse(json.dumps(doc), format=ox.RdfFormat.JSON_LD))
    assert len(triples) == report.subgraph_triples
    assert any(n.get("id") == report.anchor for n in doc["@graph"])


def test_a_second_run_replaces_its_own_store(demo) -> None:
    root, settings, first = demo
    again = run_demo(
        store_location=str(root / "store"), files_dir=root / "files", settings=settings, spec=SMALL
    )
    assert again.stats.generation == first.stats.generation
    assert again.stats.triples == first.stats.triples


def test_the_demo_refuses_a_store_it_did_not_build(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    with open_store(tmp_path / "mine", settings=settings) as s:
        s.write(
            add=[
                ox.Quad(
                    ox.NamedNode("https://e.org/a"),
                    ox.NamedNode("https://e.org/p"),
                    ox.Literal("mine"),
                    s.graphs.news,
                )
            ],
            note="my data",
        )
    with pytest.raises(InputError, match="did not come from the demo"):
        run_demo(
            store_location=str(tmp_path / "mine"),
            files_dir=tmp_path / "files",
            settings=settings,
            spec=SMALL,
        )
    with open_store(tmp_path / "mine", settings=settings, read_only=True) as s:
        assert s.generation() == 1
