"""Paper 000's Table 2 on finkg's data: the frozen and the LoRA-adapted reader, each without
and with the source memory, on the same test anchors (issue 42 item 3).

`benchmarks.impact` writes every rule's decisions on its labelled test anchors beside its
report (`impact.decisions.json`, `decisions_json`). Run it twice on the same store, periods
and sample, once with the frozen reader and once with `--adapter NAME` (an adapter from
`finkg train-reader --job impact`, trained on labels matured before the validation period),
then pair the two runs:

    python -m benchmarks.impact_adapted --frozen A.decisions.json \\
        --adapted B.decisions.json --report benchmarks/reports/impact_lora.md

On the anchors both runs labelled (the same labels, or it stops): the four rows (frozen /
LoRA x no memory / source memory, each the job's stored decisions through the head that
`--head auto` chose on validation, which may be a no-skill rule), each reader's raw argmax
and its class-prior and multinomial heads (the reader, whatever was chosen), and the
no-skill rules (all-neutral, stratified, momentum, tone); macro-F1 with intervals that
resample anchors and whole trading weeks (anchors of one week share the market's move),
permutation controls, and the paired differences LoRA minus
frozen (per memory) and source memory minus none (per reader), judged on the weeks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.harness import bootstrap_option, write_report
from finkg.tasks.decisions import RuleFigures, comparisons, figures, table
from finkg.tasks.impact.scoreboard import METRICS, Anchors
from finkg.tasks.impact.scoring import CLASSES

MEMORIES = ("no memory", "source memory")
NO_SKILL = ("all-neutral", "stratified", "momentum", "tone")
# Table 2's rows: (reader, memory) -> the run's rule
ROWS = {
    "frozen + no memory": ("frozen", "static"),
    "frozen + source memory": ("frozen", "cited"),
    "LoRA + no memory": ("adapted", "static"),
    "LoRA + source memory": ("adapted", "cited"),
    "frozen, raw argmax": ("frozen", "none"),
    "LoRA, raw argmax": ("adapted", "none"),
    "frozen, class-prior head": ("frozen", "prior"),
    "LoRA, class-prior head": ("adapted", "prior"),
    "frozen, multinomial head": ("frozen", "multinomial"),
    "LoRA, multinomial head": ("adapted", "multinomial"),
}
# what each row is paired with, besides the no-skill rules
AGAINST = {
    "frozen + source memory": ("frozen + no memory",),
    "LoRA + no memory": ("frozen + no memory",),
    "LoRA + source memory": ("frozen + source memory", "LoRA + no memory"),
    "LoRA, raw argmax": ("frozen, raw argmax",),
    "LoRA, class-prior head": ("frozen, class-prior head",),
    "LoRA, multinomial head": ("frozen, multinomial head",),
}
# the paper's Table 2 (FNSPID, Llama-3.1-8B; macro-F1, static and with its memory), for
# orientation only
PAPER = {
    "frozen + no memory": ".438",
    "LoRA + no memory": ".454",
    "LoRA + source memory": ".473",
}


def decisions_json(
    facts: Mapping[str, object],
    board: Anchors,
    decided: Mapping[str, np.ndarray],
    *,
    adapter: str | None,
) -> dict[str, object]:
    """One impact run's decisions on its labelled test anchors, and what made them."""
    return {
        "facts": {k: facts[k] for k in ("command", "reader", "head", "validation", "test")},
        "adapter": adapter,
        "anchors": board.keys,
        "days": [d.isoformat() for d in board.days],
        "labels": board.labels.tolist(),
        "decided": {rule: d.tolist() for rule, d in decided.items()},
    }


@dataclass(frozen=True)
class Run:
    """A run's decisions file, read back."""

    path: Path
    facts: dict[str, str]
    anchors: list[str]
    days: list[dt.date]
    labels: np.ndarray
    decided: dict[str, np.ndarray]

    @classmethod
    def read(cls, path: Path) -> Run:
        data = json.loads(path.read_text())
        return cls(
            path,
            data["facts"] | {"adapter": data["adapter"]},
            data["anchors"],
            [dt.date.fromisoformat(d) for d in data["days"]],
            np.array(data["labels"]),
            {rule: np.array(d) for rule, d in data["decided"].items()},
        )

    def rows(self, keep: Sequence[str]) -> np.ndarray:
        """Row indices of the anchors `keep`, in that order."""
        where = {a: i for i, a in enumerate(self.anchors)}
        return np.array([where[a] for a in keep], dtype=int)


@dataclass(frozen=True)
class Paired:
    """The two runs on the anchors both labelled, in the frozen run's order."""

    anchors: list[str]
    weeks: list[tuple[int, int]]
    labels: np.ndarray
    decided: dict[str, np.ndarray]  # Table 2's rows and the no-skill rules


def pair(frozen: Run, adapted: Run) -> Paired:
    """Table 2's rows from two runs; an anchor labelled differently by the two stops it (the
    runs were not on the same store and periods)."""
    both = set(adapted.anchors)
    keep = [a for a in frozen.anchors if a in both]
    if not keep:
        raise SystemExit(f"{frozen.path} and {adapted.path} share no labelled anchor")
    f, a = frozen.rows(keep), adapted.rows(keep)
    if not np.array_equal(frozen.labels[f], adapted.labels[a]):
        raise SystemExit(
            f"{frozen.path} and {adapted.path} label the same anchors differently: "
            "run both on the same store and periods"
        )
    runs = {"frozen": (frozen, f), "adapted": (adapted, a)}
    decided = {}
    for name, (reader, rule) in ROWS.items():
        run, rows = runs[reader]
        if rule not in run.decided:
            raise SystemExit(f"{run.path} has no `{rule}` decisions (run it with that variant)")
        decided[name] = run.decided[rule][rows]
    for rule in NO_SKILL:
        decided[rule] = frozen.decided[rule][f]
    days = [frozen.days[i] for i in f]
    weeks = [(c.year, c.week) for c in (d.isocalendar() for d in days)]
    return Paired(keep, weeks, frozen.labels[f], decided)


def baselines(rule: str) -> Sequence[str]:
    return (*AGAINST.get(rule, ()), *NO_SKILL)


def score(paired: Paired, *, n: int) -> list[RuleFigures]:
    return figures(
        paired.decided, paired.labels, metrics=METRICS, baselines=baselines, classes=CLASSES,
        n=n, groups=paired.weeks,
    )  # fmt: skip


def report(frozen: Run, adapted: Run, paired: Paired, rows: Sequence[RuleFigures]) -> list[str]:
    by = {r.name: r for r in rows}
    lines = [
        "# Paper 000 Table 2 on finkg's data: the frozen and the LoRA reader",
        "",
        f"Frozen run: `{frozen.facts['command']}`, reader `{frozen.facts['reader']}`.",
        "",
        f"Adapted run: `{adapted.facts['command']}`, reader `{adapted.facts['reader']}`"
        f" (adapter `{adapted.facts['adapter']}`).",
        "",
        f"Validation {frozen.facts['validation']}, test {frozen.facts['test']}; decision head "
        f"chosen on validation: frozen `{frozen.facts['head']}`, LoRA `{adapted.facts['head']}`.",
        f"**{len(paired.anchors):,} test anchors** labelled at 1, 3 and 5 sessions in both runs,"
        f" in {len(set(paired.weeks))} trading weeks; metrics average the three horizons.",
        "",
        "## Table 2",
        "",
        "| reader | no memory: macro-F1 [anchors] [weeks] | source memory | paper (8B) |",
        "|---|---|---|---|",
    ]
    for reader in ("frozen", "LoRA"):
        cells = []
        for memory in MEMORIES:
            r = by[f"{reader} + {memory}"]
            m = r.metrics["macro-F1"]
            g = r.grouped
            weeks = f" [{g.low:.3f}, {g.high:.3f}]" if g else ""
            cells.append(f"{m.value:.3f} [{m.low:.3f}, {m.high:.3f}]{weeks}")
        paper = " / ".join(PAPER.get(f"{reader} + {m}", "—") for m in MEMORIES)
        lines.append(f"| {reader} | {cells[0]} | {cells[1]} | {paper} |")
    lines += [
        "",
        "## Every rule on the same anchors",
        "",
        *table(rows, metric_names=list(METRICS)),
        "",
        "## Paired differences (macro-F1; the verdict from the interval over weeks)",
        "",
        *comparisons(rows, list(ROWS), "macro-F1"),
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frozen", type=Path, required=True, help="the frozen run's decisions")
    parser.add_argument("--adapted", type=Path, required=True, help="the adapted run's")
    parser.add_argument("--report", type=Path, required=True, help="the Markdown to write")
    bootstrap_option(parser)
    args = parser.parse_args(argv)
    frozen, adapted = Run.read(args.frozen), Run.read(args.adapted)
    paired = pair(frozen, adapted)
    rows = score(paired, n=args.bootstrap)
    text = "\n".join(report(frozen, adapted, paired, rows)) + "\n"
    print(text)
    write_report(args.report, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
