"""Shared fixtures: a fresh store per test, on each backend.

`store` is parametrized over the embedded backend (in memory) and the remote backend (the
SPARQL endpoint in FINKG_TEST_ENDPOINT, which `make test` / `.ci/run` start with
`scripts/with-oxigraph-server`); remote cases skip, saying why, when no endpoint is set.

The store suite and the query library also run on a second engine, Virtuoso 7
(`ENGINES`: FINKG_TEST_VIRTUOSO and FINKG_TEST_VIRTUOSO_GSP, started by
`scripts/with-virtuoso-server`); those cases skip with the script's reason when it could not
start one.

`make test` runs the suite on two pytest-xdist workers (`scripts/run_tests.py`: `-n 2 --dist
loadfile`, one thread of model work each), scheduled by `tests.scheduling`: a file is one
unit of work, and the files with cases on the run's servers are one unit.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from finkg.config import Settings
from finkg.kg.store import BaseStore, open_store
from tests.backends import BACKENDS, open_backend
from tests.readers import SMALL_READER

DATA = Path(__file__).parent / "data"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


if importlib.util.find_spec("xdist") is not None:  # a hook pytest finds here: --dist loadfile
    from tests.scheduling import pytest_xdist_make_scheduler  # noqa: F401


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[BaseStore]:
    """A fresh, empty store on each backend."""
    s = open_backend(request.param, settings)
    yield s
    s.close()


@pytest.fixture
def disk_store(tmp_path: Path, settings: Settings) -> Iterator[BaseStore]:
    s = open_store(tmp_path / "store", settings=settings)
    yield s
    s.close()


@pytest.fixture(scope="session")
def small_reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plumbing tests' model file (`tests.readers.SMALL_READER`), assembled and verified
    once per session; the tests skip, saying why, where llama-cpp-python or the packaged
    weights are missing."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test does)")
    from finkg.reader.llm import ReaderError
    from finkg.reader.transport.models import assemble

    try:
        return assemble(SMALL_READER, tmp_path_factory.mktemp("readers"))
    except ReaderError as e:
        pytest.skip(str(e))
