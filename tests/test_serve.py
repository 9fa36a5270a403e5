"""finkg serve: the Oxigraph server over an on-disk store, read-only unless asked."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyoxigraph as ox
import pytest

from finkg.config import Settings
from finkg.errors import QueryError, StoreError
from finkg.kg.serve import server_command
from finkg.kg.store import open_store


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path: Path):
    settings = Settings(home=tmp_path / "home")
    with open_store(tmp_path / "store", settings=settings) as s:
        s.write(
            add=[
                ox.Quad(
                    ox.NamedNode("https://e.org/a"),
                    ox.NamedNode("https://e.org/p"),
                    ox.Literal("served"),
                    s.graphs.news,
                )
            ],
            note="x",
        )
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "finkg.cli",
            "serve",
            "--store",
            str(tmp_path / "store"),
            "--bind",
            f"127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"finkg serve exited {proc.returncode}: {proc.stderr.read().decode()}")
        try:
            urllib.request.urlopen(url + "/query?query=ASK%7B%7D", timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("finkg serve did not answer within 60 s")
            time.sleep(0.1)
    yield url, settings
    proc.terminate()
    proc.wait(timeout=10)


def test_a_served_store_answers_queries_and_refuses_writes(served) -> None:
    url, settings = served
    remote = open_store(url, settings=settings)
    assert remote.generation() == 1
    rows = remote.select("SELECT ?o WHERE { GRAPH ?g { ?s <https://e.org/p> ?o } }")
    assert [r["o"].value for r in rows] == ["served"]
    with pytest.raises((QueryError, StoreError)):
        remote.write(
            add=[
                ox.Quad(
                    ox.NamedNode("https://e.org/b"),
                    ox.NamedNode("https://e.org/p"),
                    ox.Literal("no"),
                    remote.graphs.news,
                )
            ],
            note="refused",
        )
    assert remote.generation() == 1


def test_the_server_command_is_read_only_by_default(tmp_path: Path) -> None:
    assert "serve-read-only" in server_command(tmp_path, bind="127.0.0.1:1")
    assert "serve" not in server_command(tmp_path, bind="127.0.0.1:1")
    assert "serve" in server_command(tmp_path, bind="127.0.0.1:1", read_write=True)


def test_readers_under_a_writing_ingest_see_whole_batches_and_no_errors(tmp_path: Path) -> None:
    """A short run of benchmarks/serve_load.py (the benchmark runs 8 workers for 60 s)."""
    from benchmarks.serve_load import run_load

    result = run_load(tmp_path / "store", workers=4, seconds=4)
    assert result.errors == 0, result.error_samples
    assert result.half_batches == 0 and result.checks > 10
    assert result.batches_written >= 2 and result.states_seen >= 2  # reads overlapped writes
