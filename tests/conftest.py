"""Shared fixtures: a fresh store per test, on each backend.

`store` is parametrized over the embedded backend (in memory) and the remote backend (the
SPARQL endpoint in FINKG_TEST_ENDPOINT, which `make test` / `.ci/run` start with
`scripts/with-oxigraph-server`); remote cases skip, saying why, when no endpoint is set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from finkg.config import Settings
from finkg.kg.store import BaseStore, open_store

DATA = Path(__file__).parent / "data"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def endpoint() -> str | None:
    return os.environ.get("FINKG_TEST_ENDPOINT") or None


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


def _fresh_remote(settings: Settings) -> BaseStore:
    url = endpoint()
    if url is None:
        pytest.skip("no SPARQL endpoint: set FINKG_TEST_ENDPOINT (make test starts one)")
    store = open_store(url, settings=settings)
    store._post_update("DROP SILENT ALL")  # type: ignore[attr-defined]  # a fresh store per test
    return store


@pytest.fixture(params=["embedded", pytest.param("remote", marks=pytest.mark.remote)])
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[BaseStore]:
    """A fresh, empty store on each backend."""
    if request.param == "embedded":
        s = open_store(None, settings=settings)
    else:
        s = _fresh_remote(settings)
    yield s
    s.close()


@pytest.fixture
def disk_store(tmp_path: Path, settings: Settings) -> Iterator[BaseStore]:
    s = open_store(tmp_path / "store", settings=settings)
    yield s
    s.close()
