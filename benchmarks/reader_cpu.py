"""The local reader's speed on this CPU with the installed llama-cpp-python build.

A 512-token prompt (finkg's 64-token aligned blocks, nothing reused: every repeat starts
from an empty context) and a 32-token greedy reply, `--repeats` times, with the packaged
0.5B Q4_0 reader by default, the impact benchmark's reader. Each run adds one row, keyed
by the build (llama-cpp-python's version, with its local build label, and the CPU features
llama.cpp reports), to `benchmarks/reports/reader_cpu.json`, and the report is rewritten
from all rows. To compare builds, install each in turn, or put one first on PYTHONPATH:

    pip install --target /tmp/llama-native --no-deps llama_cpp_python-0.3.36-....whl
    PYTHONPATH=/tmp/llama-native python -m benchmarks.reader_cpu --label native
    python -m benchmarks.reader_cpu --label x86-64-v3
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata as md
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import REPORTS, threads_option, write_report
from finkg.config import Settings
from finkg.reader.transport.backends import local_llm
from finkg.reader.transport.cpu import cpu_flags

TEXT = (
    "Acme Widgets reported second-quarter revenue of $1.32 billion, up 8 percent from a year "
    "earlier, and raised its full-year outlook as orders for industrial sensors recovered. "
    "Shares rose 4 percent in early trading; analysts at two brokers lifted their targets. "
)


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def read_once(llm: Any, tokens: list[int], reply_len: int) -> tuple[float, float]:
    """One read from an empty context: `tokens` evaluated in finkg's blocks, then
    `reply_len` greedy tokens without a grammar; its prompt and reply seconds."""
    llm.llm.reset()
    llm._held = []
    started = time.perf_counter()
    llm._eval_prompt(tokens)
    prompt = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(reply_len):
        llm.llm.eval([int(llm._logits().argmax())])
    return prompt, time.perf_counter() - started


def measure(model: str, threads: int, repeats: int, prompt_len: int, reply_len: int) -> dict:
    import llama_cpp

    llm = local_llm(model, Settings().cache_dir, threads, 2048)
    tokens = llm._tokens(TEXT * 40, prompt=True)[:prompt_len]
    prompt_s, reply_ms = [], []
    for _ in range(repeats):
        prompt, reply = read_once(llm, tokens, reply_len)
        prompt_s.append(prompt)
        reply_ms.append(reply / reply_len * 1000)
    info = llama_cpp.llama_print_system_info().decode()
    return {
        "build": md.version("llama-cpp-python"),
        "features": " ".join(
            f.split(" : ")[-1].split(" = ")[0] for f in info.split(" | ") if f.endswith("= 1")
        ),
        "cpu": cpu_name(),
        "cpu_has_avx512": "avx512f" in (cpu_flags() or set()),
        "cpu_has_amx": "amx_tile" in (cpu_flags() or set()),
        "model": model,
        "threads": threads,
        "repeats": repeats,
        "prompt_tokens": len(tokens),
        "prompt_tok_s_median": round(len(tokens) / statistics.median(prompt_s), 1),
        "prompt_tok_s_range": [
            round(len(tokens) / max(prompt_s), 1),
            round(len(tokens) / min(prompt_s), 1),
        ],
        "reply_tokens": reply_len,
        "reply_ms_per_token_median": round(statistics.median(reply_ms), 2),
        "reply_ms_per_token_range": [round(min(reply_ms), 2), round(max(reply_ms), 2)],
        "measured": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def render(rows: list[dict]) -> str:
    lines = [
        "# Local reader speed by llama-cpp-python build",
        "",
        "`python -m benchmarks.reader_cpu` (one row per build; the prompt is evaluated in "
        "64-token blocks from an empty context each repeat, the reply is greedy without a "
        "grammar). Median over the repeats, range in brackets; on a shared machine the best "
        "repeat (the range's fast end) is the figure least disturbed by other work.",
        "",
        "| label | build | CPU features compiled in | CPU | model | threads | prompt tok/s "
        "| reply ms/token | n |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r["prompt_tok_s_range"]
        rlo, rhi = r["reply_ms_per_token_range"]
        has = ["AVX-512"] * r["cpu_has_avx512"] + ["AMX"] * r["cpu_has_amx"]
        lines.append(
            f"| {r['label']} | {r['build']} | {r['features']} | {r['cpu']}"
            f"{' (' + ', '.join(has) + ')' if has else ''}"
            f" | {r['model']} | {r['threads']} | {r['prompt_tok_s_median']} [{lo}, {hi}] "
            f"| {r['reply_ms_per_token_median']} [{rlo}, {rhi}] | {r['repeats']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True, help="what this build is, for the report")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-q4_0")
    threads_option(parser)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--reply-tokens", type=int, default=32)
    parser.add_argument("--out", type=Path, default=REPORTS / "reader_cpu.json")
    opts = parser.parse_args()
    row = {"label": opts.label} | measure(
        opts.model, opts.threads, opts.repeats, opts.prompt_tokens, opts.reply_tokens
    )
    rows = json.loads(opts.out.read_text()) if opts.out.exists() else []
    rows = [r for r in rows if (r["label"], r["cpu"]) != (row["label"], row["cpu"])] + [row]
    opts.out.write_text(json.dumps(rows, indent=2) + "\n")
    write_report(opts.out.with_suffix(".md"), render(rows))
    print(render([row]))


if __name__ == "__main__":
    main()
