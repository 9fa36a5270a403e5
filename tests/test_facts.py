"""Statement facts (issue 44): a document's primary statements read into facts at ingest,
stored with their chunk, period and time, listed by `finkg facts`, and numeric questions
computed from them by `finkg ask` with every operand cited; what the facts cannot answer is
left to the reader, and nothing available after the answer's instant is read."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.kg.facts.concepts import by_name
from finkg.kg.facts.read import is_primary, read_facts
from finkg.kg.facts.stored import stored_facts
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.iri import mint
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG
from finkg.retrieval.index.live import node_texts
from finkg.shapes.validate import validate_store
from finkg.tasks.qa.ask import QA
from finkg.tasks.qa.fact_book import FactBook
from finkg.tasks.qa.facts_route import FactsOutcome, route, row_check
from finkg.tasks.qa.formula import Unparsed, parse

NY = ZoneInfo("America/New_York")
AFTER = dt.datetime(2020, 6, 1, tzinfo=NY)  # the filing below is available from 2020-02-16

STATEMENTS = (Path(__file__).parent / "data" / "acme-2019-10k.txt").read_text()


def _facts(text: str = STATEMENTS) -> dict[tuple[str, int], object]:
    return {
        (f.concept.value.rsplit("#", 1)[1], f.period.fiscal_year): f
        for f in read_facts(text)
        if f.concept is not None
    }


def test_the_statements_figures_are_read_with_their_line_item_period_scale_and_sign() -> None:
    facts = _facts()
    inventories = facts["Inventories", 2019]
    assert inventories.value == Decimal("200000000")  # type: ignore[attr-defined]
    assert inventories.period.end == dt.date(2019, 12, 31)  # type: ignore[attr-defined]
    assert inventories.period.duration is None and inventories.kind == "balance"  # type: ignore[attr-defined]
    revenue = facts["Revenue", 2017]
    assert (revenue.value, revenue.period.duration) == (Decimal("900000000"), "P1Y")  # type: ignore[attr-defined]
    capex = facts["CapitalExpenditures", 2019]
    assert capex.value == Decimal("-100000000") and capex.printed == "(100)"  # type: ignore[attr-defined]
    eps = facts["EarningsPerShareBasic", 2019]  # "Basic" under "Earnings per share:"
    assert (eps.value, eps.unit, eps.label) == (  # type: ignore[attr-defined]
        Decimal("1.50"),
        "USD/share",
        "Earnings per share: Basic",
    )
    equity = facts["StockholdersEquity", 2018]
    assert equity.value == Decimal("620000000")  # type: ignore[attr-defined]
    # the span is the row's, in the text
    row = STATEMENTS[inventories.start : inventories.end]  # type: ignore[attr-defined]
    assert row == "Inventories | 200 | 180"


def test_only_primary_statements_are_read() -> None:
    assert is_primary("CONSOLIDATED BALANCE SHEETS")
    assert is_primary("3M Company and Subsidiaries Consolidated Statement of Income")
    assert is_primary(
        "Consolidated Statements of Income Corning Incorporated and Subsidiary Companies"
    )
    assert not is_primary("Consolidated Statements of Operations Data")  # selected data
    assert not is_primary("NOTE 6. Supplemental Income Statement Information")
    assert not is_primary("Amounts recognized in the Consolidated Balance Sheet as of")
    selected = STATEMENTS.replace(
        "Consolidated Balance Sheets\n", "Consolidated Balance Sheets Data\n"
    )
    assert ("Inventories", 2019) not in _facts(selected)


def test_a_total_printed_without_a_label_is_its_headings() -> None:
    text = (
        "Consolidated Statements of Operations\n(In thousands)\nYear Ended December 31,\n"
        "2020 | 2019\nRevenues\nCasino | $2,871 | $6,517\nRooms | 830 | 2,322\n"
        "3,701 | 8,839\nExpenses\nCasino | 1,701 | 3,623\n"
        "See notes to consolidated financial statements."
    )
    revenue = _facts(text)["Revenue", 2020]
    assert revenue.value == Decimal("3701000") and "total row" in revenue.label  # type: ignore[attr-defined]


def test_the_expression_language_names_what_it_cannot_read() -> None:
    result = parse("365 * (average moon dust between FY2018 and FY2019) / revenue")
    assert isinstance(result, Unparsed) and "moon dust" in result.phrase


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> BaseStore:
    root = tmp_path_factory.mktemp("facts")
    s = open_store(root / "store")
    init_store(s)
    (root / "companies.csv").write_text("ticker,name\nACME,Acme Widgets (synthetic)\n")
    ingest(
        s,
        "companies",
        loader("companies"),
        [root / "companies.csv"],
        IngestOptions(graphs=s.graphs),
    )
    doc = root / "acme-2019-10k.txt"
    doc.write_text(STATEMENTS)
    meta = {"published": "2020-02-15", "tickers": ["ACME"], "title": "Acme 2019 annual report"}
    (root / "acme-2019-10k.txt.meta.json").write_text(json.dumps(meta))
    report = ingest_documents(s, [doc])
    assert report.ready == 1 and report.facts > 40
    return s


ACME = mint("company", "ACME")


def test_stored_facts_cite_the_chunk_that_holds_their_figure(store: BaseStore) -> None:
    facts = stored_facts(store, before=AFTER, company=ACME)
    assert len(facts) > 40
    texts = node_texts(store, list({f.chunk for f in facts}))
    assert all(f.printed in texts[f.chunk] for f in facts)
    assert {f.available_at for f in facts} == {dt.datetime(2020, 2, 16, tzinfo=NY)}
    assert validate_store(store).conforms


def test_no_fact_is_read_before_its_filing_was_available(store: BaseStore) -> None:
    before = dt.datetime(2020, 2, 15, 23, 0, tzinfo=NY)
    assert stored_facts(store, before=before, company=ACME) == []
    question = "What is the FY2019 current ratio for Acme?"
    assert QA.facts_only(store).answer_from_facts(question, as_of=before, company=ACME) is None
    asked = QA.facts_only(store).answer_from_facts(question, as_of=AFTER, company=ACME)
    assert asked is not None


DPO = (
    "What is Acme's FY2019 days payable outstanding (DPO)? DPO is defined as: 365 * (average "
    "accounts payable between FY2018 and FY2019) / (FY2019 COGS + change in inventory between "
    "FY2018 and FY2019). Round your answer to two decimal places."
)


def test_a_metric_the_question_defines_is_computed_from_cited_facts(store: BaseStore) -> None:
    asked = QA.facts_only(store).answer_from_facts(DPO, as_of=AFTER, company=ACME)
    assert asked is not None and asked.facts is not None
    # 365 x (120 + 100) / 2 / (700 + (200 - 180))
    assert asked.summary.startswith("55.76 days")
    assert asked.status == "High" and asked.scores["n"] == 1.0
    cited = [b.node for b in asked.blocks]
    assert len(cited) == 5  # accounts payable and inventories of both years, COGS of 2019
    assert asked.iri is not None
    path = f"<{FKG.citation.value}>/<{FKG.cites.value}>"
    rows = store.select(f"SELECT ?c WHERE {{ GRAPH ?g {{ <{asked.iri.value}> {path} ?c }} }}")
    assert {r["c"] for r in rows} == set(cited)  # type: ignore[index]


def test_a_library_metric_is_quoted_and_says_how_sure_finkg_is(store: BaseStore) -> None:
    qa = QA.facts_only(store)
    current = qa.answer_from_facts(
        "What is the FY2019 current ratio for Acme?", as_of=AFTER, company=ACME
    )
    assert current is not None and current.summary.startswith("2.17")
    assert current.status == "High"
    quick = qa.answer_from_facts(
        "What is Acme's quick ratio for FY2019?", as_of=AFTER, company=ACME
    )
    assert quick is not None and quick.summary.startswith("1.50")  # (650 - 200) / 300
    assert quick.status == "Medium"  # one of several definitions in use, said in a note
    assert any("current assets less inventories" in i.text for i in quick.output.insights)  # type: ignore[union-attr]


def test_averages_over_years_and_growth(store: BaseStore) -> None:
    qa = QA.facts_only(store)
    capex = qa.answer_from_facts(
        "What is the FY2017 - FY2019 3 year average of capex as a % of revenue for Acme? "
        "Answer in units of percents and round to one decimal place.",
        as_of=AFTER,
        company=ACME,
    )
    assert capex is not None and capex.summary.startswith(
        "8.9%"
    )  # mean of 100/1200, 95/1000, 80/900
    growth = qa.answer_from_facts(
        "What is the FY2018 - FY2019 total revenue growth rate for Acme? Answer in units of "
        "percents and round to one decimal place.",
        as_of=AFTER,
        company=ACME,
    )
    assert growth is not None and growth.summary.startswith("20.0%")


def test_a_missing_operand_leaves_the_question_to_the_reader(store: BaseStore) -> None:
    question = "What is the FY2019 interest coverage ratio for Acme?"  # no interest expense line
    assert QA.facts_only(store).answer_from_facts(question, as_of=AFTER, company=ACME) is None
    outcome = route(store, question, as_of=AFTER, company=ACME, documents=())
    assert outcome.calculation is None and "interest expense in FY2019" in outcome.note


def test_a_readers_figure_counts_only_as_the_line_item_and_year_asked(store: BaseStore) -> None:
    question = (
        "What is the year end FY2019 total amount of inventories for Acme? Answer in USD millions."
    )
    outcome = route(store, question, as_of=AFTER, company=ACME, documents=())
    assert outcome.calculation is not None  # finkg answers this one itself; the check reads it too
    assert row_check(outcome, ["132 million USD"]) is False  # a number that is not the fact
    assert row_check(outcome, ["$200 million"]) is True
    assert row_check(outcome, ["180"]) is False  # the line item, the year before
    empty = FactsOutcome(None, [], "")
    assert row_check(empty, ["200"]) is None


def test_a_fallback_line_item_is_said_and_lowers_the_status(store: BaseStore) -> None:
    book = FactBook.of(store, before=AFTER, company=ACME)
    found = book.lookup(by_name("NetIncomeAttributableToParent"), 2019)
    assert found is not None and found.instead is not None and found.instead.name == "NetIncome"


def test_finkg_facts_lists_them_as_csv(store: BaseStore) -> None:
    result = CliRunner().invoke(
        cli,
        ["facts", "ACME", "--period", "FY2019", "--concept", "Inventories", "--format", "csv"],
        env={"FINKG_STORE": store.location},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["line_item"], r["value"], r["fiscal_year"]) for r in rows] == [
        ("Inventories", "200000000", "2019")
    ]
    bad = CliRunner().invoke(
        cli, ["facts", "ACME", "--concept", "Moon"], env={"FINKG_STORE": store.location}
    )
    assert bad.exit_code == 2 and "no such core line item" in bad.output


SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")


@needs_shared
def test_a_real_10k_in_inline_xbrl_html_gives_its_statement_facts() -> None:
    import gzip

    from finkg.kg.ingest.doctext import html_to_text

    raw = gzip.decompress((SHARED / "event/edgar/html/aapl-10-k-2024-11-01.html.gz").read_bytes())
    facts = _facts(html_to_text(raw))
    assert facts["Revenue", 2024].value == Decimal("391035000000")  # type: ignore[attr-defined]
    assert facts["NetIncome", 2024].value == Decimal("93736000000")  # type: ignore[attr-defined]
    assert facts["Assets", 2024].value == Decimal("364980000000")  # type: ignore[attr-defined]
    eps = facts["EarningsPerShareDiluted", 2024]
    assert (eps.value, eps.unit) == (Decimal("6.08"), "USD/share")  # type: ignore[attr-defined]
    shares = facts["SharesDiluted", 2024]  # "which are reflected in thousands"
    assert (shares.value, shares.unit) == (Decimal("15408095000"), "shares")  # type: ignore[attr-defined]


@needs_shared
def test_a_real_10k_pdf_gives_facts_on_the_page_that_prints_them(tmp_path: Path) -> None:
    pdf = SHARED / "qa/financebench/pdfs/BESTBUY_2019_10K.pdf"
    store = open_store(None)
    init_store(store)
    (tmp_path / "c.csv").write_text("ticker,name\nBBY,Best Buy\n")
    ingest(
        store,
        "companies",
        loader("companies"),
        [tmp_path / "c.csv"],
        IngestOptions(graphs=store.graphs),
    )
    (tmp_path / pdf.name).symlink_to(pdf)
    (tmp_path / (pdf.name + ".meta.json")).write_text(
        '{"published": "2019-03-28", "tickers": ["BBY"]}'
    )
    assert ingest_documents(store, [tmp_path / pdf.name]).ready == 1
    facts = stored_facts(store, before=AFTER, company=mint("company", "BBY"), year=2019)
    inventories = next(f for f in facts if f.concept == by_name("Inventories").concept)
    assert (inventories.value, inventories.page) == (Decimal("5409000000"), 52)
    from finkg.kg.ingest.doctext import pdf_pages

    page = pdf_pages(pdf.read_bytes())[inventories.page - 1]
    assert "Merchandise inventories | 5,409 | 5,209" in page
