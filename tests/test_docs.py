"""The README is true: its commands exist, its set-up commands are the Makefile's and CI's,
and its CLI tour runs against a demo store."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
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


def _commands(section: str) -> list[list[str]]:
    """Every command line of the ```sh blocks of a README section, comments dropped."""
    text = README.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    lines, current = [], ""
    for block in text.split("```sh")[1:]:
        for raw in block.split("```", 1)[0].splitlines():
            line = raw.split("  #", 1)[0].rstrip()
            current += line.rstrip("\\").strip() + " "
            if not line.endswith("\\"):
                if current.strip():
                    lines.append(shlex.split(current))
                current = ""
    return lines


READER_COMMANDS = ("ask", "forecast", "recommend")  # they load the local reader
ITEM = (
    '{"symbol": "ZQAW", "publishedDate": "2019-04-01 16:30:00", "title": "Acme ships", '
    '"site": "wire", "text": "Acme shipped.", "url": "https://example.org/tour"}\n'
)


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`make demo`'s store, from the small world (the tour's values hold in both)."""
    root = tmp_path_factory.mktemp("tour")
    env = {"FINKG_HOME": str(root / "home"), "FINKG_STORE": str(root / "store")}
    result = CliRunner().invoke(cli, ["demo", "--small"], env=env)
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    return env


def test_every_tour_command_runs_on_a_demo_store_and_prints_whole_values(
    demo_store: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's tour is executable documentation: each command exits 0 and cuts no
    value (issue 26); the reader commands run in the test below (marked `model`)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.jsonl").write_text(ITEM)
    runner, ran = CliRunner(), 0
    company = "https://w3id.org/finkg/id/company/ZQAW"
    tour = _commands("A tour of the CLI")
    assert {c[1] for c in tour} >= {"stats", "query", "validate", "serve", *READER_COMMANDS}
    for argv in tour:
        assert argv[0] == "finkg"
        if argv[1] in READER_COMMANDS:
            continue
        if argv[1] == "serve":
            _serve_briefly(argv, demo_store)
            ran += 1
            continue
        argv = [a.replace("IRI", company) for a in argv]
        result = runner.invoke(cli, argv[1:], env=demo_store)
        assert result.exit_code == 0, (argv, result.output)
        assert "…" not in result.output, argv
        assert "Traceback" not in result.output, argv
        ran += 1
    assert ran >= 9
    assert (tmp_path / "news.jsonld").stat().st_size > 1000


def _serve_briefly(argv: list[str], env: dict[str, str]) -> None:
    """`finkg serve` until it says it is serving, then SIGTERM: it exits 0."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [a.replace("127.0.0.1:7878", f"127.0.0.1:{port}") for a in argv]
    proc = subprocess.Popen(
        [sys.executable, "-m", "finkg", *argv[1:]],
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        seen = []  # the Oxigraph server it starts writes to the same stderr
        while not (line := proc.stderr.readline()).startswith("serving ") and line:
            seen.append(line)
        assert f":{port}/query" in line, seen
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


@pytest.mark.model
def test_the_tours_reader_commands_run_on_a_demo_store(demo_store: dict[str, str]) -> None:
    """ask, forecast and recommend with a small packaged reader (SmolLM2-135M, set through
    FINKG_READER: the default 1.5B reader takes minutes per command on 2 cores; the
    recommend test in test_recommend_window.py runs the default one) and the hash embedder;
    exit 0, or 1 where the README documents it (recommend: a reply off the contract)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test does)")
    env = {**demo_store, "FINKG_READER": "smollm2-135m", "FINKG_EMBEDDER": "hash"}
    allowed = {"ask": {0}, "forecast": {0}, "recommend": {0, 1}}
    commands = [c for c in _commands("A tour of the CLI") if c[1] in READER_COMMANDS]
    assert sorted(c[1] for c in commands) == sorted(READER_COMMANDS)
    for argv in commands:
        result = CliRunner().invoke(cli, argv[1:], env=env)
        assert result.exit_code in allowed[argv[1]], (argv, result.output)
        assert "…" not in result.output and "Traceback" not in result.output, argv
