"""The Markdown report of `qa_facts.py`, from its JSON."""

from __future__ import annotations


def _ci(part: dict | None) -> str:
    if not part:
        return "—"
    v, lo, hi = part["exact"]
    return f"{v:.3f} [{lo:.2f}, {hi:.2f}] (n {part['n']})"


def render(r: dict) -> str:
    a, x, e = r["answers"], r["accuracy"], r["extraction"]
    lines = [
        "# FinanceBench from statement facts (issue 44)",
        "",
        f"Run {r['run']}; reader: {r['reader']}; store: `{r['store']}` (layout text, 192/32 "
        "chunks, statement facts read at ingest). Options: "
        + ", ".join(f"`{k}={v}`" for k, v in r["options"].items()),
        "",
        "Exact = `finkg.evaluation.answers.correct` (a number must equal the reference's after "
        "rounding to the reference's decimals). Intervals: 95 %, companies resampled whole.",
        "",
        "## Answers (own filing)",
        "",
        "| questions | exact [95 % CI] (n) |",
        "|---|---|",
    ]
    for key in (
        "all",
        "metrics-generated",
        "domain-relevant",
        "novel-generated",
        "numeric",
        "extraction",
        "arithmetic",
        "yes/no",
        "yes/no, strict",
        "text",
        "split A",
        "split B",
        "split A metrics-generated",
        "split B metrics-generated",
    ):
        lines.append(f"| {key} | {_ci(a.get(key))} |")
    c, h = a["computed"], a["high"]
    lines += [
        "",
        "yes/no, strict: the answer opens with the reference's yes or no, whatever figures it "
        "states (exact scores a yes/no reference whose first sentence holds a number by that "
        "number, so a right figure under a wrong verdict counts).",
        "",
        f"- Computed from statement facts: {c['n']} answers, {c['right']} right; "
        f"{c['seconds_mean']} s an answer on average (no index or reader opened).",
        f"- Seconds per answer, all: {a['seconds_mean']}.",
        f"- Rated High: {h['n']} answers ({h['share_of_answers']} of all); exact among them: "
        f"{_ci(h['right'])}.",
    ]
    if r.get("audit"):
        au = r["audit"]
        lines.append(
            f"- Audit of the computed answers: {au['resolved']} of {au['citations']} cited facts "
            f"resolve to a stored fact with its page, in a chunk that holds its figure "
            f"({au['resolution']})."
        )
    b = r.get("baseline")
    if b:
        lines += [
            "",
            "## Against today's path (statement facts off), paired",
            "",
            f"Today's path was rerun on the {b['rerun']} questions whose path the facts route "
            f"changed; on the other {b['same_path']} both paths are the same computation (the "
            "same evidence before the same greedy reader).",
            "",
            "| questions | today | facts path minus today [95 % CI] | verdict |",
            "|---|---|---|---|",
        ]
        for key in ("all", "metrics-generated", "numeric"):
            if key in b:
                t, d = b[key]["today"], b[key]["difference"]
                lines.append(
                    f"| {key} (n {b[key]['n']}) | {t[0]:.3f} [{t[1]:.2f}, {t[2]:.2f}] | "
                    f"{d[0]:+.3f} [{d[1]:+.2f}, {d[2]:+.2f}] | {b[key]['verdict']} |"
                )
    lines += [
        "",
        "## The facts",
        "",
        f"- {e['facts']:,} facts from {e['filings']} filings (median {e['median_per_filing']} "
        f"a filing); reading them takes {e['seconds_per_filing']} s a filing once the text is "
        f"extracted. Filings with none: {', '.join(e['filings_without_facts']) or 'none'}.",
        f"- On the {x['statement_evidence_pages']} evidence pages FinanceBench cites that hold "
        f"a primary statement: {x['facts_on_them']} facts read (and "
        f"{x.get('dash_facts_left_out', 0)} printed as a dash, which the evidence text leaves "
        f"out), value precision "
        f"{x['value_precision']} (label and figure in its column found in the evidence "
        f"text), recall {x['recall']} of its {x['figures_in_evidence']} figures.",
        f"- Page attribution: of {x['facts_checked_for_page']:,} facts, {x['page_holds_figure']} "
        "cite a page whose text holds their printed figure.",
    ]
    if x["not_matched_examples"]:
        lines += ["", "Facts not matched in the evidence text (first few):", ""]
        lines += [f"- {t}" for t in x["not_matched_examples"]]
    wrong = [row for row in a["rows"] if not row["correct"] and row["computed"]]
    if wrong:
        lines += ["", "## Computed answers that are wrong", ""]
        lines += [f"- {w['doc']}: {w['answer']!r} vs {w['reference']!r}" for w in wrong]
    return "\n".join(lines) + "\n"
