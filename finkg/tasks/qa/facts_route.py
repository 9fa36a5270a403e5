"""The facts route of `finkg ask`: a numeric question answered from statement facts.

Before any retrieval, the question is planned (`metric_question.plan`) and computed from
the statement facts available before the answer's instant (`fact_book`, `fact_calc`):

- computed: the answer is finkg's. Each operand is an evidence block `F1`, `F2`, ... whose
  text is the fact's row as the chunk holds it, citing the fact (its IRI; the audit walks
  on to its chunk, page and document); the summary states the result, an insight the
  formula (the question's definition, or the library's, quoted) and the operands, and each
  operand is a number claim the numeric check verifies in its row. No reader is asked;
- a yes/no question over a metric ("a healthy liquidity profile based on its quick ratio"):
  the computed figure is put before the reader as block `F1` and the reader answers,
  giving the judgement; the answer says finkg computed the figure;
- not computed (no plan, or an operand no fact gives): the reader path answers, and the
  answer's run records why (`note`).

`row_check` gives the numeric check its meaning for a reader's answer to a question about
one line item in one year: a figure counts only when it is that line item's value for that
year (in any of its printed forms), not merely a number found in the cited text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.kg.store import BaseStore
from finkg.reader.grounding import values
from finkg.reader.schemas import Answer
from finkg.retrieval.index.live import node_texts
from finkg.tasks.qa.blocks import Block
from finkg.tasks.qa.fact_book import FactBook
from finkg.tasks.qa.fact_calc import FactCalculation, Missing, compute
from finkg.tasks.qa.formula import Item
from finkg.tasks.qa.metric_question import NoPlan, Plan, plan


@dataclass
class FactsOutcome:
    """What the facts route made of a question: a calculation (with its blocks), or why
    not; `plan` and `book` stay for the numeric check of a reader's answer."""

    calculation: FactCalculation | None
    blocks: list[Block]
    note: str
    plan: Plan | None = None
    book: FactBook | None = None

    @property
    def answers(self) -> bool:
        """Whether finkg's computation is the answer (a yes/no judgement is the reader's)."""
        return self.calculation is not None and not self.calculation.plan.yes_no


def route(
    store: BaseStore,
    question: str,
    *,
    as_of: dt.datetime,
    company: NamedNode | None,
    documents: Sequence[NamedNode],
) -> FactsOutcome:
    """Plan and compute `question` from statement facts (module docstring)."""
    try:
        planned = plan(question)
    except NoPlan as e:
        return FactsOutcome(None, [], f"not computed from facts: {e}")
    if company is None and not documents:
        return FactsOutcome(
            None, [], "not computed from facts: no company or document named", planned
        )
    book = FactBook.of(store, before=as_of, company=company, documents=documents)
    if not len(book):
        return FactsOutcome(None, [], "not computed from facts: no statement facts", planned, book)
    try:
        calc = compute(planned, book)
    except Missing as e:
        return FactsOutcome(None, [], f"not computed from facts: {e}", planned, book)
    blocks = _blocks(store, calc)
    return FactsOutcome(calc, blocks, f"computed from facts: {calc}", planned, book)


def _blocks(store: BaseStore, calc: FactCalculation) -> list[Block]:
    """One block per operand: the fact's row as its chunk holds it (else its label and
    figure), headed by its statement and page."""
    chunks = node_texts(store, list(dict.fromkeys(o.found.fact.chunk for o in calc.operands)))
    out = []
    for i, o in enumerate(calc.operands, start=1):
        f = o.found.fact
        row = _row(chunks.get(f.chunk, ""), f.label, f.printed) or f"{f.label} | {f.printed}"
        text = f"({f.where}; FY{f.year}, {f.unit}) {row}"
        out.append(Block("F", f"F{i}", text, f.iri, (f.iri,), i, None))
    return out


def _row(chunk: str, label: str, printed: str) -> str | None:
    """The line of a chunk that holds a fact's row: its label's start and its figure."""
    head = label.split(":")[-1].strip()[:20].lower()
    for line in chunk.split("\n"):
        if printed in line and head and head in line.lower():
            return line.strip()
    return None


def answer_of(calc: FactCalculation, blocks: list[Block]) -> Answer:
    """finkg's answer for its computation (module docstring)."""
    ids = [b.id for b in blocks]
    plan_ = calc.plan
    years = f"FY{plan_.first}-FY{plan_.last}" if plan_.first is not None else f"FY{plan_.year}"
    definition = plan_.definition_text or str(plan_.node)
    source = {"question": "as the question defines it", "library": "finkg's definition"}.get(
        plan_.source, "the line item"
    )
    insights = [
        {
            "text": f"{plan_.asked} for {years} = {calc.shown}; {source}: {definition}"[:300],
            "citations": ids,
        },
    ]
    insights += [
        {"text": o.text[:300], "citations": [b.id]}
        for o, b in zip(calc.operands, blocks, strict=True)
    ]
    insights += [{"text": f"note: {n}"[:300], "citations": ids} for n in calc.notes]
    return Answer.model_validate(
        {
            "summary": f"{calc.shown}: {plan_.asked}, computed by finkg from statement facts"[:400],
            "insights": insights,
            "signals": [],
            "citations": ids,
            "numbers": [
                {
                    "value": o.found.fact.printed,
                    "label": f"{o.found.fact.label} FY{o.year}"[:120],
                    "citation": b.id,
                }
                for o, b in zip(calc.operands, blocks, strict=True)
            ],
            "validation_status": calc.status,
        }
    )


def figure_block(calc: FactCalculation, blocks: list[Block]) -> Block:
    """The computed figure as one block for the reader (a yes/no question's evidence)."""
    operands = "; ".join(o.text for o in calc.operands)
    text = f"finkg computed from the statements: {calc}. Operands: {operands}"
    cites = tuple(dict.fromkeys(n for b in blocks for n in b.cites))
    return Block("F", "F1", text, cites[0] if cites else NamedNode("urn:finkg:none"), cites)


def row_check(outcome: FactsOutcome | None, claims: Sequence[str]) -> bool | None:
    """For a question about one line item in one year: whether every claimed figure is
    that fact's value (as printed, in millions, in billions); None when it cannot tell
    (no such plan, or no fact for it)."""
    if outcome is None or outcome.plan is None or outcome.book is None:
        return None
    node = outcome.plan.node
    if not isinstance(node, Item) or not claims:
        return None
    fact = outcome.book.find(node.item, node.year or outcome.plan.year, node.kind)
    if fact is None:
        return None
    value = abs(fact.value)
    wanted = {value.scaleb(-k).normalize() for k in (0, 3, 6, 9)}
    for claim in claims:
        said = values(claim)
        if not any(
            abs(v.amount).normalize() == value.normalize() or abs(v.written).normalize() in wanted
            for v in said
        ):
            return False
    return True


__all__ = ["FactsOutcome", "answer_of", "figure_block", "route", "row_check"]
