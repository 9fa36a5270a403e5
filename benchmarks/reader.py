"""Reader benchmark: which packaged model decides impact best, calibrated, on real anchors.

For each packaged model, the same validation anchors of the real event data (static
retrieval: the pool, the top-5 context and the market card exactly as `finkg impact` builds
them) are decided by scoring (`tasks/impact/scoring.py`: three horizons of whole options and
the citation as a fourth question over the listed ids and "none"). Skill is measured after
calibration, as the job decides: the class-prior head, fitted prequentially (the first half
of the anchors to start, then each label as it matures), on the second half's anchors;
macro-F1 (mean over 1D/3D/5D) with its bootstrap 95 % interval, the permutation excess
(what the order of the decisions adds over their class mix), and the raw argmax beside it.
Every option must get a finite score on every anchor (a requirement, not the criterion);
speed is the reader's seconds an anchor.

The default is the valid model with the best calibrated macro-F1, unless a faster valid
model shows no difference from it (its paired interval of macro-F1 contains zero): then the
fastest of those. The choice is made on validation anchors only.

    python -m benchmarks.reader --store /work/impact-store --anchors 300 \
        --models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b,qwen2.5-coder-0.5b-q4_0,smollm2-135m
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.harness import (
    bootstrap_option,
    ci,
    data_option,
    report_option,
    threads_option,
    write_report,
)
from benchmarks.impact import period, stratified
from benchmarks.impact_data import build
from finkg.config import Settings
from finkg.evaluation.stats import Interval, bootstrap, paired, permutation, verdict
from finkg.kg.calendar import get_calendar
from finkg.reader.transport.backends import local_llm
from finkg.retrieval.index.indexes import open_indexes
from finkg.tasks.decisions import Item, decide_all
from finkg.tasks.impact.head_feed import LabelBook
from finkg.tasks.impact.job import validation
from finkg.tasks.impact.labels import load_prices
from finkg.tasks.impact.predict import ImpactConfig, anchor_inputs, retrieve, shown_card
from finkg.tasks.impact.prompting import prompt_values
from finkg.tasks.impact.scoreboard import HORIZONS, LABEL_OPTION, METRICS
from finkg.tasks.impact.scoring import CLASSES, option_logprobs, score_anchor

MODELS = "qwen2.5-coder-1.5b,qwen2.5-coder-0.5b,qwen2.5-coder-0.5b-q4_0,smollm2-135m"


def contexts(store, sample, *, texts, vectors, config, prices, calendar):  # type: ignore[no-untyped-def]
    """Each anchor's prompt values, ids and features (static retrieval), and its labels."""
    book = LabelBook(prices, proxy=config.proxy, calendar=calendar)
    out = []
    for a in sample:
        labels = {h: book.label(a.ticker, a.prediction_day, h) for h in HORIZONS}
        if any(v is None for v in labels.values()):
            continue
        inputs = anchor_inputs(
            store, a, texts=texts, vectors=vectors, config=config, prices=prices, calendar=calendar
        )
        got = retrieve(store, a, pool=inputs.pool, memory=None, config=config)
        values, ids = prompt_values(
            store, a, got.context, config.snippet_chars, shown_card(inputs, config)
        )
        out.append((a, values, sorted(ids), inputs.features, labels))
    return out


def _item(a, s, labels, h: int) -> Item:  # type: ignore[no-untyped-def]
    """One anchor's decision at one horizon, as the heads see it."""
    return Item(
        a.decision_time,
        labels[h].matured_at,
        option_logprobs(s.scores[h].logprobs),
        (),
        LABEL_OPTION[labels[h].label],
    )


def _finite(s) -> bool:  # type: ignore[no-untyped-def]
    """Every option of every question (the horizons and the citation) scored with a finite
    log-probability: what a decision by scoring needs, as a generated reply needed valid JSON.
    An anchor with no evidence ids to cite asks no citation question."""
    questions = [*s.scores.values(), *([s.citation] if s.citation is not None else [])]
    return all(math.isfinite(v) for q in questions for v in q.logprobs.values())


def bench(name: str, rows, settings: Settings, *, n: int, seed: int) -> dict:  # type: ignore[no-untyped-def]
    llm = local_llm(name, settings.cache_dir, settings.threads, 4096)
    decided = []
    seconds = []
    valid = 0
    for a, values, ids, features, labels in rows:
        started = time.perf_counter()
        s = score_anchor(llm, values, ids=ids, horizons=HORIZONS, features=features, heads={})
        seconds.append(time.perf_counter() - started)
        valid += _finite(s)
        decided.append((a, s, labels))
        if len(decided) % 50 == 0:
            print(f"  {name}: {len(decided)}/{len(rows)} anchors read", flush=True)
    half = len(decided) // 2
    chosen: dict[str, list[list[str]]] = {}
    for h in HORIZONS:
        made = decide_all(
            [_item(*d, h) for d in decided[:half]],
            [_item(*d, h) for d in decided[half:]],
            classes=CLASSES,
            heads=("none", "prior"),
            seed=seed,
        )
        for rule in ("none", "prior"):
            chosen.setdefault(rule, []).append(made[rule])
    y = np.array([[LABEL_OPTION[lab[h].label] for h in HORIZONS] for _, _, lab in decided[half:]])
    prior = np.array(chosen["prior"]).T
    raw = np.array(chosen["none"]).T
    metric = METRICS["macro-F1"]
    perm = permutation(metric, prior, y, n=n, seed=seed)
    return {
        "model": llm.model_id,
        "name": name,
        "anchors": len(decided),
        "scored": len(y),
        "valid": valid / len(decided),
        "seconds": float(np.mean(seconds)),
        "prior": bootstrap(metric, prior, y, n=n, seed=seed),
        "raw": bootstrap(metric, raw, y, n=n, seed=seed),
        "excess": perm.excess,
        "p": perm.p,
        "mix": {c: float(np.mean(prior == c)) for c in CLASSES},
        "raw_mix": {c: float(np.mean(raw == c)) for c in CLASSES},
        "_prior": prior,
        "_y": y,
    }


def choose(results: list[dict], *, n: int, seed: int) -> tuple[dict | None, list[str]]:
    """The module docstring's rule, and the comparisons it rests on."""
    valid = [r for r in results if r["valid"] == 1.0]
    if not valid:
        return None, ["No model scored every option finitely on every anchor."]
    best = max(valid, key=lambda r: r["prior"].value)
    notes = []
    faster = []
    for r in valid:
        if r is best or r["seconds"] >= best["seconds"]:
            continue
        d = paired(METRICS["macro-F1"], r["_prior"], best["_prior"], best["_y"], n=n, seed=seed)
        notes.append(
            f"- {r['name']} minus {best['name']}: {d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}], "
            f"{verdict(d)}; {r['seconds']:.2f} s against {best['seconds']:.2f} s an anchor."
        )
        if d.contains_zero() or d.low > 0:
            faster.append(r)
    pick = min(faster, key=lambda r: r["seconds"]) if faster else best
    return pick, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="the impact benchmark's store")
    data_option(parser)
    parser.add_argument("--validation", type=period, default=period("2019"))
    parser.add_argument("--anchors", type=int, default=300)
    parser.add_argument("--models", default=MODELS)
    threads_option(parser)
    bootstrap_option(parser)
    parser.add_argument("--seed", type=int, default=0)
    report_option(parser, "reader.md")
    args = parser.parse_args(argv)
    print(f"options: {vars(args)}", flush=True)
    store = build(args.store, args.data)
    settings = Settings(home=args.store / "home", threads=args.threads)
    calendar = get_calendar()
    texts, vectors, _ = open_indexes(store, settings)
    config = ImpactConfig(snippet_chars=200)
    span = args.validation
    validated = validation(
        store, start=span.start, end=span.end, calendar=calendar, proxy=config.proxy
    )
    sample = stratified(validated.anchors, args.anchors)
    prices = load_prices(store, sample, proxy=config.proxy, calendar=calendar)
    rows = contexts(
        store, sample, texts=texts, vectors=vectors, config=config, prices=prices, calendar=calendar
    )
    print(f"{len(rows)} labelled validation anchors of {len(sample)} sampled", flush=True)
    results = []
    for name in args.models.split(","):
        print(f"reading with {name} ...", flush=True)
        results.append(bench(name, rows, settings, n=args.bootstrap, seed=args.seed))
        r = results[-1]
        print(f"  {r['name']}: calibrated {ci(r['prior'])}, {r['seconds']:.2f} s", flush=True)
    pick, notes = choose(results, n=args.bootstrap, seed=args.seed)
    lines = [
        "# Reader benchmark: calibrated skill on real validation anchors",
        "",
        f"Command: `python -m benchmarks.reader {' '.join(argv or sys.argv[1:])}`.",
        "",
        f"{len(rows)} labelled anchors of the validation period {span.first_day} to "
        f"{span.last_day} (a stratified sample of {len(sample)} from `{args.data}`), static "
        "retrieval, each decided by scoring (three horizons of whole options, the citation "
        "over the listed ids and none). Skill: the class-prior head fitted on the first "
        f"{len(rows) - results[0]['scored']} anchors and prequentially after, scored on the "
        f"last {results[0]['scored']}; macro-F1 "
        "is the mean over 1D/3D/5D with a 95 % bootstrap interval over anchors; the "
        f"permutation excess is macro-F1 minus its mean over {args.bootstrap:,} shuffles of the "
        "decisions "
        f"(p: how often a shuffle did as well). {args.threads} threads on 2 cores.",
        "",
        "| model | calibrated macro-F1 | permutation excess (p) | raw argmax macro-F1 | raw "
        "up/neutral/down % | calibrated up/neutral/down % | every option scored | s/anchor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        mix = "/".join(f"{100 * r['mix'][c]:.0f}" for c in CLASSES)
        raw_mix = "/".join(f"{100 * r['raw_mix'][c]:.0f}" for c in CLASSES)
        lines.append(
            f"| `{r['model']}` | **{ci(r['prior'])}** | {r['excess']:+.3f} (p = {r['p']:.3f}) "
            f"| {ci(r['raw'])} | {raw_mix} | {mix} | {r['valid']:.0%} | {r['seconds']:.2f} |"
        )
    lines += ["", *notes, ""]
    if pick is not None:
        lines.append(
            f"**Default: `{pick['name']}`** (calibrated macro-F1 {ci(pick['prior'])}, "
            f"{pick['seconds']:.2f} s an anchor). Rule: every option scored, the best "
            "calibrated macro-F1, unless a faster valid model shows no difference from it."
        )
    else:
        lines.append(notes[0])
    text = "\n".join(lines) + "\n"
    print(text)
    write_report(args.report, text)
    summary = [
        {
            k: (v.__dict__ if isinstance(v, Interval) else v)
            for k, v in r.items()
            if not k.startswith("_")
        }
        for r in results
    ]
    args.report.with_suffix(".json").write_text(
        json.dumps({"results": summary, "default": pick["name"] if pick else None}, indent=2) + "\n"
    )
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
