"""Reading a filing question before retrieval (issue 28): the core question, the statements
and years it names or implies, the glossary words and the line-item sub-queries."""

from __future__ import annotations

import pytest

from finkg.retrieval.plan.query_plan import plan


@pytest.mark.parametrize(
    ("question", "core"),
    [
        (
            "What is the FY2019 total amount of inventories for Best Buy? Answer in USD "
            "millions. Base your judgments on the information provided primarily in the "
            "balance sheet.",
            "What is the FY2019 total amount of inventories for Best Buy?",
        ),
        (
            "Does AMD have a healthy liquidity profile based on its quick ratio for FY22? If "
            "the quick ratio is not relevant to measure liquidity, please state that and "
            "explain why.",
            "Does AMD have a healthy liquidity profile based on its quick ratio for FY22?",
        ),
        (
            "You are an investment banker and your only resource(s) to answer the following "
            "question is (are): the income statement. Here's the question: what is FY2020 "
            "net income?",
            "what is FY2020 net income?",
        ),
    ],
)
def test_answering_instructions_leave_the_query(question, core) -> None:
    assert plan(question).core == core


def test_named_statements_win_over_implied_ones() -> None:
    named = plan("Using the cash flow statement, what was FY2020 revenue?")
    assert named.statements == ("cash flow",)
    implied = plan("What was FY2020 revenue?")
    assert implied.statements == ("income",) and implied.years == (2020,)
    assert "net sales" in implied.expansion


def test_a_defined_metric_gives_one_part_per_line_item() -> None:
    p = plan(
        "What is the FY2019 inventory turnover ratio? Inventory turnover ratio is defined "
        "as: (FY2019 COGS) / (average inventory between FY2018 and FY2019)."
    )
    assert [part.statements for part in p.parts] == [("income",), ("balance",)]
    assert all("2019" in part.text for part in p.parts)


def test_a_glossary_ratio_gives_its_line_items() -> None:
    p = plan("Does Acme have positive working capital based on FY2022 data?")
    assert [part.text for part in p.parts] == [
        "total current assets 2022",
        "total current liabilities 2022",
    ]
    assert p.statements == ("balance",)
