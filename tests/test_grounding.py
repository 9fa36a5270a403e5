"""Groundedness, numeric consistency, S_comp and validation status (paper 003)."""

from __future__ import annotations

import pytest

from finkg.reader.grounding import (
    groundedness,
    numeric_consistency,
    s_comp,
    validation_status,
    values,
)

EVIDENCE = [
    "Apple reported quarterly revenue of $58.3 billion, up 1 percent, and diluted EPS of $2.55.",
    "The board declared a dividend of $0.82 per share and authorized $50 billion of buybacks.",
]


def test_equal_values_match_across_spellings() -> None:
    assert values("$58.3 billion") == values("$58.3bn") == values("58.30 billion dollars")
    assert values("1,234.50") == values("1234.5")
    assert values("12%") == values("12 percent")
    assert values("$58.3 billion") != values("$58.4 billion")
    assert values("5 m of cable") == values("5")  # a bare m scales money only


def test_a_faithful_answer_is_fully_grounded() -> None:
    g = groundedness(
        "Quarterly revenue was up 1% at $58.3bn; the dividend is $0.82 per share.", EVIDENCE
    )
    assert g.gc == 1.0 and g.critical == 3
    assert g.g == 1.0, g.ungrounded


def test_a_wrong_number_is_ungrounded_even_when_the_words_are() -> None:
    g = groundedness("Revenue was $58.4 billion.", EVIDENCE)
    assert g.gc == 0.0
    assert "USD58400000000" in g.ungrounded
    assert 0 < g.g < 1


def test_invented_words_lower_groundedness() -> None:
    g = groundedness("Revenue collapsed because of a hurricane.", EVIDENCE)
    assert {"collaps", "hurricane"} <= set(g.ungrounded)


def test_numeric_consistency_checks_the_cited_text() -> None:
    claims = [("$2.55", EVIDENCE[0]), ("$50 billion", EVIDENCE[0]), ("$0.82", None)]
    assert numeric_consistency(claims) == pytest.approx(1 / 3)
    assert numeric_consistency([]) == 1.0


REPORT = (
    "Fiscal 2018 was a year of steady progress for Acme Widgets. Total revenue reached "
    "$4,990.6 million, up 15.2% from $4,331.9 million in fiscal 2017."
)
TABLE = "Consolidated results (in millions of dollars)\nTotal revenue | 4,990.6 | 4,331.9\n"


def test_a_number_claimed_without_its_unit_matches_the_figure_it_cites() -> None:
    """`finkg ask` answered "$4,990.6 million", right, and scored N 0.00: the reader's number
    claim was "4990.6" (no "$", no "million") and the cited text says "$4,990.6 million"."""
    assert numeric_consistency([("4990.6", REPORT)]) == 1.0
    assert numeric_consistency([("4,990.6", REPORT), ("15.2", REPORT)]) == 1.0
    assert numeric_consistency([("$4,990.6 million", REPORT)]) == 1.0
    assert numeric_consistency([("4990.7", REPORT)]) == 0.0  # another figure
    assert numeric_consistency([("$4,990.6 billion", REPORT)]) == 0.0  # another scale
    assert numeric_consistency([("4990.6%", REPORT)]) == 0.0  # a percentage is not money


def test_a_table_in_stated_units_grounds_a_number_with_its_scale() -> None:
    assert numeric_consistency([("$4,990.6 million", TABLE)]) == 1.0
    assert numeric_consistency([("$4.9906 billion", TABLE)]) == 1.0
    assert numeric_consistency([("$4,990.6 billion", TABLE)]) == 0.0
    # without a statement of units a bare 5 grounds no amount of money
    assert numeric_consistency([("$5 million", "We operate in 5 segments.")]) == 0.0


def test_s_comp_and_statuses() -> None:
    assert s_comp(1.0, 1.0, 1.0) == 1.0
    assert s_comp(0.8, 1.0, 0.5) == pytest.approx(0.775)
    assert validation_status(s=0.9, gc=1.0, json_valid=True) == "High"
    assert validation_status(s=0.75, gc=1.0, json_valid=True) == "Medium"
    assert validation_status(s=0.6, gc=1.0, json_valid=True) == "Low"
    assert validation_status(s=0.9, gc=0.9, json_valid=True) == "Requires Review"
    assert (
        validation_status(s=0.9, gc=1.0, json_valid=True, uncited_insights=1) == "Requires Review"
    )
    assert validation_status(s=0.9, gc=0.4, json_valid=True) == "Critical Issues"
    assert validation_status(s=0.9, gc=1.0, json_valid=False) == "Critical Issues"
