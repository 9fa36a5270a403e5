"""finkg's arithmetic for numeric questions (issue 28 item 4): the safe calculator, table
cells read from evidence text, the operation and operands read from a question, and the
answer that shows them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finkg.errors import InputError
from finkg.reader import grounding
from finkg.reader.llm import ScriptedLLM
from finkg.tasks.qa import arithmetic
from finkg.tasks.qa.arithmetic import Block, answer_of, operation_of, solve, years_in
from finkg.tasks.qa.calculator import OPERATIONS, Operand, calculate, compute
from finkg.tasks.qa.cells import figure, table_cells

TABLE = """(In millions) | 2019 | 2018 | 2017
Net sales | $1,200.0 | $1,100.0 | $1,000.0
Cost of sales | (700.0) | (650.0) | (600.0)
Gross profit | 500.0 | 450.0 | 400.0
Operating expenses
Research and development | 120 | 110 | 90
Selling, general and administrative | 200 | 190 | 180"""


def op(value: str, period: str = "", id: str = "C1") -> Operand:
    return Operand(id, value, Decimal(value.replace(",", "")), period=period)


@pytest.mark.parametrize(
    ("operation", "values", "expected"),
    [
        ("sum", ["1", "2", "3.5"], "6.5"),
        ("average", ["166", "178"], "172"),
        ("difference", ["668", "716"], "-48"),
        ("ratio", ["1", "4"], "0.25"),
        ("percent change", ["716", "668"], "-6.70"),
        ("growth rate", ["100", "121"], "21.00"),
    ],
)
def test_each_operation_computes_exactly(operation, values, expected) -> None:
    result = compute(operation, [op(v) for v in values])
    places = Decimal(expected)
    assert result.quantize(places) == places


def test_growth_rate_compounds_over_the_years_between_the_operands() -> None:
    first, last = op("100", "2019"), op("121", "2021")
    assert compute("growth rate", [first, last]).quantize(Decimal("0.01")) == Decimal("10.00")


def test_the_calculator_refuses_what_it_cannot_do() -> None:
    with pytest.raises(InputError, match="unknown operation"):
        compute("__import__('os')", [op("1"), op("2")])
    with pytest.raises(InputError, match="difference takes 2 to 2 operands"):
        compute("difference", [op("1"), op("2"), op("3")])
    with pytest.raises(InputError, match="divides by zero"):
        compute("ratio", [op("1"), op("0")])
    assert set(OPERATIONS) == {
        "sum",
        "difference",
        "ratio",
        "percent change",
        "average",
        "growth rate",
    }


def test_a_calculation_shows_its_operation_operands_and_result() -> None:
    calc = calculate("ratio", [op("296,316", "2018"), op("26,069", "2018", "C2")], percent=True)
    assert calc.formatted() == "1136.66%"
    assert str(calc) == "ratio: 296,316 [C1, 2018] / 26,069 [C2, 2018] x 100 = 1136.66%"


def test_figures_are_read_as_finance_writes_them() -> None:
    assert figure("(1,234)") == (Decimal("-1234"), "")
    assert figure("$ 3,655") == (Decimal("3655"), "$")
    assert figure("-2.5 %") == (Decimal("-2.5"), "%")
    assert figure("—") is None and figure("Net sales") is None


def test_table_cells_carry_row_column_group_period_and_scale() -> None:
    cells = table_cells(TABLE)
    rd = [c for c in cells if c.label == "Research and development"]
    assert [(c.period, str(c.value), c.group, c.scale) for c in rd] == [
        ("2019", "120", "Operating expenses", "million"),
        ("2018", "110", "Operating expenses", "million"),
        ("2017", "90", "Operating expenses", "million"),
    ]
    assert next(c for c in cells if c.label == "Cost of sales").value == Decimal("-700.0")


@pytest.mark.parametrize(
    ("question", "operation"),
    [
        ("What was the percentage change in net sales from 2018 to 2019?", "percent change"),
        ("What is the change in gross profit between 2018 and 2019?", "difference"),
        ("What was the average net sales from 2017 to 2019?", "average"),
        ("What is gross profit as a percentage of net sales in 2019?", "ratio"),
        ("What was the change in the diluted weighted-average shares?", "difference"),
        ("What is the 3-year revenue CAGR?", "growth rate"),
        ("Who is the auditor?", None),
    ],
)
def test_the_operation_is_read_from_the_question(question, operation) -> None:
    assert operation_of(question)[0] == operation


def test_a_range_of_years_stands_for_every_year_in_it() -> None:
    assert years_in("average net income from 2015 to 2019") == [
        "2015",
        "2016",
        "2017",
        "2018",
        "2019",
    ]
    assert years_in("change between FY18 and 2019") == ["2018", "2019"]


@pytest.mark.parametrize(
    ("question", "shown"),
    [
        (
            "What was the percentage change in net sales from 2018 to 2019?",
            "percent change: percent change($1,100.0 [C1, 2018], $1,200.0 [C1, 2019]) = 9.09%",
        ),
        (
            "What is the change in gross profit between 2018 and 2019?",
            "difference: 500.0 [C1, 2019] - 450.0 [C1, 2018] = 50",
        ),
        (
            "What is gross profit as a percentage of net sales in 2019?",
            "ratio: 500.0 [C1, 2019] / $1,200.0 [C1, 2019] x 100 = 41.67%",
        ),
        (
            "What was the average research and development expense from 2017 to 2019?",
            "average: average(90 [C1, 2017], 110 [C1, 2018], 120 [C1, 2019]) = 106.67",
        ),
    ],
)
def test_solve_reads_the_rows_and_columns_the_question_names(question, shown) -> None:
    calc = solve(question, [Block("C1", TABLE)])
    assert calc is not None and str(calc) == shown


def test_with_no_table_there_is_nothing_to_compute() -> None:
    assert solve("What was the change in revenue?", [Block("C1", "Revenue rose.")]) is None


def test_close_rows_are_decided_by_the_reader_scoring_letters() -> None:
    table = "(In millions) | 2019 | 2018\nNet revenue | 10 | 8\nRevenue, net | 11 | 9"

    def scores(messages, options):
        assert options == ["A", "B"]  # one letter per close row: single-token options
        return {"A": -3.0, "B": -0.1}

    calc = solve(
        "What was the change in total revenue from 2018 to 2019?",
        [Block("C1", table)],
        llm=ScriptedLLM(scores=scores),
    )
    assert calc is not None and calc.operands[0].label == "Revenue, net"


def test_the_answer_cites_each_operand_and_passes_the_numeric_check() -> None:
    calc = solve("What is the change in gross profit between 2018 and 2019?", [Block("C1", TABLE)])
    assert calc is not None
    answer = answer_of(calc)
    assert answer.summary.startswith("50 (difference of Gross profit")
    assert [(n.value, n.citation) for n in answer.numbers] == [("500.0", "C1"), ("450.0", "C1")]
    n = grounding.numeric_consistency((c.value, TABLE) for c in answer.numbers)
    assert n == 1.0
    assert answer.insights[0].citations == ["C1"]


def test_the_module_names_no_data_set() -> None:
    import inspect

    source = inspect.getsource(arithmetic).lower()
    assert "tat-qa" not in source and "financebench" not in source


def test_a_metric_the_question_defines_with_one_operation_is_computed() -> None:
    q = (
        "What is the FY2019 operating cash flow ratio? Operating cash flow ratio is defined "
        "as: cash from operations / total current liabilities. Round to two decimal places."
    )
    assert arithmetic.defined(q) == ("ratio", ["cash from operations", "total current liabilities"])
    table = (
        "(In millions) | 2019 | 2018\nTotal current liabilities | 3,527 | 2,811\n"
        "Net cash provided by operating activities | 2,913 | 2,200"
    )
    calc = solve(q, [Block("C1", table)])
    assert calc is not None and calc.formatted() == "0.83"
    longer = "ROA is defined as: net income / (average total assets between FY2018 and FY2019)."
    assert arithmetic.defined(longer) is None  # an average inside: left to the reader
