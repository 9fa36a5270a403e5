"""The Markdown report of a retriever comparison (`compare.as_json` plus what it ran on).

Every count in the text comes from the result: nothing is written in by hand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from finkg.evaluation.stats import Interval, verdict
from finkg.tasks.movement.compare import ADAPTED, VERSUS

# The result as JSON (`compare.as_json` plus the benchmark's options, data and timings),
# rendered alike from the live dict and from the saved file.
Result = Mapping[str, Any]


def _ci(x: Sequence[float]) -> str:
    return f"{x[0]:.3f} [{x[1]:.3f}, {x[2]:.3f}]"


def _diff(x: Sequence[float]) -> str:
    v = verdict(Interval(x[0], x[1], x[2], 0))
    return f"{x[0]:+.3f} [{x[1]:+.3f}, {x[2]:+.3f}] {v}"


def _label(name: str) -> str:
    return {"none/raw": "none/raw (the reader alone, argmax)"}.get(name, name)


def _bracket(x: Sequence[float]) -> str:
    return f"[{x[1]:.3f}, {x[2]:.3f}]"


def rules_table(rules: Mapping[str, Mapping]) -> list[str]:
    """One row per rule; with the week-level MCC interval where the result has one (results
    saved before it was figured have not)."""
    weeks = any("mcc_weeks" in r for r in rules.values())
    lines = [
        "| rule | MCC [95 % CI] | "
        + ("MCC [95 % CI, weeks resampled] | " if weeks else "")
        + "ACC [95 % CI] | permutation: shuffled mean, p | class mix |",
        "|---|---|---|---|---|" + ("---|" if weeks else ""),
    ]
    for name, r in rules.items():
        mix = " / ".join(f"{c} {v:.0%}" for c, v in r["mix"].items())
        perm = r["permutation"]
        by_week = f"{_bracket(r['mcc_weeks'])} | " if weeks else ""
        lines.append(
            f"| {_label(name)} | {_ci(r['metrics']['MCC'])} | {by_week}"
            f"{_ci(r['metrics']['ACC'])} | "
            f"{perm['shuffled_mean']:.3f}, p = {perm['p']:.3f} | {mix} |"
        )
    return lines


def differences_table(rules: Mapping[str, Mapping]) -> list[str]:
    """The paired MCC differences; where the result has them, the intervals and verdicts
    that resample whole weeks (the honest ones), else the query-level ones."""
    weeks = any(r.get("mcc_vs_weeks") for r in rules.values())
    adapted = any(ADAPTED in name for name in rules)
    lines = [
        "| rule | vs majority | vs previous-day | vs the same head without retrieval"
        + (" (an adapted rule: vs the frozen reader's same rule)" if adapted else "")
        + " |",
        "|---|---|---|---|",
    ]
    for name, r in rules.items():
        if "/" not in name:
            continue
        vs = r["mcc_vs_weeks"] if weeks else r["mcc_vs"]
        none = next((v for k, v in vs.items() if k not in VERSUS), None)
        lines.append(
            f"| {name} | {_diff(vs['majority'])} | {_diff(vs['previous-day'])} | "
            f"{_diff(none) if none else '—'} |"
        )
    return lines


def constant(rules: Mapping[str, Mapping]) -> list[str]:
    """The rules that said the same class for every query."""
    return [name for name, r in rules.items() if max(r["mix"].values()) == 1.0]


def adapter_section(m: Mapping[str, Any] | None) -> list[str]:
    """What the adapted reader was trained on, from its manifest (none: nothing)."""
    if not m:
        return []
    t, v, f = m["training"], m["validation"], m["figures"]
    stocks = m.get("job_parameters", {}).get("stocks", {})
    return [
        "## The adapted reader (paper 001's StockLLM)",
        "",
        f"`{m['name']}`: a LoRA adapter (rank {m['hyper_parameters']['rank']}, alpha "
        f"{m['hyper_parameters']['alpha']}, lr {m['hyper_parameters']['lr']}, batch "
        f"{m['hyper_parameters']['batch']}) on `{m['base_model']}`, trained by "
        f"`finkg train-reader --job movement` on {t['items']} questions of the "
        f"{len(stocks.get('train', []))} training stocks decided {t['start'][:10]} to "
        f"{t['end'][:10]} (exclusive), every label matured before {t['labels_before']}; "
        f"stopped early on the MCC of {v['items']} questions of the "
        f"{len(stocks.get('valid', []))} validation stocks ({v['start'][:10]} to "
        f"{v['end'][:10]}, exclusive; raw argmax): {f['frozen']:.3f} frozen, "
        f"{f['best']:.3f} at step {f['best_step']} of {f['steps']} (kept); "
        f"{f['seconds']:.0f} s on {f['device']} in {f.get('precision', 'fp32')} "
        f"({f['steps_per_second']:.4f} steps/s, {m['threads']} threads). The test stocks "
        f"were never trained on. Adapter SHA-256 `{m['adapter_sha256'][:12]}`.",
        "",
    ]


def retriever_section(m: Mapping[str, Any] | None) -> list[str]:
    """What the trained retriever (FinSeer) learned from, from its manifest (none: nothing)."""
    if not m:
        return []
    h, kl, n = m["hyper_parameters"], m["valid_kl"], m["examples"]
    counts = m["split_counts"]
    return [
        "## The trained retriever (paper 001's FinSeer)",
        "",
        f"`{m['model_id']}`: a bi-encoder initialised from `{m['base_model']}`, trained by "
        f"`finkg train-retriever` on the feedback of `{m['reader']}`: {n['train']} queries of "
        f"the {counts['train']} training stocks and {n['valid']} of the {counts['valid']} "
        f"validation stocks, decided {h['query_from']} to {h['query_to']}, each with "
        f"{h['candidates']} windows scored by the reader (top {h['positives']} positive, "
        f"bottom {h['negatives']} negatives; alpha {h['alpha']}, tau {h['tau']}, "
        f"{h['epochs']} epochs, lr {h['lr']}). Validation KL to the reader's preferences: "
        f"{kl['base_minilm']:.3f} for the packaged MiniLM, {kl['finseer']:.3f} trained; "
        f"{m['seconds']:.0f} s. The test stocks were never trained on.",
        "",
    ]


def render(result: Result) -> str:
    """The report (module docstring) from the benchmark's result dict."""
    o, data, sel = result["options"], result["data"], result["selection"]
    reads = result["throughput"]
    lines = [
        "# Movement: retrievers compared on the same ACL18 queries (paper 001)",
        "",
        f"`python -m benchmarks.movement_decisions` with {json.dumps(o)}.",
        "",
        f"Data: `{data['folder']}` in the store `{data['store']}`; {data['stocks']} test "
        f"stocks of a seeded stock split. Validation: {sel['queries']} non-freeze queries, "
        f"{data['validation'][0]} to {data['validation'][1]}; test: up to "
        f"{data['test_queries']} non-freeze queries, {data['test'][0]} to {data['test'][1]}, "
        "a seeded random order of which every retriever reads a prefix. Candidates: the test "
        f"stocks' windows from {data['since']} available before each decision, "
        f"{data['sample']:.0%} of them kept by a hash of their IRI ({data['pool']} windows); "
        f"k = {data['k']}. Reader `{result['reader']}`, {data['threads']} thread(s). Each "
        "window and the query are shown to the reader as one line of numbers "
        "(`STOCK DATE series: five values -> movement`); BM25, MiniLM and FinSeer rank the "
        "stored JSON text.",
        "",
        "## The retriever chosen on the validation queries",
        "",
        f"Each retriever's `{sel['head']}` head decided the validation queries in time order, "
        "each from the validation labels matured before it; no test label is used.",
        "",
        "| retriever | validation MCC [95 % CI] | validation ACC [95 % CI] |",
        "|---|---|---|",
        *[f"| {r} | {_ci(v['MCC'])} | {_ci(v['ACC'])} |" for r, v in sel["validation"].items()],
        "",
        (
            f"Chosen: **{sel['best']}** (the highest validation MCC; `none` is the reference, "
            "not a candidate). It and `none` read every test query, the others the first ones."
            if sel["best"]
            else "No retriever to choose: `none` alone was asked for, and it reads every test "
            "query."
        ),
        "",
        "## Reads",
        "",
        "| retriever | reads made | cached (not timed) | s per read | reads per hour "
        "| prompt tokens mean (max) | retrieval s per query |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {r} | {t['reads']} | {t['cached']} | {t['seconds_per_read'] or '—'} | "
            f"{t['reads_per_hour'] or '—'} | {t['prompt_tokens_mean']} "
            f"({t['prompt_tokens_max']}) | {t['retrieval_seconds_per_query']} |"
            for r, t in reads.items()
        ],
        "",
    ]
    lines += adapter_section(result.get("adapter"))
    lines += retriever_section(result.get("finseer"))
    for t in result["tables"]:
        rules = t["rules"]
        n = t["queries"]
        flat = constant(rules)
        lines += [
            f"## {t['title']}",
            "",
            f"{n} test queries (rise share {t['rise_share']:.1%}); with {n} queries the "
            f"standard error of an accuracy near 0.5 is about {0.5 / max(n, 1) ** 0.5:.3f}.",
            "Rules: majority, stratified (a seeded draw from the matured class mix), "
            "previous-day and 5-day momentum (the sign of the query's own return), `card` "
            "(a logistic head over those two returns, no reader), and per retriever the "
            "reader's raw argmax (`raw`), the class-prior head (`prior`) and the logistic head "
            "over the scores and the returns (`multinomial`).",
            "",
            *rules_table(rules),
            "",
            "Rules that predicted one class for every query: "
            + (", ".join(f"`{x}`" for x in flat) if flat else "none")
            + ". The permutation control shuffles each rule's forecasts across the queries "
            "(its class mix kept); p is the share of shuffles whose MCC is at least the rule's.",
            "",
            "Paired MCC differences on the same queries [95 % CI"
            + (
                ", whole trading weeks resampled"
                if any("mcc_weeks" in r for r in rules.values())
                else ""
            )
            + "]; a difference whose interval contains zero is reported as no difference:",
            "",
            *differences_table(rules),
            "",
        ]
    if result.get("heads"):
        lines += [
            "## Decision heads in the store",
            "",
            f"Fitted on every matured query of `{result['heads_retriever']}` (the chosen "
            "retriever; a head's state does not name its retriever, so `finkg forecast` "
            "should use the same one):",
            "",
            *[
                f"- `{kind}`: {iri} (n = {n_}, sha256 {sha[:12]})"
                for kind, (iri, n_, sha) in result["heads"].items()
            ],
            "",
        ]
    if result.get("skipped"):
        lines += ["## Left out", ""]
        lines += [f"- `{r}`: {why}" for r, why in result["skipped"].items()]
        lines.append("")
    lines.append(f"Wall time: {result['wall_seconds']} s.")
    return "\n".join(lines) + "\n"
