"""finkg serve: the Oxigraph server over an on-disk store behind finkg's front: read-only
unless asked, no calls to other hosts unless asked, a query time limit, and nothing left
running once it is stopped."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.config import Settings
from finkg.errors import InputError, StoreError
from finkg.kg.serve import server_command
from finkg.kg.sparql_guard import outbound_reason
from finkg.kg.store import open_store

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _make_store(path: Path, settings: Settings, *, triples: int = 1) -> None:
    with open_store(path, settings=settings) as s:
        s.write(
            add=[
                ox.Quad(
                    ox.NamedNode(f"https://e.org/a{i}" if i else "https://e.org/a"),
                    ox.NamedNode("https://e.org/p"),
                    ox.Literal("served" if i == 0 else str(i)),
                    s.graphs.news,
                )
                for i in range(triples)
            ],
            note="x",
        )


def _start(store: Path, *args: str) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "finkg.cli", "serve", "--store", str(store)]
    proc = subprocess.Popen(
        [*command, "--bind", f"127.0.0.1:{port}", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"finkg serve exited {proc.returncode}: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            urllib.request.urlopen(url + "/query?query=ASK%7B%7D", timeout=1).close()
            return proc, url
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("finkg serve did not answer within 60 s")
            time.sleep(0.1)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., tuple[str, Settings]]]:
    """Starts finkg serve over a one-triple store with the given options."""
    settings = Settings(home=tmp_path / "home")
    _make_store(tmp_path / "store", settings)
    started: list[subprocess.Popen] = []

    def start(*args: str) -> tuple[str, Settings]:
        proc, url = _start(tmp_path / "store", *args)
        started.append(proc)
        return url, settings

    yield start
    for proc in started:
        _stop(proc)


def _get(url: str, query: str, *, param: str = "query") -> tuple[int, str]:
    try:
        with urllib.request.urlopen(
            url + "/query?" + urllib.parse.urlencode({param: query}), timeout=30
        ) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _post(url: str, path: str, body: bytes, ctype: str) -> tuple[int, str]:
    request = urllib.request.Request(
        url + path, data=body, method="POST", headers={"Content-Type": ctype}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request it gets (another host, to the
    SPARQL server)."""
    hits: list[str] = []

    class Record(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql", hits
    server.shutdown()
    server.server_close()


def test_a_served_store_answers_queries_and_refuses_writes_saying_it_is_read_only(
    serve,
) -> None:
    url, settings = serve()
    remote = open_store(url, settings=settings)
    assert remote.generation() == 1
    rows = remote.select("SELECT ?o WHERE { GRAPH ?g { ?s <https://e.org/p> ?o } }")
    assert [r["o"].value for r in rows] == ["served"]
    quad = ox.Quad(
        ox.NamedNode("https://e.org/b"), ox.NamedNode("https://e.org/p"), ox.Literal("no")
    )
    with pytest.raises(StoreError, match="read-only") as e:
        remote.write(
            add=[ox.Quad(quad.subject, quad.predicate, quad.object, remote.graphs.news)],
            note="refused",
        )
    assert "--read-write" in str(e.value) and "cannot reach" not in str(e.value)
    assert remote.generation() == 1


def test_a_cli_write_to_a_read_only_endpoint_says_so_not_cannot_reach(serve) -> None:
    url, _ = serve()
    result = CliRunner().invoke(
        cli,
        [
            "query",
            "--update",
            "--store",
            url,
            "INSERT DATA { <https://e.org/x> <https://e.org/p> 1 }",
        ],
    )
    assert result.exit_code == 3, result.output
    assert "read-only" in result.output and "finkg serve --read-write" in result.output
    assert "cannot reach" not in result.output and "Traceback" not in result.output


def test_service_is_refused_with_its_reason_and_no_request_leaves(serve, listener) -> None:
    url, settings = serve()
    target, hits = listener
    query = f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}"
    status, body = _get(url, query)
    assert status == 400 and "SERVICE" in body and "--allow-service" in body
    status, body = _post(url, "/query", query.encode(), "application/sparql-query")
    assert status == 400 and "SERVICE" in body
    form = urllib.parse.urlencode({"query": query.replace("SERVICE", "service")}).encode()
    status, body = _post(url, "/query", form, "application/x-www-form-urlencoded")
    assert status == 400
    with pytest.raises(InputError, match="SERVICE"):
        open_store(url, settings=settings).select(query)
    time.sleep(0.3)
    assert hits == []
    assert _get(url, 'SELECT * WHERE { ?service ?p "SERVICE" }')[0] == 200  # not a keyword


def test_with_allow_service_a_federated_query_reaches_the_other_host(serve, listener) -> None:
    url, _ = serve("--allow-service")
    target, hits = listener
    status, _ = _get(url, f"SELECT * WHERE {{ SERVICE SILENT <{target}> {{ ?s ?p ?o }} }}")
    assert status == 200 and len(hits) == 1


def test_load_is_refused_on_a_read_write_endpoint(serve, listener) -> None:
    url, _ = serve("--read-write")
    target, hits = listener
    status, body = _post(url, "/update", f"LOAD <{target}>".encode(), "application/sparql-update")
    assert status == 400 and "LOAD" in body
    assert hits == []
    insert = b"INSERT DATA { <https://e.org/x> <https://e.org/p> 1 }"
    assert _post(url, "/update", insert, "application/sparql-update")[0] == 204


def test_a_query_past_the_time_limit_is_stopped_and_reported(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    _make_store(tmp_path / "store", settings, triples=3000)
    proc, url = _start(tmp_path / "store", "--timeout", "1")
    try:
        started = time.monotonic()
        status, body = _get(
            url, "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f . ?h ?i ?j } }"
        )
        assert status == 503 and "time limit of 1 s" in body
        assert time.monotonic() - started < 20
        with pytest.raises(StoreError, match="time limit"):
            open_store(url, settings=settings).select(
                "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f . ?h ?i ?j } }"
            )
        assert _get(url, "ASK { ?s ?p ?o }")[0] == 200  # the server still answers
    finally:
        _stop(proc)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie no longer serves


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_finkg_serve_and_its_oxigraph_server(tmp_path: Path, sig: int) -> None:
    settings = Settings(home=tmp_path / "home")
    _make_store(tmp_path / "store", settings)
    proc, url = _start(tmp_path / "store")
    children = _children(proc.pid)
    assert children, "the oxigraph server runs as finkg serve's child"
    proc.send_signal(sig)
    assert proc.wait(timeout=20) == 0
    deadline = time.monotonic() + 10
    while not all(_gone(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_gone(c) for c in children)
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/query?query=ASK%7B%7D", timeout=2)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_oxigraph_server_dies_with_a_killed_finkg_serve(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    _make_store(tmp_path / "store", settings)
    proc, _ = _start(tmp_path / "store")
    children = _children(proc.pid)
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while not all(_gone(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert children and all(_gone(c) for c in children)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("SELECT * { SERVICE <http://h/> { ?s ?p ?o } }", "SERVICE"),
        ("select * { ?s ?p ?o service silent ?x { } }", "SERVICE"),
        ("SELECT * { \\u0053ERVICE <http://h/> { } }", "SERVICE"),
        ("LOAD <http://h/data.ttl> INTO GRAPH <http://g>", "LOAD"),
        ("SELECT * { ?s <http://h/SERVICE> ?o } # SERVICE <http://h/>", None),
        ("PREFIX service: <http://h/> SELECT ?service { ?service service:load 'LOAD' }", None),
        ('SELECT * { ?s ?p """a "" SERVICE""" }', None),
    ],
)
def test_the_guard_finds_service_and_load_keywords_only(text: str, reason: str | None) -> None:
    assert outbound_reason(text) == reason


def test_the_server_command_is_read_only_by_default_and_has_a_time_limit(tmp_path: Path) -> None:
    assert "serve-read-only" in server_command(tmp_path, bind="127.0.0.1:1")
    assert "serve" not in server_command(tmp_path, bind="127.0.0.1:1")
    assert "serve" in server_command(tmp_path, bind="127.0.0.1:1", read_write=True)
    assert server_command(tmp_path, bind="127.0.0.1:1", timeout_s=30)[-2:] == ["--timeout-s", "30"]


def test_the_query_time_limit_is_a_setting() -> None:
    assert Settings.from_env({}).query_timeout_s == 60
    assert Settings.from_env({"FINKG_QUERY_TIMEOUT": "5"}).query_timeout_s == 5
    for bad in ("soon", "-1", "inf"):
        with pytest.raises(InputError, match="FINKG_QUERY_TIMEOUT"):
            Settings.from_env({"FINKG_QUERY_TIMEOUT": bad})


def test_readers_under_a_writing_ingest_see_whole_batches_and_no_errors(tmp_path: Path) -> None:
    """A short run of benchmarks/serve_load.py (the benchmark runs 8 workers for 60 s)."""
    from benchmarks.serve_load import run_load

    result = run_load(tmp_path / "store", workers=4, seconds=4)
    assert result.errors == 0, result.error_samples
    assert result.half_batches == 0 and result.checks > 10
    assert result.batches_written >= 2 and result.states_seen >= 2  # reads overlapped writes
