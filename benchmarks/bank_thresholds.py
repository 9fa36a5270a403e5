"""Memory-bank look-up thresholds: paraphrases against near-misses (paper 002 §4.4).

A bank of twelve canonical questions about one company for FY2020, asked three ways:
verbatim (with the company and the period written in), paraphrased (the same quantity in
other words), and near-missed (a modifier that changes the quantity: "by segment", "cost
of", "basic" for "diluted"). For each matcher it prints the score of the intended question
(paraphrases) and the highest score of any question (near-misses, which have no right
answer in the bank), then the hits and false hits at the thresholds given. A false hit is
a wrong number served without retrieval; a miss only falls through to the full pipeline.

    python -m benchmarks.bank_thresholds [--embedder minilm|hash] [--tau-seq 0.8] ...
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from finkg.retrieval.index.embed import HashEmbedder, MiniLM
from finkg.retrieval.memory.bank import TAU_BM25, TAU_SEM, TAU_SEQ, BankEntry, Matcher
from finkg.retrieval.plan.questions import normalize

NAMES = ("Apple Inc.", "AAPL")
QUESTIONS = (
    "What was the total revenue?",
    "What was the net income?",
    "What was the diluted earnings per share?",
    "What was the operating income?",
    "What was the gross margin?",
    "What were the capital expenditures?",
    "What was the free cash flow?",
    "What was the total debt?",
    "What was the cash and cash equivalents balance?",
    "What was the revenue growth year over year?",
    "How many employees did the company have?",
    "What dividend per share was declared?",
)
VERBATIM = [(f"{q[:-1]} of Apple in FY2020?", i) for i, q in enumerate(QUESTIONS)]
PARAPHRASES = [
    ("What were Apple's total sales in FY2020?", 0),
    ("How much revenue did Apple make in fiscal 2020?", 0),
    ("What was Apple's top line in FY2020?", 0),
    ("Apple revenue FY2020", 0),
    ("How much did Apple earn in total revenue in 2020?", 0),
    ("What were Apple's net earnings in FY2020?", 1),
    ("How much profit did Apple make in 2020?", 1),
    ("What was Apple's net profit for fiscal 2020?", 1),
    ("What was AAPL's diluted EPS for FY2020?", 2),
    ("Diluted earnings per share of Apple in 2020?", 2),
    ("What was Apple's operating profit in FY2020?", 3),
    ("What was Apple's gross margin percentage in FY2020?", 4),
    ("How much did Apple spend on capital expenditures in 2020?", 5),
    ("How much free cash flow did Apple generate in FY2020?", 6),
    ("How much debt did Apple have in FY2020?", 7),
    ("How many employees did Apple have in 2020?", 10),
    ("What was Apple's headcount in FY2020?", 10),
    ("What was Apple's dividend per share in FY2020?", 11),
]
NEAR_MISSES = [
    "What was Apple's total revenue by segment in FY2020?",
    "What was Apple's services revenue in FY2020?",
    "What was Apple's revenue in China in FY2020?",
    "What was Apple's total cost of revenue in FY2020?",
    "What was Apple's deferred revenue in FY2020?",
    "What was Apple's net income margin in FY2020?",
    "What was Apple's net interest income in FY2020?",
    "What was Apple's comprehensive income in FY2020?",
    "What was Apple's basic earnings per share in FY2020?",
    "What were Apple's operating expenses in FY2020?",
    "What were Apple's research and development expenses in FY2020?",
    "What was Apple's operating cash flow in FY2020?",
    "What was Apple's long-term debt due within one year in FY2020?",
    "What was Apple's total equity in FY2020?",
    "What were Apple's total assets in FY2020?",
    "What was Apple's gross margin for products in FY2020?",
    "What was Apple's marketable securities balance in FY2020?",
    "How many stores did Apple have in 2020?",
    "How many shares did Apple repurchase in FY2020?",
    "Who is Apple's CEO?",
    "What risks did Apple disclose in FY2020?",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--tau-seq", type=float, default=TAU_SEQ)
    parser.add_argument("--tau-bm25", type=float, default=TAU_BM25)
    parser.add_argument("--tau-sem", type=float, default=TAU_SEM)
    args = parser.parse_args(argv)
    print(f"options: {vars(args)}")
    embedder = MiniLM() if args.embedder == "minilm" else HashEmbedder()
    matcher = Matcher(embedder, tau_seq=args.tau_seq, tau_bm25=args.tau_bm25, tau_sem=args.tau_sem)
    at = dt.datetime(2020, 10, 30, 16, 5, tzinfo=dt.UTC)
    bank = [
        BankEntry(
            company="https://example.org/company/AAPL",
            question=q,
            period="FY2020",
            answer=str(i),
            available_at=at,
            evidence=("https://example.org/passage/1",),
            names=NAMES,
        )
        for i, q in enumerate(QUESTIONS)
    ]
    canon = [normalize(q, names=NAMES) for q in QUESTIONS]
    names = ("subsequence", "bm25", "semantic")
    for title, cases in (
        ("verbatim", VERBATIM),
        ("paraphrases", PARAPHRASES),
        ("near-misses", [(q, None) for q in NEAR_MISSES]),
    ):
        print(f"\n## {title}: score of the intended question (near-misses: best of any)")
        print("| query | " + " | ".join(names) + " | look-up |")
        print("|---|---|---|---|---|")
        hits = wrong = 0
        for query, want in cases:
            scores = matcher.scores(normalize(query, names=NAMES), canon)
            shown = [
                scores[want][n] if want is not None else max(s[n] for s in scores) for n in names
            ]
            found = matcher.match(query, bank)
            got = None if found is None else int(found.entry.answer)
            hits += got is not None and got == want
            wrong += got is not None and got != want
            cells = " | ".join(f"{v:.3f}" for v in shown)
            print(f"| {query} | {cells} | {'-' if got is None else QUESTIONS[got]} |")
        print(f"\n{title}: {hits} right, {wrong} wrong, {len(cases) - hits - wrong} missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
