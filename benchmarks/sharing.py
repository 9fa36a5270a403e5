"""The local reader beside other work on the same cores.

One read is the packaged reader evaluating a `--prompt-tokens` prompt from an empty context
and `--reply-tokens` greedy tokens (the issue's 437 + 24 by default, on the default 1.5B
reader). It is timed `--repeats` times in a fresh process, alone and beside each of:

- a busy Python loop (`while True: pass`);
- a second reader, reading the same way in a loop with the same settings;
- plain torch matrix products on torch's default threads, in a process that never imports
  finkg (a user's notebook: libgomp's own spin default);
- finkg's own embedder (MiniLM) encoding in a loop, with the same settings as the reader.

for each setting: the reader's threads (1 .. the free cores) and libgomp's spin count
(`GOMP_SPINCOUNT`: 300000 is libgomp's default when nothing sets it, 0 sleeps at once).
Both llama.cpp (this build links libgomp) and torch run their workers on libgomp, which
reads the spin count once when it loads. Each figure is the median read time and the speed
as a share of the reader's idle speed with libgomp's default and all cores (before finkg
chose a default). The report says which setting keeps >= 0.4x beside every background and
loses <= 10 % alone, and whether finkg's default (`finkg.config.SPIN_COUNT`) is one.
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
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness import ROOT, report_option, write_report
from benchmarks.reader_cpu import TEXT, cpu_name, read_once
from finkg.config import SPIN_COUNT, Settings

LIBGOMP_DEFAULT = 300_000  # libgomp's spins when neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set
BACKGROUNDS = ("alone", "busy loop", "second reader", "torch matmul", "finkg embedder")
BUSY = "while True: pass"
MATMUL = "import torch\na = torch.randn(1024, 1024)\nwhile True: a @ a"


@dataclass(frozen=True)
class Setting:
    threads: int
    spin: int

    @property
    def label(self) -> str:
        spin = "libgomp default" if self.spin == LIBGOMP_DEFAULT else f"{self.spin}"
        return f"{self.threads} thread{'s' * (self.threads > 1)}, spin {spin}"

    def env(self) -> dict[str, str]:
        return os.environ | {"GOMP_SPINCOUNT": str(self.spin)}


def read_loop(model: str, threads: int, repeats: int, prompt_len: int, reply_len: int) -> None:
    """A child process: print "ready", then time `repeats` reads (0: read until killed) and
    print their seconds as JSON."""
    from finkg.reader.transport.backends import local_llm

    llm = local_llm(model, Settings().cache_dir, threads, 2048)
    tokens = llm._tokens(TEXT * 40, prompt=True)[:prompt_len]
    print("ready", flush=True)
    seconds: list[float] = []
    while repeats == 0 or len(seconds) < repeats:
        seconds.append(sum(read_once(llm, tokens, reply_len)))
    print(json.dumps(seconds), flush=True)


def embed_loop(threads: int) -> None:
    """A child process: finkg's MiniLM embedder encoding passages until killed."""
    from finkg.retrieval.index.embed import open_embedder

    embedder = open_embedder("minilm", threads=threads, device="cpu")
    passages = [TEXT * 2] * 64
    print("ready", flush=True)
    while True:
        embedder.embed(passages)


def _child(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.sharing", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def _background(
    kind: str, setting: Setting, opts: argparse.Namespace
) -> subprocess.Popen[str] | None:
    clean = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    if kind == "alone":
        return None
    if kind == "busy loop":
        proc = subprocess.Popen([sys.executable, "-c", BUSY], env=clean, text=True)
    elif kind == "torch matmul":
        proc = subprocess.Popen([sys.executable, "-c", MATMUL], env=clean, text=True)
    elif kind == "second reader":
        proc = _child(
            ["--child", "read", "--threads", str(setting.threads), "--repeats", "0", *_read(opts)],
            setting.env(),
        )
    else:
        proc = _child(["--child", "embed", "--threads", str(setting.threads)], setting.env())
    if proc.stdout is not None:
        proc.stdout.readline()  # "ready": loaded
    time.sleep(2)  # let it reach its steady state
    return proc


def _read(opts: argparse.Namespace) -> list[str]:
    return [
        "--model", opts.model,
        "--prompt-tokens", str(opts.prompt_tokens),
        "--reply-tokens", str(opts.reply_tokens),
    ]  # fmt: skip


def measure(setting: Setting, background: str, opts: argparse.Namespace) -> list[float]:
    """The reader's read times with this setting beside this background."""
    bg = _background(background, setting, opts)
    try:
        reader = _child(
            ["--child", "read", "--threads", str(setting.threads),
             "--repeats", str(opts.repeats), *_read(opts)],
            setting.env(),
        )  # fmt: skip
        try:
            out, _ = reader.communicate(timeout=opts.timeout)
        except subprocess.TimeoutExpired:
            reader.kill()
            reader.wait()
            raise SystemExit(
                f"{setting.label} beside {background}: no result within --timeout "
                f"{opts.timeout:g} s; give a longer one"
            ) from None
        if reader.returncode != 0:
            raise SystemExit(f"{setting.label} beside {background}: the reader exited "
                             f"{reader.returncode}")  # fmt: skip
        return [float(s) for s in json.loads(out.splitlines()[-1])]
    finally:
        if bg is not None:
            bg.kill()
            bg.wait()


def verdicts(rows: list[dict], baseline: float) -> list[dict]:
    """Each setting's idle loss and worst share beside the backgrounds, and whether it
    meets both targets (>= 0.4x beside every background, <= 10 % lost alone)."""
    out = []
    for label in dict.fromkeys(r["setting"] for r in rows):
        mine = {r["background"]: r for r in rows if r["setting"] == label}
        worst = min(baseline / mine[b]["median_s"] for b in BACKGROUNDS[1:] if b in mine)
        idle_loss = 1 - baseline / mine["alone"]["median_s"]
        out.append({
            "setting": label,
            "threads": mine["alone"]["threads"],
            "spin": mine["alone"]["spin"],
            "idle_loss": idle_loss,
            "worst_share": worst,
            "meets": worst >= 0.4 and idle_loss <= 0.10,
        })  # fmt: skip
    return out


def render(result: dict) -> str:
    rows, baseline = result["rows"], result["baseline_s"]
    cell = {(r["setting"], r["background"]): r for r in rows}
    lines = [
        "# The local reader beside other work",
        "",
        f"`python -m benchmarks.sharing` on {result['cpu']} ({result['cores']} free cores), "
        f"{result['measured']}. One read: {result['model']}, a {result['prompt_tokens']}-token "
        f"prompt from an empty context and {result['reply_tokens']} greedy tokens; each cell "
        f"is the median of {result['repeats']} reads in a fresh process [range], and the "
        "reader's speed as a share of its idle speed with all cores and libgomp's default "
        f"spin ({baseline:.2f} s). The torch matmul process never imports finkg (libgomp's "
        "default spin, torch's default threads); the second reader and the embedder run with "
        f"the row's setting. Nothing else ran. finkg's default: all free cores, spin "
        f"{result['default_spin']}.",
        "",
        "| setting | " + " | ".join(BACKGROUNDS) + " |",
        "|---|" + "---|" * len(BACKGROUNDS),
    ]
    for v in result["verdicts"]:
        cells = []
        for b in BACKGROUNDS:
            r = cell.get((v["setting"], b))
            if r is None:
                cells.append("–")
                continue
            lo, hi = min(r["seconds"]), max(r["seconds"])
            cells.append(
                f"{r['median_s']:.1f} s [{lo:.1f}, {hi:.1f}], {baseline / r['median_s']:.2f}×"
            )
        lines.append(f"| {v['setting']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| setting | lost alone | worst share beside another job | meets both targets |",
        "|---|---|---|---|",
    ]
    for v in result["verdicts"]:
        lines.append(
            f"| {v['setting']} | {v['idle_loss']:+.0%} | {v['worst_share']:.2f}× "
            f"| {'yes' if v['meets'] else 'no'} |"
        )
    chosen = next(v for v in result["verdicts"] if v["setting"] == result["default"])
    lines += [
        "",
        f"**finkg's default ({chosen['setting']}) "
        f"{'meets' if chosen['meets'] else 'does not meet'} both targets**: "
        f"{chosen['idle_loss']:+.0%} alone, at worst {chosen['worst_share']:.2f}× beside "
        "another job. Why: llama.cpp (built with OpenMP) and torch run their workers on "
        "libgomp, and a worker that waits spins up to `GOMP_SPINCOUNT` times before it "
        "sleeps (libgomp's default 300,000: milliseconds). llama.cpp's workers wait at a "
        "barrier after every operation of the graph, so beside another job on the same cores "
        "a spinning worker holds a core its partner needs to reach the barrier. Spinning "
        "briefly keeps the barriers fast when the machine is idle and gives the core away "
        "soon when it is not; fewer threads avoid the barriers but lose the second core when "
        "idle. finkg sets the spin count on `import finkg` unless `GOMP_SPINCOUNT` is set; "
        "`FINKG_THREADS` sets the threads.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", choices=("read", "embed"), help=argparse.SUPPRESS)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, help="(a child's threads)")
    parser.add_argument(
        "--thread-counts", default=None, help="reader threads to try [default: 1 .. free cores]"
    )
    parser.add_argument(
        "--spins",
        default=f"{LIBGOMP_DEFAULT},{SPIN_COUNT}",
        help=f"GOMP_SPINCOUNT values to try, comma-separated ({LIBGOMP_DEFAULT}, the "
        "baseline, is always tried)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--prompt-tokens", type=int, default=437)
    parser.add_argument("--reply-tokens", type=int, default=24)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per cell")
    report_option(parser, "sharing.md")
    opts = parser.parse_args()
    if opts.child == "read":
        read_loop(opts.model, opts.threads, opts.repeats, opts.prompt_tokens, opts.reply_tokens)
        return
    if opts.child == "embed":
        embed_loop(opts.threads)
        return
    cores = Settings().threads  # the free cores
    counts = [int(t) for t in opts.thread_counts.split(",")] if opts.thread_counts else None
    # libgomp's default at all cores is the baseline every share is of: always measured
    spins = list(dict.fromkeys([LIBGOMP_DEFAULT, *(int(s) for s in opts.spins.split(","))]))
    # every spin at all cores; fewer threads with finkg's spin
    settings = [Setting(cores, s) for s in spins] + [
        Setting(t, SPIN_COUNT) for t in (counts or range(1, cores + 1)) if t != cores
    ]
    rows = []
    for setting in settings:
        for background in BACKGROUNDS:
            seconds = measure(setting, background, opts)
            rows.append({
                "setting": setting.label, "threads": setting.threads, "spin": setting.spin,
                "background": background, "seconds": seconds,
                "median_s": statistics.median(seconds),
            })  # fmt: skip
            print(f"{setting.label:34} {background:15} {rows[-1]['median_s']:6.2f} s", flush=True)
    baseline = next(
        r["median_s"] for r in rows
        if r["background"] == "alone" and (r["threads"], r["spin"]) == (cores, LIBGOMP_DEFAULT)
    )  # fmt: skip
    result = {
        "cpu": cpu_name(), "cores": cores, "model": opts.model,
        "prompt_tokens": opts.prompt_tokens, "reply_tokens": opts.reply_tokens,
        "repeats": opts.repeats, "default_spin": SPIN_COUNT, "baseline_s": baseline,
        "default": Setting(cores, SPIN_COUNT).label,
        "measured": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "rows": rows, "verdicts": verdicts(rows, baseline),
    }  # fmt: skip
    report: Path = opts.report
    report.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    write_report(report, render(result))
    print(render(result))


if __name__ == "__main__":
    main()
