"""The QA report (`benchmarks/reports/qa.md`) from the merged results in `qa.json`: each
run writes its part there (`qa` the chunk-level retrieval, answers and audit; `qa_answers`
the calculator alone; `qa_retrieval` the page-level ablation), and any of them renders the
whole report with `report(results)`, the paper's figures beside finkg's."""

from __future__ import annotations

from benchmarks.qa_rows import ROWS, STEPPED
from finkg.evaluation.stats import Interval, verdict

# paper 003 (AI-FinanceQA held-out test; text-embedding-3-small, SPLADE, ColBERT):
# Table 4 retrieval, Table 3 gpt-4o-mini (selected) row, Table 6 auditability
PAPER_RETRIEVAL = {
    "sparse": {"P@5": 0.54, "R@5": 0.41, "NDCG@5": 0.60, "MAP": 0.47, "MRR": 0.62},
    "dense": {"P@5": 0.58, "R@5": 0.45, "NDCG@5": 0.65, "MAP": 0.50, "MRR": 0.66},
    "hybrid": {"P@5": 0.63, "R@5": 0.51, "NDCG@5": 0.70, "MAP": 0.55, "MRR": 0.72},
    "hybrid+rerank": {"P@5": 0.69, "R@5": 0.55, "NDCG@5": 0.74, "MAP": 0.61, "MRR": 0.78},
}


# the paths each method fuses (RRF k=60); "hybrid" is paper 003's dense + sparse, "+ metadata"
# adds paper 002's third path; rerankers reorder the top 20 of `finkg ask`'s default paths
METHODS = {
    "sparse": ("sparse",),
    "dense": ("dense",),
    "metadata": ("metadata",),
    "hybrid": ("sparse", "dense"),
    "hybrid + metadata": ("sparse", "dense", "metadata"),
}


PAPER_ANSWERS = {"G": 0.9463, "J": 0.9833, "N": 0.9348, "S_comp": 0.9527}


PAPER_AUDIT = {
    "citation coverage": 0.987,
    "citation resolution": 0.978,
    "artifact completeness": 0.991,
    "traceability": 0.994,
    "failure recovery": 29 / 30,
}


def corpus_text(prep: dict) -> str:
    """The store the answers came from and its chunking, as `prepare` found them."""
    settings = prep.get("chunking", ())
    sizes = " and ".join(f"at most {s} tokens, {o} overlapping" for s, o in settings)
    where = f"the store `{prep['store']}`, " if prep.get("store") else ""
    return f"{where}{prep.get('chunks')} chunks of the FinanceBench PDFs" + (
        f" ({sizes})" if sizes else ""
    )


def report(results: dict) -> str:
    """The Markdown report from the merged results (each part from the run that made it)."""
    prep = results.get("corpus", {})
    lines = [
        "# QA over filings (papers 002 + 003): FinanceBench and TAT-QA",
        "",
        f"Corpus: {corpus_text(prep)}. Each part below "
        "names the run that made it (2 CPU cores). Paper 003's "
        "figures are on its own AI-FinanceQA test set with hosted embeddings, SPLADE and "
        "ColBERT, not on FinanceBench: they set the layout and a scale, not a like-for-like "
        "target.",
        "",
    ]
    ret = results.get("retrieval")
    if ret:
        lines += [
            f"Retrieval run {ret['run']}: {ret['questions']} dev questions whose PDF is present "
            "and whose evidence page was located in it; "
            f"{ret['absent']} whose PDF is absent are left out (their only corpus would be their "
            "own evidence pages, which flatters any retriever). A chunk is relevant when its "
            "span overlaps an evidence page's span. Methods fuse their paths by RRF (k=60)"
            + (
                "; `finkg ask default` is the query plan with its paths and weights"
                if "finkg ask default" in next(iter(ret["tables"].values()), {})
                else ""
            )
            + ". "
            + _reranked_text(ret),
            "",
        ]
        for setting, methods in ret["tables"].items():
            lines += [
                f"## Retrieval, {setting}",
                "",
                "| method | n | P@5 | R@5 | NDCG@5 | MAP | MRR "
                "| paper 003 (P@5 / R@5 / NDCG@5 / MAP / MRR) |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for m, t in methods.items():
                key = "hybrid+rerank" if m.startswith("hybrid+rerank (cross") else m
                paper = PAPER_RETRIEVAL.get(key)
                keys = ("P@5", "R@5", "NDCG@5", "MAP", "MRR")
                ptxt = " / ".join(f"{paper[k]:.2f}" for k in keys) if paper else ""
                lines.append(
                    _row(m, t["n"], t["P@5"], t["R@5"], t["NDCG@5"], t["MAP"], t["MRR"], ptxt)
                )
            lines.append("")
        lines += [
            "Mean seconds per question: "
            + ", ".join(f"{k} {v:.3f}" for k, v in ret["seconds"].items()),
            "",
        ]
    fb, tq = results.get("financebench"), results.get("tatqa")
    if fb or tq:
        lines += [
            "## Answers (paper 003 Table 3 layout)",
            "",
            "| set | run | n | correct [95 % CI] | G | Gc | J | N | S_comp | s / answer |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, a in (("FinanceBench, own document", fb), ("TAT-QA dev, own context", tq)):
            if a:
                ci = a.get("accuracy_ci")  # runs before issue 28 have none
                exact = f"{ci[0]:.3f} [{ci[1]:.2f}, {ci[2]:.2f}]" if ci else f"{a['accuracy']:.3f}"
                lines.append(
                    _row(name, a["run"], a["n"], exact, a["G"], a["Gc"], a["J"], a["N"])
                    + f" {a['S_comp']:.3f} | {a['seconds_per_answer']:.1f} |"
                )
        p = PAPER_ANSWERS
        lines += [
            f"| paper 003, gpt-4o-mini (AI-FinanceQA) | | | | {p['G']:.4f} | | {p['J']:.4f} "
            f"| {p['N']:.4f} | {p['S_comp']:.4f} | 1.3 |",
            "",
            "Correctness rule (`finkg.evaluation.answers`): a number in the reference must be "
            "matched by a number in the answer after rounding to the reference's decimals (scales "
            "read); yes/no references need the same first word; otherwise the reference's words "
            "in order inside the answer, or token F1 >= 0.5. FinanceBench's sample is "
            "deterministic (evenly spread over the questions whose PDF is in the store); "
            "TAT-QA's is drawn with a seed from the whole dev set.",
            "",
        ]
        for name, a in (("FinanceBench", fb), ("TAT-QA", tq)):
            if a:
                if "by_type" in a:
                    lines += type_lines(name, a)
                lines.append(
                    f"{name}: statuses {a['statuses']}; latency by stage (s): "
                    + ", ".join(f"{k} {v:.2f}" for k, v in a["stages"].items())
                )
                lines.append("")
        lines.append("")
    lines += report_lines(results.get("pages", {})) or [
        "## Retrieval inside the question's own filing, by page (issue 28)",
        "",
        "Not run on the dev questions yet (`benchmarks/qa_retrieval.py`; its three stores "
        "and their embeddings take hours on 2 CPU cores).",
        "",
    ]
    lines += calc_lines(results.get("tatqa_calc", {}))
    audit, rec = results.get("audit"), results.get("recovery")
    if audit or rec:
        lines += ["## Auditability (paper 003 Table 6)", "", "| check | finkg | paper 003 |"]
        lines.append("|---|---|---|")
        if audit:
            for k, label in (
                ("citation coverage", "citation coverage (claims citing evidence)"),
                ("citation resolution", "citation resolution"),
                ("artifact completeness", "artifact completeness"),
                ("traceability", "traceability (answer to a Ready transition)"),
            ):
                value = "n/a" if audit[k] is None else f"{audit[k]:.3f}"
                lines.append(f"| {label} | {value} | {PAPER_AUDIT[k]:.3f} |")
        if rec:
            lines.append(
                f"| failure recovery ({rec['recovered']}/{rec['injected']} injected: "
                f"{rec['per_stage']}) | {rec['recovered'] / max(rec['injected'], 1):.3f} | 29/30 |"
            )
        tat = results.get("audit_tatqa")
        for key, label in (("audit_tatqa", "TAT-QA answers"), ("audit_tatqa_calc", "no reader")):
            part = results.get(key)
            if not part:
                continue
            for k in ("citation coverage", "citation resolution", "artifact completeness"):
                value = "n/a" if part[k] is None else f"{part[k]:.3f}"
                lines.append(f"| {k}, {label} | {value} | {PAPER_AUDIT[k]:.3f} |")
        if audit:
            lines += [
                "",
                f"Over {audit['answers']} written FinanceBench answers: {audit.get('claims', 0)} "
                f"claims (each answer's summary, {audit['insights']} insights and the number "
                f"claims), {audit['citations']} citations."
                + (
                    f" Over {tat['answers']} TAT-QA answers: {tat['citations']} citations."
                    if tat
                    else ""
                ),
            ]
        lines.append("")
    return "\n".join(lines)


def _reranked_text(ret: dict) -> str:
    """What the retrieval tables' reranker rows are, or that none ran."""
    methods = next(iter(ret["tables"].values()), {})
    ran = [m for m in methods if "rerank" in m]
    if not ran:
        return (
            f"No reranker row: `--rerank` gave `{ret['reranker']}` and no LLM sample was "
            "asked for (the LLM yes/no rerank is measured by page in the section below)."
        )
    return (
        "Rerankers reorder the top 20 of `finkg ask`'s default in the own-document setting "
        f"(the one the answers use): cross-encoder `{ret['reranker']}`; LLM yes/no: reader "
        f"`{ret['reader']}` on the first questions only (time)."
    )


def _row(*cells: object) -> str:
    return "| " + " | ".join(f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells) + " |"


def type_lines(name: str, a: dict) -> list[str]:
    """The by-type table of one answer set."""
    lines = [
        f"{name}: exact {a['accuracy_ci'][0]:.3f} [{a['accuracy_ci'][1]:.2f}, "
        f"{a['accuracy_ci'][2]:.2f}] over {a['n']} questions; computed by finkg: "
        f"{a['calculated']['correct']}/{a['calculated']['n']} right.",
        "",
        "| type | n | exact [95 % CI] |",
        "|---|---|---|",
    ]
    for kind, (v, lo, hi, n) in a.get("by_type", {}).items():
        lines.append(f"| {kind} | {n} | {v:.3f} [{lo:.2f}, {hi:.2f}] |")
    return [*lines, ""]


def calc_lines(a: dict) -> list[str]:
    """The report's section on the calculator alone (TAT-QA arithmetic, no reader)."""
    if not a:
        return []
    c, ci = a["calculated"], a["accuracy_ci"]
    return [
        "## Numbers computed by finkg, no reader (TAT-QA arithmetic, issue 28)",
        "",
        f"Run {a['run']}: {a['n']} TAT-QA dev questions of type arithmetic (TAT-QA's "
        f"arithmetic and count answers), drawn with seed {a['seed']}, each over its own "
        "context; `finkg ask`'s retrieval (top 5 blocks), then `tasks.qa.arithmetic` with its "
        "rules alone (no reader scores an operation or a row). A question the calculator "
        "does not compute counts as wrong.",
        "",
        "| n | exact [95 % CI] | computed by finkg | exact when computed | N | s / answer |",
        "|---|---|---|---|---|---|",
        f"| {a['n']} | {ci[0]:.3f} [{ci[1]:.2f}, {ci[2]:.2f}] | {c['n']} | "
        f"{c['correct']}/{c['n']} | {a['N']:.3f} | {a['seconds_per_answer']:.1f} |",
        "",
    ]


def report_lines(pages: dict) -> list[str]:
    """The page-level section of the QA report."""
    if not pages:
        return []
    q = pages.get("questions", {})
    lines = [
        "## Retrieval inside the question's own filing, by page (issue 28)",
        "",
        f"Run {pages['run']}. Dev questions whose PDF is present, split by company: split A "
        f"({q.get('A')} questions) chose BM25's k1 and b and the fusion weights, split B "
        f"({q.get('B')}) is reported"
        + (f"; held-out file: {q['held-out']} questions" if "held-out" in q else "")
        + ". Each row adds one lever to the row above; the chunk ranking becomes a page ranking "
        "(a chunk stands for the pages it overlaps, the page holding most of it first). "
        "Figures: mean [95 % bootstrap interval] over questions.",
        "",
    ]
    splits = [s for s in ("B", "held-out", "A") if s in q]
    for split in splits:
        lines += [
            f"### Split {split}" + (" (used for the choices)" if split == "A" else ""),
            "",
            "| lever | n | page Hit@1 | page Hit@5 | page Hit@10 | page R@5 | page MRR "
            "| chunk R@5 | chunk MRR | Hit@5 minus the row above | MRR minus the row above |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in pages["rows"]:
            t = r.get(split)
            if not t:
                continue
            shown = [_ci(t[k]) for k in ("page Hit@1", "page Hit@5", "page Hit@10")]
            shown += [_ci(t["page R@5"]), _ci(t["page MRR"])]
            stepped = t.get("step") or {}
            shown_step = [_signed(stepped[k]) if k in stepped else "" for k in STEPPED]
            lines.append(
                f"| {r['row']} | {t['n']} | {' | '.join(shown)} | "
                f"{t['chunk R@5'][0]:.3f} | {t['chunk MRR'][0]:.3f} | {' | '.join(shown_step)} |"
            )
        lines += [
            "",
            "The last two columns: the row minus the row above on the same questions, with a "
            "paired 95 % bootstrap interval (empty where the row above was not in the same "
            "run); an interval containing zero is no difference.",
            "",
        ]
    ran = {r["row"] for r in pages["rows"]}
    missing = [r.number for r in ROWS if r.name not in ran]
    if missing:
        lines += [f"Rows not run yet: {', '.join(missing)} (`--rows` runs them).", ""]
    if "choice" in pages:
        c = pages["choice"]
        lines += [
            f"Chosen on split A: BM25 k1 {c['k1']}, b {c['b']}; RRF weights {c['weights']}.",
            "",
        ]
    llm = pages.get("llm_rerank")
    if llm:
        b, a, d = llm["before"], llm["after"], llm.get("step") or {}
        gain = d.get("page Hit@5"), d.get("page MRR")
        lines += [
            f"LLM yes/no rerank ({llm['model']}, option scoring: one prompt evaluation, options "
            f"'yes' and 'no') of the top {llm['top']} chunks of row "
            f"{llm.get('row', '8').split()[0]}, on {b['n']} split-B questions: page Hit@5 "
            f"{_ci(b['page Hit@5'])} -> {_ci(a['page Hit@5'])}"
            + (f", paired step {_signed(gain[0])}" if gain[0] else "")
            + f"; page MRR {_ci(b['page MRR'])} -> {_ci(a['page MRR'])}"
            + (f", paired step {_signed(gain[1])}" if gain[1] else "")
            + f". Cost: {llm['seconds_per_question']:.1f} s a question (every read made, no "
            f"cache; 2 CPU cores), {llm['prompt_tokens_per_question']:.0f} prompt tokens a "
            "question.",
            "",
        ]
        if gain[1]:
            said = _verdict(gain[1])
            lines += [
                f"Page MRR with the LLM rerank: {said}. `--rerank auto` never uses it; "
                "`finkg ask --rerank llm` does"
                + (", and on this evidence should not." if said == "worse" else "."),
                "",
            ]
    rr = pages.get("reranker")
    if rr:
        verdict = "uses it" if rr["use"] else "leaves it off"
        lines += [f"Trained cross-encoder: {rr['reason']} `--rerank auto` {verdict}.", ""]
    return lines


def _ci(v: list[float]) -> str:
    return f"{v[0]:.3f} [{v[1]:.2f}, {v[2]:.2f}]"


def _verdict(v: list[float]) -> str:
    """A paired difference [value, low, high] in words: better, worse or no difference."""
    return verdict(Interval(v[0], v[1], v[2], 0))


def _signed(v: list[float]) -> str:
    return f"{v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]"
