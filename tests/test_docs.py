"""The README is true: its commands exist, its set-up commands are the Makefile's and CI's,
and its CLI tour runs against a demo store."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from finkg.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_command_is_in_the_readme() -> None:
    for name in cli.commands:
        assert f"`finkg {name}" in README, name


def test_the_two_setup_commands_are_make_targets_and_ci_runs_the_test_one() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^make demo\b", README, re.M) and re.search(r"^make test\b", README, re.M)
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "exec make test" in (ROOT / ".ci" / "run").read_text()


def _tour() -> list[list[str]]:
    block = README.split("## A tour of the CLI", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines, current = [], ""
    for raw in block.splitlines():
        text = raw.split("  #", 1)[0].rstrip()
        current += text.rstrip("\\").strip() + " "
        if not text.endswith("\\"):
            if current.strip():
                lines.append(shlex.split(current))
            current = ""
    return lines


def test_the_tour_runs_on_a_demo_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    env = {"FINKG_HOME": str(tmp_path / "home"), "FINKG_STORE": str(tmp_path / "store")}
    assert runner.invoke(cli, ["demo", "--small"], env=env).exit_code == 0
    monkeypatch.chdir(tmp_path)
    ran = 0
    company = "https://w3id.org/finkg/id/company/ZQAW"
    for argv in _tour():
        assert argv[0] == "finkg"
        if argv[1] in ("serve", "ingest"):  # long-running; reads a file of the reader's
            continue
        argv = [a.replace("IRI", company) for a in argv]
        result = runner.invoke(cli, argv[1:], env=env)
        assert result.exit_code == 0, (argv, result.output)
        ran += 1
    assert ran >= 7
    assert (tmp_path / "news.jsonld").stat().st_size > 1000
