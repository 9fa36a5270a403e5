"""What a filing's text holds (issue 28): its financial statements found by their titles, with
the period and units line each table's rows belong to; PDF table rows kept on one line."""

from __future__ import annotations

import pytest

from finkg.kg.ingest.doctext import layout_line
from finkg.kg.statements import section_at, statement_sections, table_sections, title_kind

FILING = """Index to Financial Statements
Consolidated Statements of Income 48
Consolidated Balance Sheets 50

Acme Corp
Consolidated Statements of Income
Years ended December 31
(Millions, except per share) | 2022 | 2021 | 2020
Net sales | $34,229 | $35,355 | $32,184
Net income | 5,777 | 5,921 | 5,449
The accompanying notes are an integral part of this statement.

Management discussed the year in prose here.

CONSOLIDATED BALANCE SHEETS
At December 31
(Millions) | 2022 | 2021
Total assets | 46,455 | 47,072
See Notes to Consolidated Financial Statements."""


def test_statements_are_found_by_their_titles_not_their_index_entries() -> None:
    sections = statement_sections(FILING)
    assert [(s.kind, s.title, s.years) for s in sections] == [
        ("income", "Consolidated Statements of Income", (2022, 2021, 2020)),
        ("balance", "CONSOLIDATED BALANCE SHEETS", (2022, 2021)),
    ]
    income = sections[0]
    assert FILING[income.start : income.end].endswith("integral part of this statement.")
    prose = FILING.index("Management discussed")
    assert section_at(sections, prose, prose + 20) is None
    row = FILING.index("Net income")
    assert section_at(sections, row, row + 10) is income
    assert income.label.startswith("Consolidated Statements of Income · Years ended")


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("Consolidated Statements of Cash Flows", "cash flow"),
        ("Condensed Consolidated Statements of Operations (Unaudited)", "income"),
        ("Consolidated Statements of Financial Position", "balance"),
        ("Consolidated Statements of Shareholders' Equity", "equity"),
        ("Consolidated Statements of Comprehensive Income", "comprehensive"),
        ("Consolidated Statements of Cash Flows | 52", None),
        ("The statements of cash flows are prepared under GAAP.", None),
    ],
)
def test_title_kinds(line, kind) -> None:
    assert title_kind(line) == kind


def test_pdf_layout_lines_become_table_rows_and_prose_stays_prose() -> None:
    assert layout_line("  Total assets      $   46,455    $  47,072") == (
        "Total assets | $46,455 | $47,072"
    )
    assert layout_line("Gain on divestitures   ( 2,724 )    —    (389)") == (
        "Gain on divestitures | (2,724) | — | (389)"
    )
    assert layout_line("Revenue  grew  in  2022  as  demand  rose.") == (
        "Revenue grew in 2022 as demand rose."
    )


def test_other_tables_are_labelled_by_their_caption_and_header() -> None:
    text = (
        "Segment results\n"
        "(In millions) | 2022 | 2021\n"
        "Americas | 500 | 450\n"
        "Europe | 300 | 310\n"
        "Asia | 200 | 150\n"
        "\n"
        "We sell in three regions, as the table above shows in some detail for the reader."
    )
    (table,) = table_sections(text)
    assert table.kind == "table" and table.label == "Segment results · (In millions) | 2022 | 2021"
    asia = text.index("Asia")
    assert section_at([table], asia, asia + 10) is table
    assert table.years == (2022, 2021)
