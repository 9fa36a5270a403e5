"""`make test`'s suite on both cores: two pytest-xdist workers, one thread of model work each.

`pytest -n 2 --dist loadfile`: a test file stays on one worker (its module fixtures are built
once), and the files with cases on the run's one Oxigraph and Virtuoso servers are one unit
of work (tests/scheduling.py). Each worker does its model work on one thread
(`FINKG_THREADS=1`, which the tests' readers, trainings and embedders take through
`tests.readers.THREADS`; OpenMP, OpenBLAS and MKL likewise): two workers that each spread
over both cores starve each other (the suite's second half took 395 s so, 312 s with one
thread each), and a reader on one thread keeps its speed beside a busy neighbour
(benchmarks/reports/sharing.md: 0.60x of two idle threads alone, 0.63x beside a busy loop).
A variable already set in the environment is kept.

Arguments after the script's name go to pytest; the exit status is pytest's.

    scripts/with-oxigraph-server .venv/bin/python scripts/run_tests.py [PYTEST ARGS]
"""

from __future__ import annotations

import os
import subprocess
import sys

WORKERS = 2
ONE_THREAD = ("FINKG_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def main(args: list[str]) -> int:
    env = {name: "1" for name in ONE_THREAD} | dict(os.environ)
    command = [sys.executable, "-m", "pytest", "-n", str(WORKERS), "--dist", "loadfile", *args]
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
