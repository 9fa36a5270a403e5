"""Markdown reports of the event-impact job: paper 000's tables with finkg's figures.

The paper's own figures (its Tables 2-4, FNSPID 2021-2023, Llama-3.1-8B reader) are printed
beside finkg's for orientation only: the data, period, universe and reader differ, and the
report says which ones finkg used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from finkg.evaluation.backtest import Performance
from finkg.evaluation.metrics import VariantResult

# paper 000 Tables 2-3 (frozen reader): non-neutral F1, macro-F1 (all, 1D, 3D, 5D), rank IC
PAPER_EVENT = {
    "static": (0.311, 0.438, 0.425, 0.441, 0.449, 0.046),
    "cited": (0.356, 0.471, 0.452, 0.476, 0.486, 0.061),
    "shuffled-labels": (0.316, 0.441, None, None, None, 0.047),
    "shuffled-event-types": (0.336, 0.456, None, None, None, 0.054),
    "selected-evidence": (0.348, 0.466, None, None, None, 0.058),
}
NAMES = {
    "static": "Frozen + No Memory",
    "cited": "Frozen + Source Memory",
    "shuffled-labels": "Shuffled-label Memory",
    "shuffled-event-types": "Shuffled event-type Memory",
    "selected-evidence": "Selected-evidence Update",
}


def _f(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def _base(variant: str) -> str:
    return variant.split(":", 1)[0]


def event_table(results: Sequence[VariantResult]) -> list[str]:
    lines = [
        "| variant | predictions | labelled | non-neutral F1 | macro-F1 | 1D | 3D | 5D "
        "| rank IC | citation rate | future-doc rate | near-dup anchor rate "
        "| paper: NN-F1 / macro-F1 / rank IC |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        paper = PAPER_EVENT.get(_base(r.variant))
        ref = f"{paper[0]:.3f} / {paper[1]:.3f} / {paper[5]:.3f}" if paper else ""
        lines.append(
            f"| {NAMES.get(_base(r.variant), r.variant)} (`{r.variant}`) | {r.predictions} "
            f"| {r.labelled} | {_f(r.non_neutral_f1)} | {_f(r.macro_f1_all)} "
            f"| {_f(r.macro_f1[1])} | {_f(r.macro_f1[3])} | {_f(r.macro_f1[5])} "
            f"| {_f(r.rank_ic)} ({r.rank_ic_days} d) | {_f(r.citation_rate, 2)} "
            f"| {r.audit.future_rate:.2%} "
            f"| {r.audit.near_duplicate_rate:.2%} | {ref} |"
        )
    return lines


def portfolio_table(rows: Sequence[Performance]) -> list[str]:
    lines = [
        "| strategy | ann. return | ann. volatility | Sharpe | max drawdown | turnover |",
        "|---|---|---|---|---|---|",
    ]
    for p in rows:
        lines.append(
            f"| {p.name} | {p.annual_return:.1%} | {p.annual_volatility:.1%} "
            f"| {_f(p.sharpe, 2)} | {p.max_drawdown:.1%} | {p.turnover:.3f} |"
        )
    return lines


def impact_report(
    *,
    title: str,
    setup: Sequence[str],
    results: Sequence[VariantResult],
    benchmarks: Sequence[Performance],
    png: str | None,
) -> str:
    perfs = [r.portfolio for r in results if r.portfolio is not None]
    lines = [f"# {title}", "", *setup, "", "## Event-level quality (paper 000 Tables 2-3)", ""]
    lines += event_table(results)
    lines += ["", "## Portfolio from 3D stock-day scores (paper 000 §4.4, Table 4)", ""]
    lines += portfolio_table([*perfs, *benchmarks])
    if png:
        lines += ["", f"![equity curves]({png})"]
    return "\n".join(lines) + "\n"
