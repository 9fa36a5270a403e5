"""An answer's scores and status (paper 003): groundedness, numeric consistency, JSON
validity, S_comp and the validation status, recomputed by finkg whatever the reader said;
and the memory bank's answer as it stands."""

from __future__ import annotations

from collections.abc import Sequence

from finkg.reader import grounding
from finkg.reader.read import ReadResult
from finkg.reader.schemas import Answer
from finkg.tasks.qa.blocks import Block
from finkg.tasks.qa.types import Part


def bank_answer(parts: list[Part], blocks: list[Block]) -> Answer:
    """The bank's answers as they stand, each citing its entry's block."""
    insights = [
        {"text": f"{p.question.text} {p.answer}", "citations": [b.id]}
        for p, b in zip(parts, blocks, strict=True)
    ]
    return Answer.model_validate(
        {
            "summary": " ".join(str(p.answer) for p in parts),
            "insights": insights,
            "signals": [],
            "citations": [b.id for b in blocks],
            "numbers": [],
            "validation_status": "High",
        }
    )


def scores_of(
    output: Answer | None,
    result: ReadResult | None,
    blocks: list[Block],
    derived: Sequence[str] = (),
) -> tuple[dict[str, float], str]:
    """G, Gc, N, J, S_comp and the status, from the answer and the evidence it had;
    `derived`: finkg's own calculations, grounded only when every number claim passes N."""
    json_valid = output is not None and (result is None or result.json_valid)
    if output is None:
        scores = {"g": 0.0, "gc": 0.0, "n": 0.0, "j": 0.0}
        scores["s_comp"] = 0.0
        return scores, "Critical Issues"
    by_id = {b.id: b.text for b in blocks}
    claimed = " ".join([output.summary, *(i.text for i in output.insights)])
    n = grounding.numeric_consistency((c.value, by_id.get(c.citation)) for c in output.numbers)
    evidence = list(by_id.values()) + (list(derived) if n == 1.0 else [])
    g = grounding.groundedness(claimed, evidence)
    j = 1.0 if json_valid else 0.0
    s = grounding.s_comp(g.g, j, n)
    uncited = sum(1 for i in output.insights if not i.citations)
    status = grounding.validation_status(
        s=s, gc=g.gc, json_valid=json_valid, uncited_insights=uncited
    )
    return {"g": g.g, "gc": g.gc, "n": n, "j": j, "s_comp": s}, status


def verified_status(status: str, verified: bool | None) -> str:
    """What the status says once finkg has checked the figure against statement facts:
    High only for an answer it verified (computed from facts whose formula and operands
    are the ones asked, or a reader's figure equal to the fact asked for); a grounded
    answer it could not verify is Medium at best; one whose figure is not the fact asked
    for needs review. Groundedness shows that an answer's words are in its evidence, not
    that it is right: of the reader's answers grounded High on FinanceBench, 4 of 23 were.

    >>> verified_status("High", None), verified_status("High", True)
    ('Medium', 'High')
    >>> verified_status("Medium", False)
    'Requires Review'
    """
    if verified is False and status in ("High", "Medium", "Low"):
        return "Requires Review"
    if verified is None and status == "High":
        return "Medium"
    if verified is True and status == "High":
        return "High"
    return status


__all__ = ["bank_answer", "scores_of", "verified_status"]
