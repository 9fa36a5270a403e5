"""The event-impact benchmark's Markdown report and JSON summary (`benchmarks/impact.py`).

Every figure comes with its sample size and a 95 % bootstrap interval; a comparison with a
paired interval and a verdict (an interval containing zero is "no difference"). The
paper's own figures are printed for orientation only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from benchmarks.harness import ci
from finkg.evaluation.families import family_mix_lines
from finkg.evaluation.report import portfolio_table
from finkg.evaluation.stats import Interval, verdict
from finkg.tasks.decisions import RuleFigures
from finkg.tasks.impact.prequential import RunSummary
from finkg.tasks.impact.scoring import RULES

METRIC_NAMES = ("macro-F1", "non-neutral F1", "ACC", "MCC")
RULE_TEXT = {
    "all-neutral": "all-neutral (predicts 0 always)",
    "stratified": "stratified random (the matured class mix)",
    "momentum": "momentum (prior 5-session residual z beyond ±1)",
    "tone": "headline tone (finance word list)",
    "none": "reader, raw argmax of the option scores",
    "prior": "reader + class-prior head",
    "multinomial": "reader + multinomial head (scores and card)",
    "card": "card-only head (no reader)",
    "static": "job, no memory (`static`)",
    "cited": "job, source memory (`cited`)",
}
# paper 000 Table 4: ann. return, ann. volatility, Sharpe, max drawdown, turnover
PAPER_TABLE4 = [
    ("Market Proxy (QQQ)", "10.0%", "24.1%", ".41", "-37.8%", ".000"),
    ("Equal-weight universe", "6.0%", "23.7%", ".25", "-33.5%", ".004"),
    ("Frozen + No Memory", "9.9%", "19.1%", ".52", "-21.5%", ".094"),
    ("Frozen + Source Memory", "14.2%", "16.9%", ".84", "-20.2%", ".089"),
]


def _name(rule: str) -> str:
    if rule.startswith("shuffled-labels"):
        return f"job, shuffled-label memory (`{rule}`)"
    return RULE_TEXT.get(rule, f"`{rule}`")


def _diff(i: Interval) -> str:
    return f"{i.value:+.3f} [{i.low:+.3f}, {i.high:+.3f}]"


def _weeks(i: Interval | None) -> str:
    return "" if i is None else f"[{i.low:+.3f}, {i.high:+.3f}]"


def _weekly(r: RuleFigures, baseline: str) -> Interval:
    """The paired difference against `baseline` resampling weeks (anchors where not given)."""
    return r.versus_grouped.get(baseline, r.versus[baseline])


# a memory variant's macro-F1 minus static's: anchors resampled, then whole weeks
MemoryRows = Mapping[str, tuple[Interval, Interval]]


def _mix(mix: Mapping[int, Mapping[str, float]]) -> str:
    return " · ".join(
        f"{h}D " + "/".join(f"{100 * m[c]:.0f}" for c in ("up", "neutral", "down"))
        for h, m in mix.items()
    )


def _throughput(facts: Mapping, runs: Mapping[str, RunSummary], comparison) -> list[str]:  # type: ignore[no-untyped-def]
    val_cached = facts.get("val_cached", 0)
    val_real = facts["val_read"] - val_cached
    reader_rate = val_real / max(facts["val_reader_seconds"], 1e-9) * 3600
    per_anchor = facts["val_reader_seconds"] / max(val_real, 1)
    test_real = sum(s.predictions - s.cached for s in runs.values())
    test_rate = test_real / max(facts["run_minutes"], 1e-9) * 60
    if val_cached:
        val_row = (
            f"| validation pass: anchors read without memory | {facts['val_read']:,} in "
            f"{facts['val_minutes']:.1f} min, {val_cached:,} of them answered by the reply cache "
            "of an earlier run: no end-to-end rate from this pass |"
        )
    else:
        val_rate = facts["val_read"] / max(facts["val_minutes"], 1e-9) * 60
        val_row = (
            f"| validation pass: anchors read without memory, every read made (no cache) | "
            f"{facts['val_read']:,} in {facts['val_minutes']:.1f} min: **{val_rate:,.0f} "
            "anchors/h** end to end (pool, card, 3 scored horizons, citation, checks and writes) |"
        )
    lines = [
        "## Throughput (2 CPU cores)",
        "",
        "| figure | value |",
        "|---|---|",
        val_row,
        (
            f"| the same, the reader's own time only, reads really made | {reader_rate:,.0f} "
            f"anchors/h ({val_real:,} anchors: {per_anchor:.2f} s an anchor) |"
            if val_real
            else "| the same, the reader's own time only | no read made in this pass |"
        ),
        f"| test pass: {facts['sample']:,} anchors x {len(runs)} variants | "
        f"{facts['run_minutes']:.1f} min; {test_real:,} anchor reads really made (prompts the "
        "reply cache answered, another variant's identical prompt or an earlier run's, not "
        f"counted): **{test_rate:,.0f} "
        "anchors/h of real reads** end to end (retrieval and writes of every variant included) |",
        f"| prompt tokens kept from the previous read (aligned blocks; across the variants of "
        f"one anchor) | {facts['reuse'][0]:,} of {facts['reuse'][1]:,} "
        f"({facts['reuse'][0] / max(facts['reuse'][1], 1):.0%}) |",
        f"| index refresh (BM25 + MiniLM vectors) | {facts['index_s']:.0f} s |",
        "",
        "| variant | anchors | anchors whose every read was cached | reads made | reader seconds | "
        "anchors/h of real reads (reader time) |",
        "|---|---|---|---|---|---|",
    ]
    for v, s in runs.items():
        real = s.predictions - s.cached
        rate = real / s.reader_seconds * 3600 if s.reader_seconds else float("nan")
        lines.append(
            f"| `{v}` | {s.predictions:,} | {s.cached:,} | {s.reads:,} | {s.reader_seconds:,.0f} | "
            f"{rate:,.0f} |"
        )
    lines += [
        "",
        "A variant reads only where its memory changed the reader's context: the same prompt "
        "is answered by the exact reply cache and is not counted as a read.",
    ]
    if comparison:
        lines += speed_lines(comparison)
    return lines


def speed_lines(comparison: Mapping) -> list[str]:  # type: ignore[type-arg]
    """The timing table of the decision forms (`impact.compare_replies`)."""
    c = comparison

    def ratio(key: str) -> str:
        return f"{c[key + '_ratio']:.2f}x [{c[key + '_low']:.2f}, {c[key + '_high']:.2f}]"

    return [
        "",
        f"**Scoring against today's grammar replies**, the same {c['anchors']} test anchors "
        "(static retrieval), no cache, one process, each form over all of them in a row, "
        "in both orders (95 % intervals resample the timings):",
        "",
        "| decision path | prompt tokens | s/anchor | compact reply / this | full reply / this |",
        "|---|---|---|---|---|",
        "| the full grammar reply (paper 000's schema: signals, ids and reasons per horizon, "
        f"the main uncertainty; `finkg impact run`'s form until now) | {c['full_tokens']:.0f} "
        f"| {c['full_s']:.2f} | — | 1 |",
        "| the compact grammar reply (three signals and at most two ids; what this "
        f"benchmark read with until now) | {c['grammar_tokens']:.0f} | {c['grammar_s']:.2f} "
        "| 1 | — |",
        "| scoring on the same prompt material (the paper's card; three horizons and the "
        f"citation in one batch) | — | {c['scored_same_s']:.2f} | {ratio('scored_same')} "
        f"| {ratio('scored_same_full')} |",
        "| **the job's path**: scoring, the card's numbers in two lines | "
        f"{c['scored_tokens']:.0f} | {c['scored_s']:.2f} | **{ratio('scored')}** "
        f"| **{ratio('scored_full')}** |",
        "",
        "Evaluating the prompt is most of every form's cost here (about 500 prompt tokens "
        "a second on 2 cores; each generated token costs about 14 ms): scoring saves the "
        "generated tokens, not the prompt.",
    ]


def report(  # type: ignore[no-untyped-def]
    *,
    facts: Mapping,
    runs: Mapping[str, RunSummary],
    rows: Sequence[RuleFigures],
    ics: Mapping[str, tuple[Interval, int]],
    decided: Mapping[str, np.ndarray],
    mixes: Mapping[str, Mapping[int, Mapping[str, float]]],
    memory_rows: MemoryRows,
    results,
    benchmarks,
    pools: Sequence[Sequence],
    comparison,
    png: str,
) -> list[str]:
    head = facts["head"]
    by = {r.name: r for r in rows}
    n = facts["labelled"]
    lines = [
        "# Event-impact benchmark (paper 000) on real data: decisions by scoring",
        "",
        f"Command: `{facts['command']}`; {facts['total_minutes']:.0f} min in all on 2 CPU cores.",
        "",
        f"- Data: {facts['data']} (`{facts['args']['data']}`); market proxy "
        f"{facts['args']['proxy']}.",
        f"- Validation {facts['validation']}: {facts['val_anchors']:,} anchors give the class "
        f"weights w_y = 1/(3 pi_y) and the shuffled-label mix ({facts['weights']}); "
        f"{facts['val_read']:,} of them (stratified by month, SHA-256 order) were read "
        "without memory, and their scored decisions are where every head starts.",
        f"- Test {facts['test']}: {facts['test_anchors']:,} anchors, a sample of "
        f"{facts['sample']:,} stratified by month ({facts['months']}); **{n:,} anchors have a "
        "label at all three horizons** and are the items every figure below rests on. The "
        "memory starts empty at the test period's start.",
        f"- Reader: `{facts['reader']}`, frozen; every class decision is the log-probability of "
        "the whole options `up` / `neutral` / `down` (end-of-turn included) after one prompt "
        "per horizon; the evidence the memory credits is the id scored highest by a fourth "
        "question over the listed ids and `none`; the four prompts share their opening, "
        "evaluated once, and their questions and options are one batch "
        f"(`tasks/impact/scoring.py`). Evidence snippets of {facts['args']['snippet_chars']} "
        "characters, M0=20, M=5.",
        f"- Decision rule of the job: **`{head}`** ({_name(head)}), chosen on validation among "
        "the reader's heads and the no-skill rules the job computes (`--head auto`: fitted on "
        "the first 60 % of the validation decisions, macro-F1 on the last 40 %: "
        + ", ".join(f"{k} {v:.3f}" for k, v in facts["head_scores"].items())
        + "). Heads are refitted whenever a label has matured, on labels matured before the "
        "decision only, and stored as `fkg:DecisionHead` in the memory graph (a rule too, "
        "with nothing fitted).",
        f"- Check: the job's stored `static` decisions equal the offline recomputation of the "
        f"`{head}` head on the same items for {facts['agree']:.1%} of anchor-horizons.",
        "",
        *_throughput(facts, runs, comparison),
        "",
        "## Every rule on the same anchors",
        "",
        f"n = {n:,} anchors x 3 horizons in {len(set(facts['weeks']))} trading weeks; "
        "metrics are means over 1D/3D/5D; 95 % bootstrap intervals resample anchors (rank IC: "
        "prediction days), and macro-F1's again resample whole trading weeks (ISO weeks of the "
        "prediction day: anchors of one week share the market's moves, so the anchor-level "
        "interval is too narrow); the permutation control "
        f"shuffles a rule's decisions across anchors ({facts['args']['bootstrap']} shuffles): "
        "p is how often a "
        "shuffle scored as well, so a rule's order (its content) matters only where p is small.",
        "",
        "| rule | macro-F1 | macro-F1, weeks resampled | non-neutral F1 | ACC | MCC "
        "| rank IC (days) | permutation: shuffled macro-F1, p | predicted up/neutral/down % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ic, days = ics[r.name]
        m = r.metrics
        lines.append(
            f"| {_name(r.name)} | **{ci(m['macro-F1'])}** | {_weeks(r.grouped)} "
            f"| {ci(m['non-neutral F1'])} "
            f"| {ci(m['ACC'])} | {ci(m['MCC'])} | {ci(ic)} ({days}) "
            f"| {r.permutation.shuffled_mean:.3f}, p = {r.permutation.p:.3f} "
            f"| {_mix(mixes[r.name])} |"
        )
    lines += [
        "",
        "## Paired differences in macro-F1 (same anchors; an interval containing zero is no "
        "difference; the verdict is read off the interval that resamples weeks)",
        "",
        "| rule | against | difference [95 % CI, anchors] | [95 % CI, weeks] | verdict |",
        "|---|---|---|---|---|",
    ]
    for name in ("none", "prior", "multinomial", "static", "cited"):
        if name not in by:
            continue
        for b, d in by[name].versus.items():
            if b in ("all-neutral", "stratified", "momentum", "tone", "card"):
                w = _weekly(by[name], b)
                lines.append(
                    f"| {_name(name)} | {_name(b)} | {_diff(d)} | {_weeks(w)} | {verdict(w)} |"
                )
    lines += ["", "## The source memory against its controls", ""]
    if memory_rows:
        lines += [
            "| variant | macro-F1 minus no memory (`static`) [95 % CI, anchors] "
            "| [95 % CI, weeks] | verdict |",
            "|---|---|---|---|",
            *(
                f"| {_name(v)} | {_diff(d)} | {_weeks(w)} | {verdict(w)} |"
                for v, (d, w) in memory_rows.items()
            ),
            "",
        ]
    lines += _plainly(by, head, memory_rows)
    lines += [
        "",
        "## Families in the pools",
        "",
        "Paper 000 keeps two source families (News, SEC filing); finkg splits news by its "
        "publisher into press releases, analysis and commentary, and news reports (unknown "
        "sites stay News): its extension, so that a memory per family has something to "
        "reorder where filings are rare. Both views of the static run's pools:",
        "",
        *family_mix_lines(pools),
        "",
        "## Portfolio from 3D stock-day scores (Table 4; net of 10 bps on turnover)",
        "",
        *portfolio_table([*(r.portfolio for r in results if r.portfolio), *benchmarks]),
        "",
        "The paper's Table 4 (FNSPID 2021-2023, Llama-3.1-8B), for orientation only:",
        "",
        "| strategy | ann. return | ann. volatility | Sharpe | max drawdown | turnover |",
        "|---|---|---|---|---|---|",
        *("| " + " | ".join(row) + " |" for row in PAPER_TABLE4),
        "",
        f"![equity curves]({png})",
        "",
        "## How to read this",
        "",
        "- A sample's portfolio holds only tickers with a sampled anchor that day (long-only on "
        "positive 3D scores), so it sits in cash more often than a full-set portfolio would.",
        "- The paper's figures come from another corpus, period and an 8B reader; they are "
        "orientation, not a target this sample reproduces.",
    ]
    return lines


def _plainly(by: Mapping[str, RuleFigures], head: str, memory_rows: MemoryRows) -> list[str]:
    """The findings in words, each read off its paired interval."""
    out = ["## What this says", ""]
    if head in by:
        r = by[head]
        for b in ("all-neutral", "stratified", "momentum", "tone"):
            if b in r.versus:
                d = _weekly(r, b)
                out.append(
                    f"- The job's decision rule `{head}` against {_name(b)}: "
                    f"{_diff(d)} macro-F1 (weeks resampled), **{verdict(d)}**."
                )
        p = r.permutation
        out.append(
            f"- Its permutation control: shuffled across anchors its decisions score "
            f"{p.shuffled_mean:.3f} against {p.value:.3f} as made (p = {p.p:.3f}): "
            + (
                "the order carries content beyond the class mix."
                if p.p < 0.05
                else "no content beyond its class mix can be told from chance."
            )
        )
    if "multinomial" in by and "card" in by["multinomial"].versus:
        d = _weekly(by["multinomial"], "card")
        out.append(
            f"- What the reader adds over the card-only head (multinomial minus card): "
            f"{_diff(d)} (weeks resampled), **{verdict(d)}**."
        )
    for v, (_, w) in memory_rows.items():
        out.append(f"- `{v}` minus `static`: {_diff(w)} (weeks resampled), {verdict(w)}.")
    if memory_rows and head in RULES:
        out.append(
            f"- The job's rule `{head}` reads no reader score, so no memory variant can change "
            "a decision: their differences above are zero by construction and say nothing of "
            "what the memory learned (measure it with a reader head, `--head prior`)."
        )
    return out


def summary_json(facts, runs, rows, ics, memory_rows, comparison, decided) -> dict:  # type: ignore[no-untyped-def]
    def interval(i: Interval) -> dict:
        return {"value": i.value, "low": i.low, "high": i.high, "n": i.n}

    return {
        "facts": {k: v for k, v in facts.items() if k not in ("args",)} | {"args": facts["args"]},
        "runs": {
            v: {
                "anchors": s.predictions,
                "cached": s.cached,
                "reads": s.reads,
                "reader_seconds": s.reader_seconds,
                "head_items": s.head_items,
            }
            for v, s in runs.items()
        },
        "rules": {
            r.name: {
                **{m: interval(r.metrics[m]) for m in METRIC_NAMES},
                "rank_ic": interval(ics[r.name][0]),
                "rank_ic_days": ics[r.name][1],
                "permutation": {"shuffled_mean": r.permutation.shuffled_mean, "p": r.permutation.p},
                "mix": r.mix,
                "versus": {b: interval(d) for b, d in r.versus.items()},
                **({"macro-F1_weeks": interval(r.grouped)} if r.grouped else {}),
                "versus_weeks": {b: interval(d) for b, d in r.versus_grouped.items()},
            }
            for r in rows
        },
        "memory_minus_static": {v: interval(d) for v, (d, _) in memory_rows.items()},
        "memory_minus_static_weeks": {v: interval(w) for v, (_, w) in memory_rows.items()},
        "comparison": comparison,
    }
