"""Where `finkg validate` spends its time (issue 43): each compiled shape check's query, timed
on stores of several sizes, with its slope against the triples.

`validate_store` runs one SPARQL query per check that applies (`shapes/engine.py`) over the
union default graph. This runs the same queries the same way, one at a time, on each store
given (for example the 1× and 5× stores `python -m benchmarks.scale --sizes 1,5 --keep`
leaves), and reports the checks that take the most time at the largest store, with the
slope of each (time ∝ triples^slope: 1 linear) and the share of the whole. Then it times the
passes `validate_store` runs them in (`shapes/passes.py`: the checks of one shape and path
in one query), on the same store right after, so the two totals compare.

    python -m benchmarks.validate_checks STORE [STORE ...] [--top 15]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from benchmarks.harness import report_option, write_report
from finkg import queries
from finkg.kg.store import BaseStore, open_store
from finkg.shapes.passes import plan
from finkg.shapes.validate import finkg_checks


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.validate_checks", description=__doc__.split("\n")[0]
    )
    report_option(p, "validate_checks.md")
    p.add_argument("stores", type=Path, nargs="+", help="on-disk stores, smallest first")
    p.add_argument("--top", type=int, default=15, help="checks listed [15]")
    return p


def measure(path: Path) -> dict:
    """Each applying check's seconds and rows on the store at `path` (opened read-only)."""
    checks = finkg_checks()
    applying = []
    with open_store(path, read_only=True) as store:
        triples = sum(r.integer("triples") for r in queries.select(store, "graph_counts"))
        present = {
            str(row["class"].value)
            for row in store.select(queries.load("classes_present").text, default_graphs="union")
        }
        timed = []
        for check in checks:
            if not (check.other_targets or check.classes & present):
                continue
            applying.append(check)
            seconds, rows = _timed(store, check.query)
            timed.append(
                {
                    "shape": check.shape,
                    "path": check.path,
                    "component": check.component,
                    "seconds": seconds,
                    "rows": rows,
                }
            )
            print(f"{seconds:8.2f} s  {check.component:<12} {check.path[-50:]}", flush=True)
        passes = []
        for run in plan(applying):
            seconds, rows = _timed(store, run.query)
            passes.append({"checks": len(run.checks), "seconds": seconds, "rows": rows})
            print(f"{seconds:8.2f} s  a pass of {len(run.checks)} check(s)", flush=True)
    return {"store": str(path), "triples": triples, "checks": timed, "passes": passes}


def _timed(store: BaseStore, query: str) -> tuple[float, int]:
    """A query's seconds and rows, run as `validate_store` runs it (union default graph)."""
    started = time.perf_counter()
    rows = sum(1 for _ in store.select(query, default_graphs="union"))
    return time.perf_counter() - started, rows


def _key(check: dict) -> str:
    return f"{check['shape']} {check['path']} {check['component']}"


def write(report: Path, runs: list[dict], top: int) -> None:
    first, last = runs[0], runs[-1]
    before = {_key(c): c for c in first["checks"]}
    total = sum(c["seconds"] for c in last["checks"])
    ratio = last["triples"] / first["triples"]
    lines = [
        "# Where `finkg validate` spends its time",
        "",
        "`python -m benchmarks.validate_checks "
        + " ".join(r["store"] for r in runs)
        + "`: every shape check's query that applies, run alone on the union default graph "
        "as `validate_store` runs it.",
        "",
        "| store | triples | checks | seconds, all checks | slope from the first |",
        "|---|---|---|---|---|",
    ]
    first_s = sum(c["seconds"] for c in first["checks"])
    for r in runs:
        seconds = sum(c["seconds"] for c in r["checks"])
        grew = r["triples"] / first["triples"]
        slope = f"{math.log(seconds / first_s) / math.log(grew):.2f}" if grew > 1 else "—"
        lines.append(
            f"| {r['store']} | {r['triples']:,} | {len(r['checks'])} | {seconds:.1f} | {slope} |"
        )
    lines += [
        "",
        "The same checks in the passes `validate_store` runs (`shapes/passes.py`: the checks "
        "of one shape and path in one query), timed right after them on the same store:",
        "",
        "| store | checks, one query each: queries, s | in passes: queries, s | time saved |",
        "|---|---|---|---|",
    ]
    for r in runs:
        alone = sum(c["seconds"] for c in r["checks"])
        joined = sum(p["seconds"] for p in r["passes"])
        lines.append(
            f"| {r['store']} | {len(r['checks'])}, {alone:.1f} | {len(r['passes'])}, "
            f"{joined:.1f} | {1 - joined / alone:.0%} |"
        )
    lines += [
        "",
        f"The {top} slowest at {last['triples']:,} triples (slope against the triples from "
        f"{first['triples']:,}; 1 is linear):",
        "",
        "| check (component, path) | s | share | s at the first store | slope | rows |",
        "|---|---|---|---|---|---|",
    ]
    for c in sorted(last["checks"], key=lambda c: -c["seconds"])[:top]:
        old = before.get(_key(c))
        slope = (
            f"{math.log(c['seconds'] / old['seconds']) / math.log(ratio):.2f}"
            if old and old["seconds"] > 0 and ratio > 1
            else "—"
        )
        was = f"{old['seconds']:.2f}" if old else "—"
        lines.append(
            f"| {c['component']} {c['path'] or '(node)'} | {c['seconds']:.2f} | "
            f"{c['seconds'] / total:.0%} | {was} | {slope} | {c['rows']:,} |"
        )
    write_report(report, "\n".join(lines))
    report.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    runs = [measure(path) for path in args.stores]
    write(args.report, runs, args.top)
    print(f"wrote {args.report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
