"""`make test`'s suite in two phases, so that it uses both cores without starving a reader.

1. The tests that load a model (`-m model`) run alone, in this process's Python: their
   llama.cpp and torch workers use every core, and beside a second busy process a read
   takes about twice as long (benchmarks/reports/sharing.md).
2. Everything else runs on two pytest-xdist workers (`-n 2 --dist loadfile`): a test file
   stays on one worker, and the files with cases on the run's one Oxigraph and Virtuoso
   servers are one unit of work (tests/scheduling.py).

Arguments after the script's name go to both pytest runs. The exit status is the first
failing phase's (pytest's own codes), 0 when both pass; a phase that selects no test (5)
counts as passed.

    scripts/with-oxigraph-server .venv/bin/python scripts/run_tests.py [PYTEST ARGS]
"""

from __future__ import annotations

import subprocess
import sys
import time

NO_TESTS = 5  # pytest's exit status when no test was selected

PHASES = (
    ("the tests that load a model, alone", ["-m", "model and not bench"]),
    (
        "the rest, on two workers",
        ["-m", "not model and not bench", "-n", "2", "--dist", "loadfile"],
    ),
)


def main(args: list[str]) -> int:
    status = 0
    for i, (what, options) in enumerate(PHASES, 1):
        print(f"finkg tests, phase {i} of {len(PHASES)}: {what}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, "-m", "pytest", *options, *args])
        minutes = (time.monotonic() - started) / 60
        print(f"finkg tests, phase {i}: exit {code} after {minutes:.1f} min", flush=True)
        if code not in (0, NO_TESTS) and status == 0:
            status = code
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
