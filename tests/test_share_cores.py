"""finkg's model runtimes share the cores (issue 43 item 2): `import finkg` sets libgomp's
spin count before either runtime loads it (benchmarks/reports/sharing.md measures why)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from finkg.config import SPIN_COUNT

PROBE = """
import json, os, sys
import finkg
from finkg.reader.transport import backends
from finkg.retrieval.index import embed
print(json.dumps({
    "spin": os.environ.get("GOMP_SPINCOUNT"),
    "loaded": sorted(m for m in ("torch", "llama_cpp") if m in sys.modules),
}))
"""


def _probe(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"} | env
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=clean, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_importing_finkg_sets_the_spin_count_before_torch_or_llama_cpp_loads() -> None:
    """The setting only counts when libgomp has not loaded yet: importing finkg, and the
    modules that open its readers and embedders, loads neither runtime."""
    assert _probe() == {"spin": str(SPIN_COUNT), "loaded": []}


def test_a_spin_count_the_user_set_is_kept() -> None:
    assert _probe(GOMP_SPINCOUNT="0")["spin"] == "0"
