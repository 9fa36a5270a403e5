"""Reads per second through the endpoint reader against concurrency (issue 29).

Two servers, each on a loopback port and in a process of its own, so that this process's
CPU time is finkg's own (the client: building requests, HTTP, JSON, pydantic validation,
the pool):

- finkg's stub (`finkg.reader.transport.stub`): every request answered after `--latency` seconds,
  at most `--limit` at once, as a GPU server with a full batch would;
- llama-cpp-python's own OpenAI-compatible server with the packaged SmolLM2-135M on
  `--server-threads` threads (it answers one request at a time: it shows where the server,
  not finkg, is the bound).

A read is one `reader.read.read` of a small JSON reply (one request, a distinct prompt each,
no cache); a scored decision is the impact job's (`tasks.impact.scoring.questions`: three
horizons and the citation over four ids, 4 prompts and 16 options, 20 requests through
`echo`). Reads go through `reader.concurrent.run_all`, the jobs' own mechanism. Writes
`benchmarks/reports/remote_reader.{json,md}`.

    python -m benchmarks.remote_reader                # stub and real server
    python -m benchmarks.remote_reader --no-real      # the stub only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchmarks.harness import REPORTS, write_report
from finkg.config import Settings
from finkg.reader.read import prompt, read
from finkg.reader.transport.concurrent import run_all
from finkg.reader.transport.openai_http import OpenAICompatible
from finkg.reader.transport.remote_scoring import ChatTemplate
from finkg.reader.transport.stub import chatml
from finkg.tasks.impact.scoring import questions

LEVELS = (1, 4, 16, 32, 64)


class Ok(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ok: bool


class Relevant(BaseModel):
    model_config = ConfigDict(extra="forbid")
    relevant: bool


CHATML = ChatTemplate("chatml", chatml, "<|im_end|>")


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/v1/models", timeout=1)
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"no server at {url} after {seconds} s")


def _values(i: int) -> dict[str, object]:
    return {
        "anchor_id": "A0",
        "headline": f"Acme raises full-year guidance ({i})",
        "ticker": "ZQAW",
        "prediction_day": "2019-05-02",
        "event_type": "Earnings & Guidance",
        "evidence": "N1: Acme beat quarterly estimates.\nF1: 8-K Item 2.02: revenue up 12%.\n"
        "N2: Peers guided lower.\nF2: 10-Q: margins steady.",
        "market_card": "QQQ -0.4% 5d; ZQAW +2.1% 5d, vol 1.3x.",
    }


def measure(llm: OpenAICompatible, work: str, n: int, concurrency: int) -> dict[str, float]:
    """`n` reads (or scored decisions) at `concurrency`: per second, and this process's CPU
    seconds per read."""
    if work == "read":
        template = prompt("relevance")
        model = Ok if "stub" in llm.model else Relevant
        tasks = [
            lambda i=i: read(
                llm,
                template,
                {"query": f"revenue growth {i}", "chunk": f"Revenue rose {i}%."},
                model,
                max_tokens=16,
            )
            for i in range(n)
        ]
    else:
        tasks = [
            lambda i=i: llm.score_many(
                questions(_values(i), ids=["F1", "F2", "N1", "N2"], horizons=(1, 3, 5))
            )
            for i in range(n)
        ]
    cpu, wall = time.process_time(), time.perf_counter()
    outcomes = run_all(tasks, concurrency=concurrency)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    failed = [o.error for o in outcomes if o.error is not None]
    if failed:
        raise SystemExit(f"{len(failed)} of {n} failed: {failed[0]}")
    return {
        "concurrency": concurrency,
        "n": n,
        "seconds": round(wall, 3),
        "per_second": round(n / wall, 2),
        "cpu_ms_per_read": round(1000 * cpu / n, 3),
    }


def stub_rows(latency: float, limit: int, levels: tuple[int, ...], seconds: float) -> list[dict]:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "finkg.reader.transport.stub", "--port", str(port),
         "--latency", str(latency), "--limit", str(limit)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    rows = []
    try:
        _wait(url)
        for c in levels:
            llm = OpenAICompatible(url, model="stub", concurrency=c, template=CHATML)
            _ = llm.scoring  # the method probe, outside the timing
            n = max(8, round(seconds * min(c, limit) / latency))
            rows.append({"server": "stub", "work": "read", **measure(llm, "read", n, c)})
            print(rows[-1], flush=True)
            decisions = max(4, n // 20)
            rows.append(
                {"server": "stub", "work": "decision", **measure(llm, "decision", decisions, c)}
            )
            print(rows[-1], flush=True)
    finally:
        server.terminate()
        server.wait(timeout=20)
    return rows


def real_rows(
    threads: int, levels: tuple[int, ...], n: int, decisions: int, decision_levels: set[int]
) -> list[dict]:
    from finkg.reader.transport.models import assemble

    model = assemble("smollm2-135m", Settings().cache_dir)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
         "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
         "--model_alias", "smol"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    rows = []
    try:
        _wait(url)
        template = ChatTemplate.from_gguf(model)
        for c in levels:
            llm = OpenAICompatible(url, model="smol", concurrency=c, template=template)
            _ = llm.scoring
            rows.append(
                {"server": "llama-cpp-python", "work": "read", **measure(llm, "read", n, c)}
            )
            print(rows[-1], flush=True)
            if decisions and c in decision_levels:
                rows.append(
                    {
                        "server": "llama-cpp-python",
                        "work": "decision",
                        **measure(llm, "decision", decisions, c),
                    }
                )
                print(rows[-1], flush=True)
    finally:
        server.terminate()
        server.wait(timeout=20)
    return rows


def render(doc: dict) -> str:
    o = doc["options"]
    lines = [
        "# Endpoint reader: reads per second against concurrency",
        "",
        f"`python -m benchmarks.remote_reader {' '.join(doc['argv'])}` on {doc['machine']}"
        f" ({doc['cores']} cores), {doc['date']}; this process and both servers at nice"
        f" {doc.get('nice', 0)}, the machine's load average {doc.get('load', '?')} when it"
        " started (other jobs ran on the same cores).",
        "",
        "A read is one `reader.read.read` of a small JSON reply (one request, a prompt of its "
        "own, no cache, the reply validated by pydantic); a scored decision is the impact "
        "job's (4 prompts, 16 options: 20 requests through `echo`). Reads are handed to "
        "`reader.concurrent.run_all`, as the jobs hand them. CPU per read is this process's "
        "CPU time over the reads: finkg's own client work (the servers run in processes of "
        "their own).",
        "",
        f"## finkg's stub: {o['latency']:g} s a request, at most {o['limit']} at once",
        "",
        "| concurrency | reads/s | ideal | of ideal | finkg CPU ms/read | decisions/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    stub = [r for r in doc["rows"] if r["server"] == "stub"]
    for r in (r for r in stub if r["work"] == "read"):
        c = r["concurrency"]
        ideal = min(c, o["limit"]) / o["latency"]
        dec = next(d for d in stub if d["work"] == "decision" and d["concurrency"] == c)
        lines.append(
            f"| {c} | {r['per_second']:.1f} | {ideal:.0f} | {r['per_second'] / ideal:.0%} | "
            f"{r['cpu_ms_per_read']:.2f} | {dec['per_second']:.2f} |"
        )
    real = [r for r in doc["rows"] if r["server"] != "stub"]
    if real:
        lines += [
            "",
            f"## llama-cpp-python's server, SmolLM2-135M Q4_1, {o['server_threads']} thread(s)",
            "",
            "| concurrency | reads/s | finkg CPU ms/read | seconds a decision |",
            "|---:|---:|---:|---:|",
        ]
        for r in (r for r in real if r["work"] == "read"):
            c = r["concurrency"]
            dec = [d for d in real if d["work"] == "decision" and d["concurrency"] == c]
            per = f"{dec[0]['seconds'] / dec[0]['n']:.0f}" if dec else "not run"
            lines.append(f"| {c} | {r['per_second']:.2f} | {r['cpu_ms_per_read']:.2f} | {per} |")
    lines += ["", *doc.get("notes", [])]
    return "\n".join(lines) + "\n"


def rerender(path: Path) -> None:
    """Write the Markdown again from a saved JSON (its hand-written notes included)."""
    write_report(path.with_suffix(".md"), render(json.loads(path.read_text())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="the stub's seconds a request")
    parser.add_argument("--limit", type=int, default=64, help="the stub's requests at once")
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)), help="concurrencies")
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="about how long a stub level runs"
    )
    parser.add_argument("--no-real", action="store_true", help="skip llama-cpp-python's server")
    parser.add_argument("--server-threads", type=int, default=1)
    parser.add_argument("--real-reads", type=int, default=16, help="reads a real-server level")
    parser.add_argument(
        "--real-decisions", type=int, default=2, help="scored decisions a real-server level"
    )
    parser.add_argument(
        "--real-decision-levels",
        default=",".join(map(str, LEVELS)),
        help="the real-server levels that time decisions (20 echo requests each, one at a "
        "time on the server: minutes each on 2 busy cores)",
    )
    parser.add_argument("--out", type=Path, default=REPORTS / "remote_reader.json")
    parser.add_argument(
        "--render-only", action="store_true", help="rewrite the .md from --out, measuring nothing"
    )
    opts = parser.parse_args()
    if opts.render_only:
        rerender(opts.out)
        return
    levels = tuple(int(x) for x in opts.levels.split(","))
    print(f"options: {vars(opts)}", flush=True)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    rows = stub_rows(opts.latency, opts.limit, levels, opts.seconds)
    if not opts.no_real:
        rows += real_rows(
            opts.server_threads,
            tuple(c for c in levels if c != 32),
            opts.real_reads,
            opts.real_decisions,
            {int(x) for x in opts.real_decision_levels.split(",") if x},
        )
    doc = {
        "argv": sys.argv[1:],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": cpu_name(),
        "cores": len(os.sched_getaffinity(0)),
        "nice": os.nice(0),
        "load": load,
        "options": {
            "latency": opts.latency,
            "limit": opts.limit,
            "server_threads": opts.server_threads,
        },
        "rows": rows,
    }
    if opts.out.exists():  # keep the notes written by hand
        doc["notes"] = json.loads(opts.out.read_text()).get("notes", [])
    opts.out.write_text(json.dumps(doc, indent=2) + "\n")
    write_report(opts.out.with_suffix(".md"), render(doc))
    print(render(doc))


if __name__ == "__main__":
    main()
