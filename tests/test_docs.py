"""The README and the documentation are true: every command in a code block runs, the
generated CLI reference lists every command and is current, the site builds with
`mkdocs build --strict`, and a built page renders in a browser.

Code blocks are executable documentation:

- a ```` ```sh ```` block runs on a demo store (`finkg demo --small`): `finkg` lines in
  process, other programs (`oxigraph`) as processes, `export` lines set the environment of
  the block's later lines, `make` lines must name a Makefile target; the reader commands
  run in the `model` test on the small packaged reader;
- a ```` ```sh title="needs ..." ```` block says what it needs that the demo store lacks
  (real data, hours): its `finkg` lines are parsed by the command itself (every option and
  value checked, nothing run) and its `python -m benchmarks.NAME` lines checked option by
  option against the benchmark's `--help`;
- a ```` ```python ```` block runs against the demo store.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.cli.reference import commands, page
from tests.cdp import Browser, chromium
from tests.readers import SMALL_READER

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
READER_COMMANDS = ("ask", "forecast", "recommend")  # they load the local reader
# exit codes the pages document besides 0: recommend's 1, a reply that never met the contract
# (SmolLM2-135M's often do not)
ALSO_ALLOWED = {"recommend": {1}}
GPU_HOST = "http://gpu-host:8000"  # the servers page's example server: the stub stands in
ITEM = (
    '{"symbol": "ZQAW", "publishedDate": "2019-04-01 16:30:00", "title": "Acme ships", '
    '"site": "wire", "text": "Acme shipped.", "url": "https://example.org/tour"}\n'
)


@dataclass
class Block:
    page: Path
    lang: str
    title: str
    text: str
    lines: list[list[str]] = field(default_factory=list)


def _blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a page, sh lines split (comments dropped, `\\` joined)."""
    found = []
    pattern = r'^```(\w+)(?: title="([^"]*)")?\n(.*?)^```'
    for lang, title, text in re.findall(pattern, path.read_text(), re.M | re.S):
        block = Block(path, lang, title, text)
        current = ""
        for raw in text.splitlines() if lang == "sh" else ():
            line = raw.split("  #", 1)[0].rstrip()
            current += line.rstrip("\\").strip() + " "
            if not line.endswith("\\"):
                if current.strip():
                    block.lines.append(shlex.split(current))
                current = ""
        found.append(block)
    return found


BLOCKS = [b for p in PAGES for b in _blocks(p)]
RUN = [b for b in BLOCKS if b.lang == "sh" and not b.title.startswith("needs")]
NEEDS = [b for b in BLOCKS if b.lang == "sh" and b.title.startswith("needs")]


def _is_reader(argv: list[str]) -> bool:
    return argv[0] == "finkg" and argv[1] in READER_COMMANDS


def _uses_server(block: Block) -> bool:
    return GPU_HOST in block.text


# -- the pages ---------------------------------------------------------------------------


def test_the_readme_is_a_landing_page_linking_every_docs_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 120
    assert max(len(line) for line in text.splitlines()) <= 200
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", text))
    pages = {str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md")} - {"docs/index.md"}
    assert pages <= linked, pages - linked  # every page one click from the README


def test_the_cli_reference_lists_every_command_and_is_current() -> None:
    """Any command's documentation is two clicks from the README: the reference (linked
    from it), then the command's entry in the reference's table."""
    reference = (DOCS / "interfaces" / "cli.md").read_text()
    assert reference == page(), "docs/interfaces/cli.md is stale: run `make docs`"
    paths = [path for path, _ in commands(cli, "finkg")]
    assert {"finkg ask", "finkg impact run", "finkg bank add", "finkg mcp"} <= set(paths)
    for path in paths:
        anchor = path.replace(" ", "-")
        assert f"[`{path}`](#{anchor})" in reference, path
        assert f"## `{path}` {{#{anchor}}}" in reference, path
    assert "](docs/interfaces/cli.md)" in README.read_text()


def test_the_two_setup_commands_are_make_targets_and_ci_runs_the_test_one() -> None:
    makefile = (ROOT / "Makefile").read_text()
    text = README.read_text()
    assert re.search(r"^make demo\b", text, re.M) and re.search(r"^make test\b", text, re.M)
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "exec make test" in (ROOT / ".ci" / "run").read_text()


def test_every_page_has_runnable_examples_and_each_is_classified() -> None:
    """No sh block is silently skipped: every line is one the tests below run or check."""
    known = ("finkg", "make", "export", "oxigraph", "python")
    for block in RUN + NEEDS:
        for argv in block.lines:
            assert argv[0] in known, (block.page.name, argv)
            if argv[0] == "python":
                assert argv[1:3] == ["-m", argv[2]] and argv[2].startswith("benchmarks."), argv
    assert sum(len(b.lines) for b in RUN) >= 30


# -- running them ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`make demo`'s store, from the small world (the documented values hold in both)."""
    root = tmp_path_factory.mktemp("tour")
    env = {"FINKG_HOME": str(root / "home"), "FINKG_STORE": str(root / "store")}
    result = CliRunner().invoke(cli, ["demo", "--small"], env=env)
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    return env


def _run_line(argv: list[str], env: dict[str, str], cwd: Path) -> None:
    """One documented command: exit 0, no value cut, no traceback."""
    if argv[0] == "make":
        makefile = (ROOT / "Makefile").read_text()
        assert re.search(rf"^{argv[1]}:", makefile, re.M), argv
        return
    if argv[0] == "finkg" and argv[1] == "serve":
        _serve_briefly(argv, env)
        return
    if argv[0] == "finkg":
        result = CliRunner().invoke(cli, argv[1:], env=env)
        output = result.output
        assert result.exit_code in {0, *ALSO_ALLOWED.get(argv[1], ())}, (argv, output)
    else:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        done = subprocess.run(
            argv, cwd=cwd, env={**os.environ, **env, "PATH": path}, capture_output=True, text=True
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, (argv, output)
    assert "…" not in output, argv
    assert "Traceback" not in output, argv


def _run_block(block: Block, env: dict[str, str], cwd: Path, readers: bool) -> int:
    """The block's lines in order (reader lines only when `readers`); how many ran."""
    ran = 0
    for argv in block.lines:
        if argv[0] == "export":
            env = {**env, **dict(a.split("=", 1) for a in argv[1:])}
        elif _is_reader(argv) == readers:
            _run_line(argv, env, cwd)
            ran += 1
    return ran


def test_every_documented_command_runs_on_a_demo_store(
    demo_store: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every sh line of the README and the docs but the reader commands (below); each
    page's blocks run in order in one folder, as a reader following it would."""
    ran = 0
    for page_path in PAGES:
        cwd = tmp_path / page_path.stem
        cwd.mkdir()
        (cwd / "items.jsonl").write_text(ITEM)
        monkeypatch.chdir(cwd)
        for block in RUN:
            if block.page == page_path and not _uses_server(block):
                ran += _run_block(block, demo_store, cwd, readers=False)
    assert ran >= 25
    assert (tmp_path / "jsonld" / "news.jsonld").stat().st_size > 1000


def test_the_python_examples_run_on_a_demo_store(
    demo_store: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    for name, value in demo_store.items():
        monkeypatch.setenv(name, value)
    examples = [b for b in BLOCKS if b.lang == "python"]
    assert examples
    for block in examples:
        exec(compile(block.text, str(block.page), "exec"), {})
    assert "IndicatorWindow" in capsys.readouterr().out


@pytest.mark.model
def test_the_documented_reader_commands_run_on_a_demo_store(
    demo_store: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ask, forecast and recommend with a small packaged reader (SmolLM2-135M at Q4_0,
    `tests.readers.SMALL_READER`, set through FINKG_READER: the default 1.5B reader takes
    minutes per command on 2 cores; the recommend test in test_recommend_window.py runs the
    default one) and the hash embedder;
    the servers page's commands against finkg's stub server in place of its GPU host."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test does)")
    from finkg.reader.transport.stub import StubServer

    monkeypatch.chdir(tmp_path)
    env = {**demo_store, "FINKG_READER": SMALL_READER, "FINKG_EMBEDDER": "hash"}
    seen: set[str] = set()
    done: set[tuple[str, ...]] = set()
    for block in RUN:
        names = {a[1] for a in block.lines if _is_reader(a)}
        if not names:
            continue
        seen |= names
        if _uses_server(block):
            with StubServer() as stub:
                served = Block(block.page, block.lang, block.title, block.text)
                served.lines = [[w.replace(GPU_HOST, stub.url) for w in a] for a in block.lines]
                assert _run_block(served, env, tmp_path, readers=True) >= 2
                assert stub.served > 0  # they read there, not locally
        else:  # a command two pages show alike (the README's and its job page's) runs once
            once = Block(block.page, block.lang, block.title, block.text)
            once.lines = [a for a in block.lines if tuple(a) not in done]
            done |= {tuple(a) for a in block.lines}
            _run_block(once, env, tmp_path, readers=True)
    assert seen == set(READER_COMMANDS)


def test_the_commands_that_need_more_than_the_demo_parse() -> None:
    """A `needs ...` block's finkg lines parse with every option and value they give; its
    benchmark lines use only options the benchmark has."""
    checked = 0
    for block in NEEDS:
        for argv in block.lines:
            if argv[0] == "finkg":
                command: click.Command = cli
                name, args = "finkg", argv[1:]
                while isinstance(command, click.Group):
                    name, args = args[0], args[1:]
                    command = command.commands[name]
                with command.make_context(name, list(args)):
                    checked += 1
            elif argv[0] == "python":
                options = set(re.findall(r"--[a-z][a-z0-9-]*", _benchmark_help(argv[2])))
                used = {a.split("=")[0] for a in argv[3:] if a.startswith("--")}
                assert used <= options, (argv[2], used - options)
                checked += 1
    assert checked >= 12


@functools.cache
def _benchmark_help(module: str) -> str:
    """`python -m module --help`, run in this process: a subprocess each imported finkg and
    torch again, 1-2 s a benchmark. The file is executed as `__main__` of its package (not
    through runpy, which needs the module's loader: pytest's, when a run names the file)."""
    path = ROOT / (module.replace(".", "/") + ".py")
    body = compile(path.read_text(), str(path), "exec")
    scope = {"__name__": "__main__", "__package__": "benchmarks", "__file__": str(path)}
    out, argv = io.StringIO(), sys.argv
    sys.argv = [str(path), "--help"]
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
            exec(body, scope)
    finally:
        sys.argv = argv
    assert done.value.code in (0, None), out.getvalue()
    return out.getvalue()


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


# -- the site ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mkdocs build --strict`: no broken link, anchor or API reference."""
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (make test installs the docs extra)")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_site_builds_strictly_with_every_command_and_the_api(site: Path) -> None:
    reference = (site / "interfaces" / "cli.html").read_text()
    for path, _ in commands(cli, "finkg"):
        assert f'id="{path.replace(" ", "-")}"' in reference, path
    api = (site / "interfaces" / "python.html").read_text()
    for name in (
        "kg.store.open_store",
        "queries.select",
        "queries.rows.Rows",
        "shapes.validate.validate_store",
        "tasks.impact.prequential.Prequential",
    ):
        assert f'id="finkg.{name}"' in api, name
    for job in ("impact", "movement", "qa", "recommend"):
        assert (site / "jobs" / f"{job}.html").stat().st_size > 10_000


@pytest.mark.skipif(chromium() is None, reason="no Chromium (apt-get install chromium)")
def test_a_built_page_renders_offline_in_a_browser(site: Path, tmp_path: Path) -> None:
    """The event-impact page opened from disk: its title, navigation and the figures table
    render, and nothing is fetched from beyond the site's folder (a screenshot is saved)."""
    url = (site / "jobs" / "impact.html").as_uri()
    with Browser.start(tmp_path / "profile") as browser:
        page_ = browser.new_page()
        page_.goto(url)
        page_.wait_for("document.readyState === 'complete'")
        title = page_.evaluate("document.title")
        nav = page_.evaluate("[...document.querySelectorAll('nav a')].map(a => a.innerText)")
        cells = page_.evaluate("[...document.querySelectorAll('table td')].length")
        shot = page_.screenshot(tmp_path / "docs-impact.png")
        outside = page_.requests(lambda u: not u.startswith(("file:", "data:", "blob:")))
    assert title.startswith("Event impact")
    assert any("CLI reference" in n for n in nav) and any("Operations" in n for n in nav)
    assert cells >= 12
    assert shot.stat().st_size > 10_000
    assert outside == [], f"the page fetched from beyond its folder: {outside}"
