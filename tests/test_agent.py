"""finkg mcp (issue 40): finkg's tools for agents, driven by the MCP SDK's own client over
stdio and Streamable HTTP against the small demo store (with a synthetic annual report for
statement facts): every tool, every resource, a refused update, a stopped query, a users'
graph kept back, and `as_of` answers that do not change when later data is stored (the
future-invariance method)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pyoxigraph import NamedNode

from finkg.agent.calls import Scope
from finkg.agent.server import Service, build_server
from finkg.agent.view import as_of_view
from finkg.config import Settings
from finkg.demo.run import run_demo
from finkg.demo.world import WorldSpec
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.scoped import without_users
from finkg.kg.store import open_store

NY = ZoneInfo("America/New_York")
DATA = Path(__file__).parent / "data"
SMALL = WorldSpec(tickers=4, sessions=80, users=6)
FKG = "PREFIX fkg: <https://w3id.org/finkg/ns#>\n"
TOOLS = {
    "query",
    "list_queries",
    "run_query",
    "evidence_before",
    "facts",
    "ask",
    "audit",
    "describe",
}


@dataclass(frozen=True)
class World:
    root: Path
    store: Path
    settings: Settings
    ticker: str
    users: list[str]
    middle: dt.datetime  # an instant with news before and after it
    last: dt.datetime  # the last news item's availability


def _ingest_acme(store_dir: Path, settings: Settings, root: Path) -> None:
    s = open_store(store_dir, settings=settings)
    (root / "companies.csv").write_text("ticker,name\nACME,Acme Widgets (synthetic)\n")
    options = IngestOptions(graphs=s.graphs)
    ingest(s, "companies", loader("companies"), [root / "companies.csv"], options)
    doc = root / "acme-2019-10k.txt"
    shutil.copy(DATA / "acme-2019-10k.txt", doc)
    meta = {"published": "2020-02-15", "tickers": ["ACME"], "title": "Acme 2019 annual report"}
    (root / "acme-2019-10k.txt.meta.json").write_text(json.dumps(meta))
    assert ingest_documents(s, [doc]).ready == 1
    s.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("agent")
    settings = Settings(home=root / "home")
    store_dir = root / "store"
    run_demo(store_location=str(store_dir), files_dir=root / "files", settings=settings, spec=SMALL)
    _ingest_acme(store_dir, settings, root)
    s = open_store(store_dir, settings=settings, read_only=True)
    rows = s.select(
        FKG + "SELECT ?t WHERE { GRAPH ?g { ?a a fkg:NewsArticle ; fkg:availableAt ?t } } "
        "ORDER BY ?t"
    )
    times = [dt.datetime.fromisoformat(r["t"].value) for r in rows]  # type: ignore[union-attr]  # bound dateTimes
    tickers = sorted(
        r["ticker"].value  # type: ignore[union-attr]  # a bound literal
        for r in s.select(FKG + "SELECT ?ticker WHERE { GRAPH ?g { ?c fkg:ticker ?ticker } }")
    )
    users = sorted(
        g.value.rsplit("/", 1)[1] for g in s.named_graphs() if "/graph/users/" in g.value
    )
    s.close()
    assert len(times) > 10 and len(users) == SMALL.users
    return World(
        root,
        store_dir,
        settings,
        next(t for t in tickers if t != "ACME"),
        users,
        times[len(times) // 2],
        times[-1],
    )


def _env(world: World) -> dict[str, str]:
    return {"FINKG_HOME": str(world.settings.home), "FINKG_TOKEN": ""}


def _stdio(world: World, *extra: str, store: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "finkg", "mcp", "--store", str(store or world.store), *extra],
        env=_env(world),
    )


def _session(server: Any, body: Callable[[Client], Awaitable[None]]) -> None:
    async def run() -> None:
        async with Client(server, read_timeout_seconds=120) as client:
            await body(client)

    anyio.run(run)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _error(result: Any) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert "Traceback" not in text
    return text


# -- every tool and resource over stdio --------------------------------------------------------


def test_every_tool_and_resource_over_stdio(world: World) -> None:
    before = world.middle.isoformat()

    async def body(c: Client) -> None:
        listed = (await c.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        for tool in listed:  # an agent can act on each: a description and a JSON schema
            assert tool.description and len(tool.description) > 80, tool.name
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None and tool.annotations.read_only_hint

        # query, with a bounded result that says what it left out
        q = FKG + "SELECT ?a ?t WHERE { ?a a fkg:NewsArticle ; fkg:availableAt ?t } ORDER BY ?t"
        got = _data(await c.call_tool("query", {"sparql": q, "limit": 5}))
        assert got["form"] == "select" and got["shown"] == 5 and got["total"] > 5
        assert got["left_out"] == [f"{got['total'] - 5} row(s) past the limit of 5"]
        assert not any(g.startswith("users/") for g in got["graphs"])

        # as_of changes the answer, and keeps to its rule
        now = _data(await c.call_tool("query", {"sparql": q, "limit": 1000}))
        then = _data(await c.call_tool("query", {"sparql": q, "as_of": before, "limit": 1000}))
        assert 0 < then["total"] < now["total"] and then["as_of"] == before
        assert all(dt.datetime.fromisoformat(r["t"]) < world.middle for r in then["rows"])

        ask_q = "ASK { GRAPH ?g { ?s ?p ?o } }"
        assert _data(await c.call_tool("query", {"sparql": ask_q}))["boolean"] is True
        construct = FKG + "CONSTRUCT { ?c fkg:ticker ?t } WHERE { ?c fkg:ticker ?t }"
        graph = _data(await c.call_tool("query", {"sparql": construct}))
        assert graph["form"] == "construct" and graph["jsonld"]["@context"] == "finkg://context"

        # refusals, with the CLI's messages
        update = "INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }"
        assert "read-only" in _error(await c.call_tool("query", {"sparql": update}))
        service = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
        assert "SERVICE is refused" in _error(await c.call_tool("query", {"sparql": service}))
        broken = {"sparql": "SELECT ?x WHERE { ?x"}
        assert "SPARQL syntax error" in _error(await c.call_tool("query", broken))
        assert "not a SPARQL query" in _error(await c.call_tool("query", {"sparql": "SELEC"}))
        naive = {"sparql": q, "as_of": "2019-06-01T09:30:00"}
        assert "needs a zone" in _error(await c.call_tool("query", naive))

        # the query library
        catalogue = (await c.call_tool("list_queries", {})).structured_content["result"]
        names = {q["name"] for q in catalogue}
        assert {"evidence_before", "one_hop_before", "statement_facts"} <= names
        assert "clear_graphs" not in names  # updates are not offered
        ran = _data(
            await c.call_tool(
                "run_query",
                {
                    "name": "evidence_before",
                    "bindings": {
                        "company": f"https://w3id.org/finkg/id/company/{world.ticker}",
                        "before": before,
                    },
                    "limit": 3,
                },
            )
        )
        assert ran["total"] > 3 and ran["shown"] == 3
        assert "no packaged query" in _error(
            await c.call_tool("run_query", {"name": "../../etc/passwd"})
        )

        # evidence_before, facts, ask, audit, describe
        ev = _data(
            await c.call_tool(
                "evidence_before", {"company": world.ticker, "before": before, "limit": 4}
            )
        )
        assert ev["shown"] == 4 and ev["total"] == ran["total"]
        stamps = [dt.datetime.fromisoformat(e["available_at"]) for e in ev["evidence"]]
        assert stamps == sorted(stamps, reverse=True) and stamps[0] < world.middle
        unknown = {"company": "NOPE", "before": before}
        assert "no company with this ticker" in _error(
            await c.call_tool("evidence_before", unknown)
        )

        facts = _data(
            await c.call_tool(
                "facts",
                {"company": "ACME", "as_of": "2020-06-01", "period": "FY2019", "limit": 500},
            )
        )
        inventories = [f for f in facts["facts"] if f["line_item"] == "Inventories"]
        assert [(f["value"], f["printed"]) for f in inventories] == [("200000000", "200")]
        early = {"company": "ACME", "as_of": "2020-02-01"}
        assert _data(await c.call_tool("facts", early))["total"] == 0  # not yet filed

        question = "What is the FY2019 current ratio for Acme?"
        answer = _data(
            await c.call_tool(
                "ask", {"question": question, "as_of": "2020-06-01", "company": "ACME"}
            )
        )
        assert answer["how"] == "facts" and "2.17" in answer["answer"]
        assert answer["citations"] and answer["status"] == "High"
        refused = _error(
            await c.call_tool(
                "ask",
                {"question": "Why did Acme's margins rise?", "as_of": "2020-06-01"},
            )
        )
        assert "needs the reader" in refused and "--reader" in refused

        fact = next(x for x in answer["citations"] if "/fact/" in x["node"])["node"]
        trail = _data(await c.call_tool("audit", {"node": fact}))
        kinds = [h["iri"].split("/id/")[1].split("/")[0] for h in trail["hops"]]
        assert kinds[:3] == ["fact", "chunk", "document"] and "transition" in kinds
        company = f"https://w3id.org/finkg/id/company/{world.ticker}"
        around = _data(await c.call_tool("describe", {"node": company, "bound": 3}))
        assert around["shown"] > 0 and any("3 of" in note for note in around["left_out"])
        earlier = _data(
            await c.call_tool("describe", {"node": company, "bound": 0, "as_of": before})
        )
        later = _data(await c.call_tool("describe", {"node": company, "bound": 0}))
        assert earlier["total"] < later["total"]

        # resources
        uris = {str(r.uri) for r in (await c.list_resources()).resources}
        assert uris >= {
            "finkg://ontology",
            "finkg://ontology/line-items",
            "finkg://context",
            "finkg://shapes",
            "finkg://queries",
        }
        for uri in uris:
            text = (await c.read_resource(uri)).contents[0].text
            assert len(text) > 500, uri
        rq = (await c.read_resource("finkg://queries/evidence_before")).contents[0].text
        assert rq.startswith("# evidence_before:")

    _session(_stdio(world), body)


def test_a_query_past_the_time_limit_is_stopped_and_the_next_one_answers(world: World) -> None:
    heavy = (
        "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?a { ?s ?p ?o } GRAPH ?b { ?s2 ?p2 ?o2 } "
        "GRAPH ?c { ?x ?y ?z } }"
    )

    async def body(c: Client) -> None:
        started = time.monotonic()
        text = _error(await c.call_tool("query", {"sparql": heavy}))
        assert "time limit of 1 s" in text and "stopped" in text
        assert time.monotonic() - started < 30
        ok = _data(await c.call_tool("query", {"sparql": "ASK { GRAPH ?g { ?s ?p ?o } }"}))
        assert ok["boolean"] is True

    _session(_stdio(world, "--timeout", "1"), body)


def test_users_graphs_are_kept_back_unless_the_server_is_for_that_user(world: World) -> None:
    one, other = world.users[0], world.users[1]
    graphs = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    named = f"SELECT * FROM <https://w3id.org/finkg/id/graph/users/{other}> WHERE {{ ?s ?p ?o }}"

    async def anonymous(c: Client) -> None:
        seen = {r["g"] for r in _data(await c.call_tool("query", {"sparql": graphs}))["rows"]}
        assert seen and not any("/users/" in g for g in seen)
        assert "personal data" in _error(await c.call_tool("query", {"sparql": named}))

    async def for_one(c: Client) -> None:
        seen = {r["g"] for r in _data(await c.call_tool("query", {"sparql": graphs}))["rows"]}
        assert [g for g in seen if "/users/" in g] == [
            f"https://w3id.org/finkg/id/graph/users/{one}"
        ]
        assert "personal data" in _error(await c.call_tool("query", {"sparql": named}))

    _session(_stdio(world), anonymous)
    _session(_stdio(world, "--user", one), for_one)


# -- Streamable HTTP, with a bearer token ------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http_asks_for_the_token_and_serves_the_tools(
    world: World, tmp_path: Path
) -> None:
    token = "t0ken-for-the-agent-test"
    (tmp_path / "token").write_text(token + "\n")
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "finkg",
        "mcp",
        "--store",
        str(world.store),
        "--http",
        f"127.0.0.1:{port}",
        "--token-file",
        str(tmp_path / "token"),
    ]
    server = subprocess.Popen(
        command, env={**os.environ, **_env(world)}, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stderr is not None
        ready = server.stderr.readline()
        assert f"finkg mcp at http://127.0.0.1:{port}/mcp" in ready, ready
        url = f"http://127.0.0.1:{port}/mcp"
        request = urllib.request.Request(url, data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401

        async def body() -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=120) as http,
                Client(streamable_http_client(url, http_client=http)) as c,
            ):
                assert {t.name for t in (await c.list_tools()).tools} == TOOLS
                q = {"sparql": "ASK { GRAPH ?g { ?s ?p ?o } }"}
                assert _data(await c.call_tool("query", q))["boolean"] is True

        anyio.run(body)
    finally:
        server.terminate()
        server.wait(30)


def test_an_http_server_beyond_loopback_needs_a_token(world: World) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "finkg", "mcp", "--store", str(world.store), "--http", "0.0.0.0:1"],
        env={**os.environ, **_env(world)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "needs a bearer token" in done.stderr
    assert "Traceback" not in done.stderr


# -- as_of: the future-invariance method -------------------------------------------------------

INVARIANT = [
    "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }",
    FKG + "SELECT ?a ?t WHERE { ?a fkg:availableAt ?t } ORDER BY DESC(?t) ?a LIMIT 50",
    FKG + "SELECT ?c (COUNT(?x) AS ?n) WHERE { ?c ^fkg:about/fkg:availableAt ?x } GROUP BY ?c",
    FKG + "SELECT ?a WHERE { ?a a fkg:NewsArticle FILTER NOT EXISTS { ?a fkg:title ?t } }",
    FKG + "CONSTRUCT { ?a fkg:about ?c } WHERE { ?a fkg:about ?c ; a fkg:NewsArticle }",
]


def _later_news(world: World, folder: Path, after: dt.datetime) -> Path:
    """News stored after `after`: an item published after it, and an edit of an item the
    store holds (a revision, available from when it is stored: now)."""
    folder.mkdir(exist_ok=True)
    day = (after + dt.timedelta(days=3)).astimezone(NY).strftime("%Y-%m-%d")
    fresh = {
        "symbol": world.ticker,
        "publishedDate": f"{day} 10:00:00",
        "title": "A later item (synthetic)",
        "site": "wire",
        "text": "Something that happened later.",
        "url": "https://example.org/later",
    }
    stored = next((world.root / "files").rglob("*news*.jsonl"))
    edited = json.loads(stored.read_text().splitlines()[0])
    edited["text"] = edited.get("text", "") + " (corrected later)"
    path = folder / "later.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in (fresh, edited)))
    return path


def test_an_as_of_answer_is_the_same_whatever_is_stored_after_it(world: World) -> None:
    """The answers as of T over the store, then over a copy with news stored after T: the
    same; and no node an answer names became available at or after T."""
    at = world.middle
    copy = world.root / "store-later"
    if not copy.exists():
        shutil.copytree(world.store, copy)
        s = open_store(copy, settings=world.settings)
        later = _later_news(world, world.root / "later", world.last)
        report = ingest(s, "news", loader("news"), [later], IngestOptions(graphs=s.graphs))
        assert report.written == 2 and report.revisions == 1
        s.close()

    def answers(store_dir: Path) -> list[Any]:
        out: list[Any] = []

        async def body(c: Client) -> None:
            for q in INVARIANT:
                got = _data(await c.call_tool("query", {"sparql": q, "as_of": at.isoformat()}))
                out.append(got["rows"] or got["jsonld"])
            described = await c.call_tool(
                "describe",
                {
                    "node": f"https://w3id.org/finkg/id/company/{world.ticker}",
                    "as_of": at.isoformat(),
                    "bound": 0,
                },
            )
            out.append(_data(described)["jsonld"])

        scope = Scope(location=str(store_dir), settings=world.settings)
        service = Service.open(scope, timeout_s=120, reader=None)
        try:
            _session(build_server(service), body)
        finally:
            service.close()
        return out

    now, with_later = answers(world.store), answers(copy)
    assert now == with_later
    # and the answers name nothing available at or after T
    s = open_store(world.store, settings=world.settings, read_only=True)
    stamps = {
        r["n"].value: dt.datetime.fromisoformat(r["t"].value)  # type: ignore[union-attr]  # bound
        for r in s.select(FKG + "SELECT ?n ?t WHERE { GRAPH ?g { ?n fkg:availableAt ?t } }")
    }
    s.close()
    named = {v for rows in now[:4] for row in rows for v in row.values() if isinstance(v, str)}
    assert named & stamps.keys()  # the check below has something to check
    assert all(stamps[n] < at for n in named & stamps.keys())


def test_the_view_leaves_out_every_triple_touching_a_later_node(world: World) -> None:
    s = open_store(world.store, settings=world.settings, read_only=True)
    scoped = without_users(s)
    view = as_of_view(s, world.middle, scoped.allowed)
    later = {
        r["n"]  # bound
        for r in s.select(
            FKG
            + "SELECT ?n WHERE { GRAPH ?g { ?n fkg:availableAt ?t } FILTER (?t >= ?at) }".replace(
                "?at", f'"{world.middle.isoformat()}"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
            )
        )
    }
    assert later
    kept = list(view.quads())
    assert kept and not any(q.subject in later or q.object in later for q in kept)
    assert not any(
        q.graph_name.value.startswith(s.graphs.prefix + "users/")  # type: ignore[union-attr]  # named graphs
        for q in kept
    )
    assert isinstance(next(iter(later)), NamedNode)
    s.close()
