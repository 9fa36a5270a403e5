"""finkg serve's access control (issue 38 item 4): a bearer token for reads and writes, no
read-write beyond loopback without one, the users' personal graphs kept back unless
asked, and the audit and ontology graphs beyond any update's reach. Checked with curl,
SPARQLWrapper and finkg's own remote backend, as a user would reach the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from SPARQLWrapper import JSON, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import Unauthorized

from finkg.config import Settings
from finkg.errors import StoreError
from finkg.kg.store import open_store
from tests.test_serve import _free_port, _stop

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "s3cret-token-for-tests-0123456789"
E = "https://e.org/"
SERVE = (sys.executable, "-m", "finkg.cli", "serve", "--store")


def _store(path: Path) -> Settings:
    """A store with one news triple and one triple in a user's graph."""
    settings = Settings(home=path.parent / "home")
    with open_store(path, settings=settings) as s:
        s.write(
            add=[
                ox.Quad(
                    ox.NamedNode(E + "n"), ox.NamedNode(E + "p"), ox.Literal("news"), s.graphs.news
                ),
                ox.Quad(
                    ox.NamedNode(E + "t"),
                    ox.NamedNode(E + "p"),
                    ox.Literal("a purchase"),
                    s.graphs.user("C1"),
                ),
            ],
            note="x",
        )
    return settings


def _start(
    store: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    """finkg serve with `args`, once it answers (401 counts as answering)."""
    port = _free_port()
    environ = {k: v for k, v in os.environ.items() if k != "FINKG_TOKEN"}
    environ.update({"PYTHONPATH": str(ROOT), **(env or {})})
    proc = subprocess.Popen(
        [*SERVE, str(store), "--bind", f"127.0.0.1:{port}", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environ,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"finkg serve exited {proc.returncode}: {proc.stderr.read().decode()}")  # type: ignore[union-attr]  # stderr is a pipe
        status, _ = _request(url + "/query?query=ASK%7B%7D")
        if status in (200, 401):
            return proc, url
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("finkg serve did not answer within 60 s")
        time.sleep(0.1)


def _request(
    url: str, *, token: str | None = None, data: bytes | None = None, ctype: str | None = None
) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if ctype:
        headers["Content-Type"] = ctype
    request = urllib.request.Request(
        url, data=data, headers=headers, method="POST" if data else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., str]]:
    _store(tmp_path / "store")
    (tmp_path / "token").write_text(TOKEN + "\n")
    started: list[subprocess.Popen] = []

    def start(*args: str, env: dict[str, str] | None = None) -> str:
        args = tuple(a.replace("TOKEN_FILE", str(tmp_path / "token")) for a in args)
        proc, url = _start(tmp_path / "store", *args, env=env)
        started.append(proc)
        return url

    yield start
    for proc in started:
        _stop(proc)


def _curl(url: str, *args: str) -> int:
    done = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", *args, url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return int(done.stdout or 0)


SELECT_ALL = "SELECT ?g ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?o"


@pytest.mark.skipif(
    subprocess.run(["which", "curl"], capture_output=True).returncode, reason="no curl"
)
def test_with_a_token_curl_gets_401_without_it_and_200_with_it(serve) -> None:
    url = serve("--token-file", "TOKEN_FILE")
    query = url + "/query?" + urllib.parse.urlencode({"query": SELECT_ALL})
    assert _curl(query) == 401
    assert _curl(query, "-H", "Authorization: Bearer wrong-token-0123456789") == 401
    assert _curl(query, "-H", f"Authorization: Bearer {TOKEN}") == 200
    assert _curl(url + "/") == 200  # the SPARQL page itself holds no data


def test_sparqlwrapper_is_refused_without_the_token_and_answered_with_it(serve) -> None:
    url = serve("--token-file", "TOKEN_FILE")
    sw = SPARQLWrapper(url + "/query")
    sw.setQuery(SELECT_ALL)
    sw.setReturnFormat(JSON)
    with pytest.raises(Unauthorized):
        sw.query()
    sw.addCustomHttpHeader("Authorization", f"Bearer {TOKEN}")
    rows = sw.query().convert()["results"]["bindings"]  # type: ignore[index, call-overload]  # SPARQLWrapper's JSON is untyped
    values = [r["o"]["value"] for r in rows]
    assert "news" in values and "a purchase" not in values  # the users' graph is not served


def test_the_token_can_come_from_the_environment_and_finkg_sends_it(serve, tmp_path: Path) -> None:
    url = serve(env={"FINKG_TOKEN": TOKEN})
    without = open_store(url, settings=Settings(home=tmp_path / "h"))
    with pytest.raises(StoreError, match="FINKG_TOKEN"):
        without.select("SELECT * {}")
    with_token = open_store(url, settings=Settings(home=tmp_path / "h", token=TOKEN))
    assert with_token.select("SELECT (1 AS ?one) {}").rows


def test_a_users_graph_is_forbidden_unless_the_server_includes_users(serve) -> None:
    url = serve()
    user = "https://w3id.org/finkg/id/graph/users/C1"
    named = f"SELECT ?o WHERE {{ GRAPH <{user}> {{ ?s ?p ?o }} }}"
    prefixed = (
        "PREFIX u: <https://w3id.org/finkg/id/graph/users/> "
        "SELECT ?o WHERE { GRAPH u:C1 { ?s ?p ?o } }"
    )
    for query in (named, prefixed):
        status, body = _request(url + "/query?" + urllib.parse.urlencode({"query": query}))
        assert status == 403 and "--include-users" in body, (status, body)
    status, _ = _request(url + "/store?" + urllib.parse.urlencode({"graph": user}))
    assert status == 403
    status, _ = _request(
        url + "/query?" + urllib.parse.urlencode({"query": SELECT_ALL, "named-graph-uri": user})
    )
    assert status == 403
    # a query that names no graph reads every graph but the users'
    status, body = _request(
        url + "/query?" + urllib.parse.urlencode({"query": SELECT_ALL}),
    )
    assert status == 200 and "purchase" not in body and "news" in body
    status, body = _request(
        url
        + "/query?"
        + urllib.parse.urlencode({"query": "SELECT ?o { ?s ?p ?o }", "union-default-graph": ""})
    )
    assert status == 200 and "purchase" not in body and "news" in body


def test_with_include_users_the_users_graph_is_served(serve) -> None:
    url = serve("--include-users")
    status, body = _request(url + "/query?" + urllib.parse.urlencode({"query": SELECT_ALL}))
    assert status == 200 and "purchase" in body


def test_read_write_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    _store(tmp_path / "store")
    environ = {k: v for k, v in os.environ.items() if k != "FINKG_TOKEN"}
    done = subprocess.run(
        [*SERVE, str(tmp_path / "store"), "--bind", f"0.0.0.0:{_free_port()}", "--read-write"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 2
    assert "needs a token" in done.stderr and "--token-file" in done.stderr
    assert "Traceback" not in done.stderr


def test_writes_need_the_token_and_never_rewrite_the_audit_graph(serve) -> None:
    url = serve("--read-write", "--token-file", "TOKEN_FILE")
    news = "https://w3id.org/finkg/id/graph/news"
    audit = "https://w3id.org/finkg/id/graph/audit"
    insert = f'INSERT DATA {{ GRAPH <{news}> {{ <{E}m> <{E}p> "more" }} }}'.encode()
    update = "application/sparql-update"
    assert _request(url + "/update", data=insert, ctype=update)[0] == 401
    assert _request(url + "/update", data=insert, ctype=update, token=TOKEN)[0] in (200, 204)
    wipe = f"DELETE WHERE {{ GRAPH <{audit}> {{ ?s ?p ?o }} }}".encode()
    status, body = _request(url + "/update", data=wipe, ctype=update, token=TOKEN)
    assert status == 403 and "audit" in body
    every = b"DELETE WHERE { GRAPH ?g { ?s ?p ?o } }"
    status, body = _request(url + "/update", data=every, ctype=update, token=TOKEN)
    assert status == 403 and "any graph" in body
    redefine = (
        f"INSERT DATA {{ GRAPH <{news}> {{ <https://w3id.org/finkg/ns#NewsArticle> "
        "<http://www.w3.org/2000/01/rdf-schema#subClassOf> <https://e.org/Nothing> } }"
    ).encode()
    status, body = _request(url + "/update", data=redefine, ctype=update, token=TOKEN)
    assert status == 403 and "vocabulary" in body
    status, _ = _request(
        url + "/store?" + urllib.parse.urlencode({"graph": audit}),
        data=b"<urn:a> <urn:b> <urn:c> .",
        ctype="application/n-triples",
        token=TOKEN,
    )
    assert status == 403
    # the audit graph still holds its commit, and the news write landed
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{audit}> {{ ?s ?p ?o }} }}"
    status, body = _request(
        url + "/query?" + urllib.parse.urlencode({"query": query}),
        token=TOKEN,
    )
    assert status == 200 and json.loads(body)["results"]["bindings"][0]["n"]["value"] != "0"


def test_finkg_writes_through_a_read_write_server_with_its_token(serve, tmp_path: Path) -> None:
    """finkg's remote backend appends a commit to the audit graph with every write: the
    one write to that graph a server takes."""
    url = serve("--read-write", "--token-file", "TOKEN_FILE")
    remote = open_store(url, settings=Settings(home=tmp_path / "h", token=TOKEN))
    before = remote.generation()
    remote.write(
        add=[
            ox.Quad(
                ox.NamedNode(E + "w"), ox.NamedNode(E + "p"), ox.Literal("w"), remote.graphs.news
            )
        ],
        note="through the server",
    )
    assert remote.generation() == before + 1
