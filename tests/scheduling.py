"""How `make test` spreads the tests that load no model over two pytest-xdist workers.

`--dist loadfile` with one change: a test file is one unit of work (its module fixtures are
built once, on one worker), and every file with a case on the run's servers is one unit
with the others, because such a case empties the one Oxigraph server or the one Virtuoso
server the run started (`tests/backends.py`). A case is on a server when its parameter id
names a server backend (`SERVER_CASES`): the backends reach tests only as parameters.

xdist's own `--dist loadgroup` would say this with marks, but xdist 3.8 appends the group to
a test's id through `item._nodeid`, which pytest 9.2 no longer reads: marked tests are spread
like `--dist load`, and two workers empty the same server under each other's tests.
"""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

SERVER_CASES = frozenset({"remote", "virtuoso"})  # tests/backends.py's server parameter ids
SERVERS = "servers"  # the unit of work of the files with a case on a server


def on_a_server(nodeid: str) -> bool:
    """Whether the test `nodeid` runs on one of the run's servers.

    >>> on_a_server("tests/test_store.py::test_a_write[remote]")
    True
    >>> on_a_server("tests/test_shapes.py::test_each[virtuoso-company-no-label-sparql]")
    True
    >>> on_a_server("tests/test_store.py::test_a_write[embedded]")
    False
    >>> on_a_server("tests/test_bm25.py::test_scores")
    False
    """
    _, _, params = nodeid.rsplit("::", 1)[-1].partition("[")
    return bool(SERVER_CASES & set(params.rstrip("]").split("-")))


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class ByFile(LoadScopeScheduling):
    """xdist's file scheduling with the files on servers as one unit (module docstring)."""

    _servers: frozenset[str] = frozenset()

    def schedule(self) -> None:
        if self.collection is None and self.collection_is_completed:
            collected = next(iter(self.registered_collections.values()), [])
            self._servers = frozenset(_file(n) for n in collected if on_a_server(n))
        super().schedule()

    def _split_scope(self, nodeid: str) -> str:
        path = _file(nodeid)
        return SERVERS if path in self._servers else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> ByFile | None:
    """`ByFile` for `--dist loadfile`; xdist's own scheduler for anything else."""
    return ByFile(config, log) if config.getvalue("dist") == "loadfile" else None
