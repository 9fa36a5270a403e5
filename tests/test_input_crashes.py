"""Bad input that once raised a traceback (exit 1, which the README keeps for violations)
instead of an error naming file, line and field (issue 24)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store
from tests.test_ingest_rules import news, refused, write


@pytest.fixture
def store() -> BaseStore:
    s = open_store(None)
    init_store(s)
    return s


def test_a_news_line_with_a_lone_surrogate_is_an_input_error(store, tmp_path) -> None:
    """`\\ud800` raised UnicodeEncodeError in the canonical JSON dump: a traceback, exit 1."""
    path = write(tmp_path, "n.jsonl", news(title="Acme \ud800 beats"))
    assert "\\ud800" in path.read_text()
    e = refused(store, "news", path)
    assert (e.line, e.field) == (1, "title") and "lone surrogate" in str(e)


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deeply_nested_json_is_an_input_error(store, tmp_path, depth: int) -> None:
    """100,000 nested arrays raised RecursionError."""
    path = write(tmp_path, "n.jsonl", '{"title": ' + "[" * depth + "]" * depth + "}\n")
    e = refused(store, "news", path)
    assert e.line == 1 and "nested deeper than" in str(e)


def test_validate_file_with_a_nan_decimal_under_pyshacl_exits_2(tmp_path) -> None:
    """decimal.InvalidOperation escaped from pyshacl: a traceback and exit 1."""
    path = write(
        tmp_path,
        "nan.ttl",
        "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        '<https://e.org/bar> a fkg:PriceBar ;\n  fkg:close "NaN"^^xsd:decimal .\n',
    )
    env = {"FINKG_HOME": str(tmp_path / "home")}
    for engine in ("pyshacl", "sparql"):
        result = CliRunner().invoke(
            cli, ["validate", "--file", str(path), "--engine", engine], env=env
        )
        assert result.exit_code == 2, result.output
        assert f"{path}:4" in result.output and "ns#close" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_csv_field_over_the_csv_limit_is_a_reject(store, tmp_path) -> None:
    path = write(tmp_path, "companies.csv", "ticker,name\nZQDD," + "x" * 200_000 + "\n")
    e = refused(store, "companies", path)
    assert (e.line, e.field) == (2, "row") and "field limit" in str(e)
