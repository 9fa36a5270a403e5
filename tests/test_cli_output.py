"""What the command line prints: data is never read as markup, values are never cut, refusals
come with the right exit code and before anything slow (issue 26, a newcomer's first run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from finkg.cli import cli

MARKUP_TTL = """@prefix ex: <https://e.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:a rdfs:label "a [bold]label[/] with :question: and :thumbs_up:" ;
     ex:question ex:b .
"""


@pytest.fixture
def run(tmp_path: Path):
    runner = CliRunner()
    env = {"FINKG_HOME": str(tmp_path / "home"), "FINKG_STORE": str(tmp_path / "store")}

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, list(args), env=env)

    return invoke


def test_audit_prints_curies_and_literals_as_they_are_not_as_emoji(run, tmp_path: Path) -> None:
    """`rdfs:label` was printed as `rdfs🏷`: rich read `:label:` in data as an emoji code."""
    data = tmp_path / "a.ttl"
    data.write_text(MARKUP_TTL)
    assert run("ingest", "rdf", str(data), "--graph", "news").exit_code == 0
    result = run("audit", "https://e.org/a")
    assert result.exit_code == 0, result.output
    assert "rdfs:label: a [bold]label[/] with :question: and :thumbs_up:" in result.output
    assert "🏷" not in result.output and "❓" not in result.output and "👍" not in result.output


def test_query_table_prints_markup_in_data_as_text(run, tmp_path: Path) -> None:
    data = tmp_path / "a.ttl"
    data.write_text(MARKUP_TTL)
    assert run("ingest", "rdf", str(data), "--graph", "news").exit_code == 0
    result = run("query", "SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } FILTER(isLiteral(?o)) }")
    assert result.exit_code == 0, result.output
    assert "[bold]label[/] with :question: and :thumbs_up:" in result.output


@pytest.mark.parametrize(
    "argv",
    [
        ["stats"],
        ["validate"],
        ["query", "graph_counts"],
        ["audit", "https://e.org/a"],
        ["export", "--graph", "news"],
        ["serve", "--bind", "127.0.0.1:0"],
    ],
)
def test_a_missing_store_is_an_input_error(run, tmp_path: Path, argv: list[str]) -> None:
    """A store directory that does not exist exited 3 (internal error); it is the user's
    input (2), and the message says how to make one. serve said "serving ... Ctrl-C stops"
    before it failed."""
    missing = tmp_path / "nowhere"
    result = run(*argv, "--store", str(missing))
    assert result.exit_code == 2, result.output
    assert str(missing) in result.output and "finkg init" in result.output
    assert "serving" not in result.output and "Ctrl-C" not in result.output
    assert "Traceback" not in result.output
    assert not missing.exists()


LONG_TEXT = ("a long literal " * 20).strip()
LONG_TTL = f"""@prefix ex: <https://example.org/a/rather/long/path/that/a/table/would/cut/> .
@prefix fkg: <https://w3id.org/finkg/ns#> .
ex:first-node-with-a-long-name a ex:ListedThing ; fkg:ticker "ZQAW" ;
    fkg:text "{LONG_TEXT}" .
"""


def test_a_query_piped_to_another_program_prints_whole_values(run, tmp_path: Path) -> None:
    """Piped (not a terminal, 80 columns), every IRI was shown as `https://w3id…`."""
    data = tmp_path / "long.ttl"
    data.write_text(LONG_TTL)
    assert run("ingest", "rdf", str(data), "--graph", "market").exit_code == 0
    result = run("query", "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }", "--graphs", "market")
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout and "..." not in result.stdout
    iri = (
        "https://example.org/a/rather/long/path/that/a/table/would/cut/first-node-with-a-long-name"
    )
    assert f"{iri}\thttps://w3id.org/finkg/ns#ticker\tZQAW" in result.stdout
    assert LONG_TEXT in result.stdout


def test_report_tables_piped_to_another_program_are_not_cut(run, tmp_path: Path) -> None:
    data = tmp_path / "long.ttl"
    data.write_text(LONG_TTL)
    run("init")
    graph = "users/A-CUSTOMER-WITH-A-VERY-LONG-IDENTIFIER-" + "X" * 60  # past 80 columns
    assert run("ingest", "rdf", str(data), "--graph", graph).exit_code == 0
    result = run("stats")
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    assert graph in result.stdout  # whole, on one line


def test_a_table_in_a_narrow_terminal_folds_values_instead_of_cutting_them(monkeypatch) -> None:
    import io

    from rich.console import Console
    from rich.table import Table

    from finkg.cli import support

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=40, markup=False, emoji=False)
    monkeypatch.setattr(support, "out", terminal)
    table = Table("node", "text")
    iri = "https://w3id.org/finkg/id/news/~81efafdcb74723ae584a63f9aa767e9b"
    table.add_row(iri, LONG_TEXT)
    support.print_table(table)
    shown = screen.getvalue()
    assert "…" not in shown
    cells = "".join(line.split("│")[1].strip() for line in shown.splitlines() if "│" in line)
    assert cells.startswith(iri)


def _refuse_to_open(*_: object, **__: object) -> None:
    raise AssertionError("a model or an index was opened before the input was checked")


def test_forecast_refuses_an_unknown_ticker_before_opening_models(run, monkeypatch) -> None:
    """`finkg forecast --ticker NOPE` was refused after 38 s: a model loaded first."""
    import finkg.reader.transport.backends
    import finkg.tasks.movement.train

    monkeypatch.setattr(finkg.reader.transport.backends, "open_reader", _refuse_to_open)
    monkeypatch.setattr(finkg.tasks.movement.train, "open_sequence_retriever", _refuse_to_open)
    assert run("init").exit_code == 0
    result = run("forecast", "--ticker", "NOPE", "--date", "2019-06-03")
    assert result.exit_code == 2, result.output
    assert "unknown ticker" in result.output and "'NOPE'" in result.output


def test_ask_refuses_an_unknown_company_before_opening_indexes(run, monkeypatch) -> None:
    """`finkg ask --company NOPE` was refused after 40 s: indexes and the reader opened first."""
    import finkg.reader.transport.backends
    import finkg.retrieval.index.indexes

    monkeypatch.setattr(finkg.reader.transport.backends, "open_reader", _refuse_to_open)
    monkeypatch.setattr(finkg.retrieval.index.indexes, "open_indexes", _refuse_to_open)
    assert run("init").exit_code == 0
    result = run("ask", "What was revenue?", "--company", "NOPE")
    assert result.exit_code == 2, result.output
    assert "no company with this ticker" in result.output and "'NOPE'" in result.output


def test_the_impact_table_shows_whole_variants_and_the_days_rank_ic_rests_on(monkeypatch) -> None:
    """`finkg demo --impact` cut "shuffled-labels" to "shuffled-labe…" in 80 columns and
    showed rank IC 0.333 for every variant without saying it rested on two days."""
    import io

    from rich.console import Console

    from finkg.cli import demo as demo_cli
    from finkg.cli import support
    from finkg.tasks.impact.demo import DemoImpact, VariantRow

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=80, color_system=None)
    monkeypatch.setattr(support, "out", terminal)
    monkeypatch.setattr(demo_cli, "out", terminal)
    rows = [
        VariantRow(
            variant=name,
            predictions=61,
            labelled=183,
            macro_f1=0.3,
            non_neutral_f1=0.2,
            rank_ic=1 / 3,
            rank_ic_days=2,
            citation_rate=0.5,
        )
        for name in ("static", "cited", "shuffled-labels")
    ]
    found = DemoImpact(
        reader="rule-analyst",
        test="2019-11-07..2019-12-19",
        validation="2019-09-19..2019-11-06",
        memory={"kappa": 5.0},
        variants=rows,
        portfolios=[],
        report="r.md",
        equity_curve="e.png",
    )
    demo_cli._print_impact(found)
    shown = screen.getvalue()
    assert "…" not in shown, shown
    assert "│ shuffled-labels " in shown, shown
    assert shown.count("│ 0.333 │ 2    │") == 3, shown
    assert max(len(line) for line in shown.splitlines()) <= 80
