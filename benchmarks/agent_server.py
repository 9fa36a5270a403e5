"""`finkg mcp` against `finkg query`: how long the server takes to start, and how long a
query takes through it, on one store (issue 40: start under 3 s, a query in the time
`finkg query` takes).

For each of REPEATS rounds, on the same store and the same query:

- **start**: spawn `finkg mcp --store STORE` on stdio with the MCP SDK's client, until
  `initialize` is answered and `tools/list` has returned (what an agent waits for);
- **mcp call**: `run_query` of the packaged query in that server, first call and the
  median of CALLS more (each a real query in the worker: results are not cached);
- **mcp as_of**: `query` with `as_of` (the first call copies the view; later calls at the
  same instant reuse it, and their time is the query's);
- **finkg query**: the same packaged query by `finkg query NAME --bind ...` as a new process,
  which is what a person running the CLI waits for;
- **in process**: `queries.select` on an open store, the query's own cost.

    python -m benchmarks.agent_server [--store DIR] [--repeats 5] [--calls 10] [--report PATH]

The company is the first with news; the instant is the midpoint of the news's availability.
Timings are wall-clock on whatever else the machine runs: say what that was.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from benchmarks.harness import write_report
from finkg import queries
from finkg.config import Settings
from finkg.kg.store import open_store

FKG = "PREFIX fkg: <https://w3id.org/finkg/ns#>\n"
QUERY = "evidence_before"
AS_OF_SPARQL = FKG + (
    "SELECT ?family (COUNT(?e) AS ?n) WHERE { ?e fkg:availableAt ?t ; a ?family } "
    "GROUP BY ?family ORDER BY DESC(?n)"
)


def pick(store_dir: str) -> tuple[str, dt.datetime]:
    """A company with news and the middle of the news's availability times."""
    s = open_store(store_dir, read_only=True)
    rows = queries.select(
        s,
        FKG + "SELECT ?c ?t WHERE { GRAPH ?g { ?a a fkg:NewsArticle ; fkg:availableAt ?t ; "
        "fkg:about ?c } } ORDER BY ?t",
        default_graphs="union",
    )
    pairs = [(r.iri("c").value, r.datetime("t")) for r in rows]
    s.close()
    if not pairs:
        raise SystemExit(f"{store_dir}: no news articles to query (build it with `make demo`)")
    company = pairs[0][0]
    return company, pairs[len(pairs) // 2][1]


def one_round(store_dir: str, company: str, at: dt.datetime, calls: int) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "finkg", "mcp", "--store", store_dir],
        env={**os.environ, "FINKG_TOKEN": ""},
    )
    bindings = {"company": company, "before": at.isoformat()}
    out: dict[str, Any] = {}

    async def run() -> None:
        t0 = time.perf_counter()
        async with Client(params, read_timeout_seconds=300) as client:
            tools = await client.list_tools()
            out["start_s"] = time.perf_counter() - t0
            assert any(t.name == "run_query" for t in tools.tools)
            times = []
            for _ in range(calls + 1):
                t = time.perf_counter()
                r = await client.call_tool("run_query", {"name": QUERY, "bindings": bindings})
                times.append(time.perf_counter() - t)
                if r.is_error:
                    raise SystemExit(f"run_query failed: {r.content[0].text}")
            out["call_first_s"], out["call_s"] = times[0], statistics.median(times[1:])
            out["rows"] = len(r.structured_content["rows"])
            times = []
            for _ in range(calls + 1):
                t = time.perf_counter()
                r = await client.call_tool(
                    "query", {"sparql": AS_OF_SPARQL, "as_of": at.isoformat()}
                )
                times.append(time.perf_counter() - t)
                if r.is_error:
                    raise SystemExit(f"query as_of failed: {r.content[0].text}")
            out["as_of_first_s"], out["as_of_s"] = times[0], statistics.median(times[1:])

    anyio.run(run)
    cli = [sys.executable, "-m", "finkg", "query", QUERY, "--store", store_dir]
    cli += ["--bind", f"company={company}", "--bind", f"before={at.isoformat()}"]
    t = time.perf_counter()
    done = subprocess.run(cli, capture_output=True, text=True, check=False)
    out["cli_s"] = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"finkg query failed: {done.stderr.strip()}")
    s = open_store(store_dir, read_only=True)
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        queries.select(s, QUERY, bindings | {"before": at}, default_graphs="union")
        times.append(time.perf_counter() - t)
    s.close()
    out["in_process_s"] = statistics.median(times)
    return out


def summary(rounds: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    keys = [k for k in rounds[0] if k.endswith("_s")]
    return {
        k: {
            "median": statistics.median(r[k] for r in rounds),
            "min": min(r[k] for r in rounds),
            "max": max(r[k] for r in rounds),
        }
        for k in keys
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", default=Settings().store_location, help="an embedded store")
    ap.add_argument("--repeats", type=int, default=5, help="server starts (rounds)")
    ap.add_argument("--calls", type=int, default=10, help="timed calls per round after the first")
    ap.add_argument(
        "--beside", default="not stated", help="what else ran on the machine (for the report)"
    )
    ap.add_argument("--report", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    company, at = pick(args.store)
    print(f"{args.store}: {QUERY} of {company} before {at.isoformat()}", file=sys.stderr)
    rounds = []
    for i in range(args.repeats):
        rounds.append(one_round(args.store, company, at, args.calls))
        print(f"round {i + 1}/{args.repeats}: " + json.dumps(rounds[-1]), file=sys.stderr)
    result = {
        "store": args.store,
        "query": QUERY,
        "company": company,
        "before": at.isoformat(),
        "repeats": args.repeats,
        "calls": args.calls,
        "cores": os.cpu_count(),
        "beside": args.beside,
        "rounds": rounds,
        "summary": summary(rounds),
    }
    for k, v in result["summary"].items():
        print(f"{k:16} median {v['median']:.3f}  [{v['min']:.3f}, {v['max']:.3f}]")
    if args.report:
        args.report.write_text(json.dumps(result, indent=2) + "\n")
        write_report(args.report.with_suffix(".md"), render(result))
    return result


LABELS = {
    "start_s": "`finkg mcp` start (spawn to tools/list answered)",
    "call_first_s": "`run_query`, first call",
    "call_s": "`run_query`, later calls (median of the round)",
    "as_of_first_s": "`query` with as_of, first call (copies the view)",
    "as_of_s": "`query` with as_of, later calls at the same instant",
    "cli_s": "`finkg query` (a new process, as a person runs it)",
    "in_process_s": "`queries.select` in process (the query's own cost)",
}


def render(result: dict[str, Any]) -> str:
    lines = [
        "# finkg mcp: start and query time",
        "",
        f"Store `{result['store']}`; query `{result['query']}` of `{result['company']}` before "
        f"{result['before']}; {result['repeats']} server starts, {result['calls']} timed calls "
        "each after the first. Seconds, wall clock: median over the rounds [min, max]. "
        f"{result['cores']} cores; beside it: {result['beside']}.",
        "",
        "| what | seconds |",
        "|---|---|",
    ]
    for key, v in result["summary"].items():
        label = LABELS.get(key, key)
        lines.append(f"| {label} | {v['median']:.3f} [{v['min']:.3f}, {v['max']:.3f}] |")
    lines += [
        "",
        "`run_query` returns at most 100 rows (its default limit) where `finkg query` and",
        "`queries.select` read them all; the as_of query counts evidence by class over the",
        "whole view.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
