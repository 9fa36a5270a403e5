"""Isolation: one user's export reads only their own graph and the market graph, and no
triple of another user's graph reaches it, however it is asked for."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.demo.world import WorldSpec
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from tests.worlds import build

SPEC = WorldSpec(tickers=3, sessions=60, users=3, seed=11)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, set[str]]]:
    """A store with three customers' graphs; each user's own terms (IRIs and literals that
    appear in no other graph)."""
    root = tmp_path_factory.mktemp("isolation")
    files = build(root / "files", SPEC)
    with open_store(root / "store") as store:
        options = IngestOptions(graphs=store.graphs)
        for kind, pattern in (("companies", "companies.csv"), ("fartrans", "fartrans/*.csv")):
            ingest(store, kind, loader(kind), sorted(files.glob(pattern)), options)
        return root, _own_terms(store)


def _own_terms(store: BaseStore) -> dict[str, set[str]]:
    users = [g for g in store.named_graphs() if "/graph/users/" in g.value]
    terms = {
        g.value.rsplit("/", 1)[1]: {
            str(t) for q in store.quads(g) for t in (q.subject, q.object) if not _shared(t)
        }
        for g in users
    }
    elsewhere = {
        str(t)
        for g in store.named_graphs()
        if g not in users
        for q in store.quads(g)
        for t in (q.subject, q.object)
    }
    return {u: t - elsewhere - set().union(*(o for v, o in terms.items() if v != u))
            for u, t in terms.items()}  # fmt: skip


def _shared(term: object) -> bool:
    """Literals any two customers may share (a risk level, a number): not evidence of a leak."""
    return isinstance(term, ox.Literal) and len(term.value) < 12


def _export(root: Path, *args: str):
    return CliRunner().invoke(
        cli, ["export", "--store", str(root / "store"), "--format", "nquads", *args]
    )


def _leaks(data: str, terms: set[str]) -> list[str]:
    return sorted(t for t in terms if t in data)


def test_the_world_has_users_with_terms_of_their_own(world) -> None:
    _, own = world
    assert len(own) == 3 and all(len(t) > 20 for t in own.values())


def test_a_users_export_holds_their_graph_and_the_market_only(world) -> None:
    root, own = world
    a, b, c = sorted(own)
    result = _export(root, "--user", a)
    assert result.exit_code == 0, result.output
    assert _leaks(result.output, own[b] | own[c]) == []
    assert _leaks(result.output, own[a]) == sorted(own[a])  # all of A's graph is there
    graphs = {line.rsplit(" ", 2)[-2] for line in result.output.splitlines() if line}
    assert graphs == {
        f"<https://w3id.org/finkg/id/graph/users/{a}>",
        "<https://w3id.org/finkg/id/graph/market>",
    }


def test_naming_another_users_graph_is_refused(world) -> None:
    root, own = world
    a, b, _ = sorted(own)
    result = _export(root, "--user", a, "--graph", f"users/{b}")
    assert result.exit_code == 2 and f"users/{b}" in result.output
    assert _leaks(result.output, own[b]) == []


def test_a_construct_about_another_users_nodes_returns_nothing_of_theirs(world) -> None:
    root, own = world
    a, b, _ = sorted(own)
    nodes = sorted(t for t in own[b] if t.startswith("<"))[:20]
    binds = [arg for n in nodes for arg in ("--bind", f"node={n[1:-1]}")]
    leaked = _export(root, "--user", a, "--query", "one_hop", *binds)
    assert leaked.exit_code == 0, leaked.output
    assert _leaks(leaked.output, own[b]) == []
    unrestricted = _export(root, "--query", "one_hop", *binds)  # the same query, no --user
    assert _leaks(unrestricted.output, own[b])  # finds B's triples: the restriction did it


def test_a_bad_user_id_is_refused(world) -> None:
    root, _ = world
    result = _export(root, "--user", "a/../../market")
    assert result.exit_code == 2 and "a/../../market" in result.output
