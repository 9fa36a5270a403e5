"""The CLI: exit codes, bad input that writes nothing, read-only queries, exports."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner, Result

from finkg.cli import cli
from finkg.kg.store import open_store

DATA = Path(__file__).parent / "data"
NEWS = (
    '{"symbol": "ZQAW", "publishedDate": "2019-03-01 16:30:00", "title": "Acme beats", '
    '"site": "wire", "text": "Acme beat estimates.", "url": "https://example.org/a"}\n'
)


@pytest.fixture
def run(tmp_path: Path):
    runner = CliRunner()
    env = {"FINKG_HOME": str(tmp_path / "home"), "FINKG_STORE": str(tmp_path / "store")}

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, list(args), env=env, catch_exceptions=False)

    invoke("init")
    return invoke


def generation(tmp_path: Path) -> int:
    with open_store(tmp_path / "store", read_only=True) as s:
        return s.generation()


def test_every_command_has_help(run) -> None:
    for command in cli.commands:
        result = run(command, "--help")
        assert result.exit_code == 0, command
        assert len(result.output) > 100, command


def test_unparsable_rdf_names_file_and_line_and_writes_nothing(run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix ex: <https://e.org/> .\nex:a ex:b ex:c .\nex:a ex:b "open .\n')
    before = generation(tmp_path)
    result = run("ingest", "rdf", str(bad), "--graph", "news")
    assert result.exit_code == 2
    assert f"{bad}:3" in result.output
    assert generation(tmp_path) == before


def test_naive_timestamp_is_refused(run, tmp_path: Path) -> None:
    bad = tmp_path / "naive.ttl"
    bad.write_text(
        "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        '<https://e.org/a> fkg:availableAt "2020-04-30T16:30:00"^^xsd:dateTime .\n'
    )
    result = run("ingest", "rdf", str(bad), "--graph", "news")
    assert result.exit_code == 2
    assert f"{bad}:3" in result.output and "no zone" in result.output
    assert generation(tmp_path) == 1


def test_unknown_named_graph_is_refused(run, tmp_path: Path) -> None:
    good = DATA / "valid" / "all_shapes.ttl"
    result = run("ingest", "rdf", str(good), "--graph", "nwes")
    assert result.exit_code == 2
    assert "unknown named graph" in result.output and "'nwes'" in result.output
    trig = tmp_path / "g.trig"
    trig.write_text("<https://e.org/g> { <https://e.org/a> <https://e.org/b> <https://e.org/c> }\n")
    result = run("ingest", "rdf", str(trig))
    assert result.exit_code == 2 and f"{trig}:1" in result.output
    assert generation(tmp_path) == 1


def test_query_syntax_error_names_the_position(run) -> None:
    result = run("query", "SELECT ?x WHERE { ?x ?y }")
    assert result.exit_code == 2
    assert "1:26" in result.output


def test_query_is_read_only_unless_update(run, tmp_path: Path) -> None:
    drop = "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }"
    result = run("query", drop)
    assert result.exit_code == 2 and "--update" in result.output
    assert generation(tmp_path) == 1
    # it may write every graph, the audit graph among them: maintenance (issue 38)
    refused = run("query", drop, "--update")
    assert refused.exit_code == 2 and "--maintenance" in refused.output
    assert generation(tmp_path) == 1
    assert run("query", drop, "--update", "--maintenance").exit_code == 0
    assert generation(tmp_path) == 2


def test_ingest_load_query_validate_export(run, tmp_path: Path) -> None:
    news = tmp_path / "news.jsonl"
    news.write_text(NEWS)
    assert run("ingest", "news", str(news)).exit_code == 0
    before = "2019-03-01T16:30:01-05:00"
    rows = run(
        "query",
        "evidence_before",
        "--bind",
        "company=https://w3id.org/finkg/id/company/ZQAW",
        "--bind",
        f"before={before}",
        "--format",
        "json",
    )
    assert rows.exit_code == 0
    data = json.loads(rows.stdout)
    assert [r["availableAt"] for r in data] == ["2019-03-01T16:30:00-05:00"]
    assert run("validate").exit_code == 0
    exported = run("export", "--graph", "news", "--format", "jsonld")
    doc = json.loads(exported.stdout)
    assert "@context" in doc and doc["@graph"]
    back = list(ox.parse(exported.stdout, format=ox.RdfFormat.JSON_LD))
    with open_store(tmp_path / "store", read_only=True) as s:
        assert len(back) == len(list(s.quads(s.graphs.news)))


def test_validate_exits_one_on_one_invalid_evidence_node(run, tmp_path: Path) -> None:
    bad = DATA / "invalid" / "evidence-no-text.ttl"
    refused = run("ingest", "rdf", str(bad), "--graph", "news")  # issue 24: was written
    assert refused.exit_code == 2 and "fkg:text" in refused.output, refused.output
    assert generation(tmp_path) == 1
    with open_store(tmp_path / "store") as s:  # written around finkg's checks
        triples = ox.parse(path=str(bad), format=ox.RdfFormat.TURTLE)
        s.write(
            add=[ox.Quad(t.subject, t.predicate, t.object, s.graphs.news) for t in triples],
            note="t",
        )
    result = run("validate")
    assert result.exit_code == 1
    assert "fsh:Evidence-text" in result.output and "focus node" in result.output


def test_validate_files_and_json(run) -> None:
    ok = run("validate", "--file", str(DATA / "valid" / "all_shapes.ttl"), "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["conforms"] is True
    bad = run("validate", "--file", str(DATA / "invalid" / "asset-bad-isin.ttl"))
    assert bad.exit_code == 1


def test_ingest_bad_record_writes_nothing_unless_skip_bad(run, tmp_path: Path) -> None:
    news = tmp_path / "news.jsonl"
    news.write_text(NEWS + '{"symbol": "ZQAW", "publishedDate": "yesterday", "title": "x"}\n')
    result = run("ingest", "news", str(news))
    assert result.exit_code == 2
    assert f"{news}:2" in result.output and "publishedDate" in result.output
    assert generation(tmp_path) == 1
    rejects = tmp_path / "rejects.jsonl"
    result = run("ingest", "news", str(news), "--skip-bad", "--rejects", str(rejects))
    assert result.exit_code == 0 and "1 rejected" in result.output
    [reject] = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert reject["line"] == 2 and reject["field"] == "publishedDate"
    assert generation(tmp_path) == 2


def test_stats_json(run) -> None:
    result = run("stats", "--json")
    stats = json.loads(result.stdout)
    assert stats["generation"] == 1
    assert [g["name"] for g in stats["graphs"]] == ["audit", "ontology"]


def test_audit_traces_to_the_source_and_commit(run, tmp_path: Path) -> None:
    news = tmp_path / "news.jsonl"
    news.write_text(NEWS)
    run("ingest", "news", str(news))
    with open_store(tmp_path / "store", read_only=True) as s:
        node = s.select(
            "SELECT ?n WHERE { GRAPH ?g { ?n a <https://w3id.org/finkg/ns#NewsArticle> } }"
        )
        iri = node.rows[0][0].value  # type: ignore[union-attr]
    result = run("audit", iri)
    assert result.exit_code == 0
    assert "contentHash: sha256:" in result.output
    assert "commit/" in result.output and "ingest news" in result.output
