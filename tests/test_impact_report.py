"""The impact benchmark's findings in words (`benchmarks.impact_report._plainly`)."""

from __future__ import annotations

from benchmarks.impact_report import _plainly
from finkg.evaluation.stats import Interval

ZERO = Interval(0.0, 0.0, 0.0, 975)


def test_a_rule_deciding_says_the_memory_was_not_measured() -> None:
    said = "\n".join(_plainly({}, "tone", {"cited": (ZERO, ZERO)}))
    assert "`cited` minus `static`: +0.000" in said
    assert "rule `tone` reads no reader score" in said


def test_a_reader_head_deciding_leaves_the_memory_verdict_alone() -> None:
    said = "\n".join(_plainly({}, "prior", {"cited": (ZERO, ZERO)}))
    assert "`cited` minus `static`" in said
    assert "reads no reader score" not in said
