"""The memory bank (paper 002 §3.2, §4.4): RDF entries as of an instant, and the look-up.

Acme and Zeta are in the market graph, filing passages (only what the checks read: when each
became available) in the filings graph; unit tests embed with HashEmbedder, one `model`
test with the packaged MiniLM.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pyoxigraph as ox
import pytest
from pyoxigraph import Literal, NamedNode

from finkg.errors import InputError, TimestampError
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, RDF, RDFS, XSD
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.memory import bank
from finkg.retrieval.memory.bank import BankEntry, Matcher
from finkg.retrieval.plan.questions import normalize, parse_period

ID = "https://w3id.org/finkg/id/"
NY = ZoneInfo("America/New_York")
ACME, ZETA = ID + "company/ACME", ID + "company/ZETA"
PASSAGES = {  # evidence and when it became available
    "p-10q": dt.datetime(2020, 10, 30, 16, 5, tzinfo=NY),
    "p-10k": dt.datetime(2021, 2, 1, 16, 5, tzinfo=NY),
    "p-10ka": dt.datetime(2021, 6, 1, 16, 5, tzinfo=NY),
    "p-zeta": dt.datetime(2021, 2, 20, 9, 0, tzinfo=NY),
}


def entry(company: str, question: str, period: str, answer: str, passage: str) -> BankEntry:
    at = PASSAGES[passage]
    return BankEntry(
        company=company,
        question=question,
        period=period,
        answer=answer,
        available_at=at,
        evidence=(ID + passage,),
    )


ENTRIES = [
    entry(ACME, "What was the total revenue?", "2020Q3", "$310 million", "p-10q"),
    entry(ACME, "What was the total revenue?", "FY2020", "$1.2 billion", "p-10k"),
    entry(ACME, "What was the net income?", "FY2020", "$150 million", "p-10k"),
    entry(ACME, "How many employees did the company have?", "FY2020", "4,100", "p-10k"),
    entry(ACME, "What was the total revenue?", "FY2020", "$1.19 billion", "p-10ka"),  # restated
    entry(ZETA, "What was the total revenue?", "FY2020", "$80 million", "p-zeta"),
]
REV = "What was the total revenue of Acme Widgets in FY2020?"


@pytest.fixture
def filled(store: BaseStore) -> BaseStore:
    market = store.graphs.market
    quads = []
    for iri, label, ticker in ((ACME, "Acme Widgets Inc", "ACME"), (ZETA, "Zeta Corp", "ZETA")):
        node = NamedNode(iri)
        quads += [
            ox.Quad(node, RDF.type, FKG.Company, market),
            ox.Quad(node, RDFS.label, Literal(label), market),
            ox.Quad(node, FKG.ticker, Literal(ticker), market),
        ]
    for passage, at in PASSAGES.items():
        stamp = Literal(at.isoformat(), datatype=XSD.dateTime)
        node = NamedNode(ID + passage)
        quads += [
            ox.Quad(node, FKG.availableAt, stamp, store.graphs.filings),
            ox.Quad(node, FKG.sourceFamily, FKG.SecFiling, store.graphs.filings),
        ]
    store.write(add=quads, note="fixture")
    assert bank.add_entries(store, ENTRIES) == len(ENTRIES)
    return store


def test_entries_round_trip_with_company_names(filled: BaseStore) -> None:
    stored = bank.entries(filled)
    assert stored == sorted(ENTRIES, key=BankEntry.key)
    assert {e.names for e in stored if e.company == ACME} == {("ACME", "Acme Widgets Inc")}
    assert len(bank.entries(filled, company=ZETA)) == 1


def test_adding_twice_adds_no_triples(filled: BaseStore) -> None:
    before = len(list(filled.quads(filled.graphs.memory)))
    generation = filled.generation()
    assert bank.add_entries(filled, ENTRIES) == 0
    assert len(list(filled.quads(filled.graphs.memory))) == before
    assert filled.generation() == generation


def test_as_of_never_returns_what_was_not_yet_knowable(filled: BaseStore) -> None:
    matcher = Matcher(HashEmbedder())
    q3 = "What was Acme's total revenue in Q3 2020?"
    at = PASSAGES["p-10q"]
    assert bank.lookup(filled, q3, matcher=matcher, before=at) is None  # available AT, not before
    found = bank.lookup(filled, q3, matcher=matcher, before=at + dt.timedelta(seconds=1))
    assert found is not None and found.entry.answer == "$310 million"
    assert [e.period for e in bank.entries(filled, before=dt.datetime(2021, 1, 1, tzinfo=NY))] == [
        "2020Q3"
    ]
    # the restatement replaces the answer only once it is knowable
    march = dt.datetime(2021, 3, 1, tzinfo=NY)
    assert bank.lookup(filled, REV, matcher=matcher, before=march).entry.answer == "$1.2 billion"  # type: ignore[union-attr]
    july = dt.datetime(2021, 7, 1, tzinfo=NY)
    assert bank.lookup(filled, REV, matcher=matcher, before=july).entry.answer == "$1.19 billion"  # type: ignore[union-attr]


def test_the_exact_question_fires_every_matcher(filled: BaseStore) -> None:
    found = bank.match(REV, bank.entries(filled), embedder=HashEmbedder())
    assert found is not None
    assert found.entry.answer == "$1.19 billion" and found.period == "FY2020"
    assert found.fired == ("subsequence", "bm25", "semantic")
    assert found.scores["subsequence"] == pytest.approx(1.0)
    assert found.normalized_query == "what was total revenue"


def test_a_paraphrase_matches_through_the_embedder_alone(filled: BaseStore) -> None:
    query = "Acme's revenue (total), fiscal 2020: what was that?"
    off = {"tau_seq": 1.0, "tau_bm25": 1.0}  # only the semantic matcher can fire
    found = bank.match(query, bank.entries(filled), embedder=HashEmbedder(), tau_sem=0.8, **off)
    assert found is not None and found.fired == ("semantic",)
    assert found.entry.question == "What was the total revenue?"
    assert found.scores["semantic"] > 0.8 > found.scores["subsequence"]


def test_an_unrelated_question_does_not_match(filled: BaseStore) -> None:
    found = bank.match(
        "Who was Acme's chief executive in FY2020?", bank.entries(filled), embedder=HashEmbedder()
    )
    assert found is None


@pytest.mark.parametrize(
    "query",
    [
        "What was the total revenue of Acme Widgets in FY2019?",  # no entry for the period
        "What was the total revenue of Acme Widgets in Q2 2020?",
        "What was the total revenue of Acme Widgets?",  # no period named
        "Acme total revenue, FY2019 vs FY2020?",  # two periods named
    ],
)
def test_a_wrong_or_missing_period_does_not_match(filled: BaseStore, query: str) -> None:
    assert bank.match(query, bank.entries(filled), embedder=HashEmbedder()) is None


def test_the_period_and_company_must_agree(filled: BaseStore) -> None:
    entries, hashed = bank.entries(filled), HashEmbedder()
    zeta = bank.match("What was ZETA's total revenue in fiscal 2020?", entries, embedder=hashed)
    assert zeta is not None and zeta.entry.answer == "$80 million"
    nameless = "What was the total revenue in FY2020?"
    assert bank.match(nameless, entries, embedder=hashed) is None  # Acme or Zeta?
    acme_only = bank.entries(filled, company=ACME)
    assert bank.match(nameless, acme_only, embedder=hashed).entry.company == ACME  # type: ignore[union-attr]
    q3 = bank.match(nameless, acme_only, embedder=hashed, period="2020Q3")
    assert q3 is not None and q3.entry.answer == "$310 million"


def test_a_conflicting_or_unsupported_entry_is_refused(filled: BaseStore) -> None:
    changed = entry(ACME, "What was the net income?", "FY2020", "$151 million", "p-10k")
    with pytest.raises(InputError, match=r"conflicts.*\(got '\$151 million'\)"):
        bank.add_entries(filled, [changed])
    unknown = BankEntry(
        company=ACME,
        question="What was the net income?",
        period="FY2019",
        answer="$90 million",
        available_at=PASSAGES["p-10k"],
        evidence=(ID + "p-nowhere",),
    )
    with pytest.raises(InputError, match="not stored evidence"):
        bank.add_entries(filled, [unknown])
    early = BankEntry(
        company=ACME,
        question="What was the net income?",
        period="FY2021",
        answer="$170 million",
        available_at=PASSAGES["p-10k"] - dt.timedelta(days=1),
        evidence=(ID + "p-10k",),
    )
    with pytest.raises(bank.BankEntryRejected, match="fsh:BankEntry"):
        bank.add_entries(filled, [early])


def test_entries_and_thresholds_are_checked_when_built() -> None:
    good = {
        "company": ACME,
        "question": "What was the total revenue?",
        "period": "FY2020",
        "answer": "$1",
        "available_at": PASSAGES["p-10k"],
        "evidence": (ID + "p-10k",),
    }
    with pytest.raises(TimestampError, match="no zone"):
        BankEntry(**good | {"available_at": dt.datetime(2021, 2, 1)})  # noqa: DTZ001
    with pytest.raises(InputError, match=r"period: .*\(got 'fiscal 2020'\)"):
        BankEntry(**good | {"period": "fiscal 2020"})
    with pytest.raises(InputError, match="evidence"):
        BankEntry(**good | {"evidence": ()})
    for option, value in (("tau_seq", 0), ("tau_bm25", 1.5), ("tau_sem", "high")):
        with pytest.raises(InputError, match=rf"{option}: .*\(got {value!r}\)"):
            Matcher(HashEmbedder(), **{option: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("revenue in FY2020", "FY2020"),
        ("revenue in FY 20", "FY2020"),
        ("revenue for fiscal 2020", "FY2020"),
        ("revenue for fiscal year 2020", "FY2020"),
        ("2020 fiscal year revenue", "FY2020"),
        ("revenue in 2020", "FY2020"),
        ("revenue in Q3 2020", "2020Q3"),
        ("Q3 FY2020 revenue", "2020Q3"),
        ("revenue 2020Q3", "2020Q3"),
        ("3Q20 revenue", "2020Q3"),
        ("third quarter of fiscal 2020 revenue", "2020Q3"),
        ("revenue", None),
        ("FY2019 and FY2020 revenue", None),
    ],
)
def test_periods_are_read_from_questions(text: str, period: str | None) -> None:
    assert parse_period(text) == period


def test_normalizing_takes_out_punctuation_names_and_periods() -> None:
    names = ["Acme Widgets Inc", "ACME"]
    assert normalize("What was ACME's total revenue, in Q3 2020?", names=names) == (
        "what was total revenue"
    )
    assert normalize("Acme Widgets Inc.: total revenue (FY2020)", names=names) == "total revenue"


@pytest.mark.model
def test_minilm_matches_a_paraphrase_and_not_a_near_miss() -> None:
    from finkg.retrieval.index.embed import MiniLM

    names = ("ACME", "Acme Widgets Inc")
    dividend = entry(ACME, "What dividend per share was declared?", "FY2020", "$0.82", "p-10k")
    entries = [BankEntry(**{**vars(e), "names": names}) for e in [*ENTRIES[:4], dividend]]
    matcher = Matcher(MiniLM())
    found = matcher.match("What was Acme's dividend per share in FY2020?", entries)
    assert found is not None and found.entry.answer == "$0.82"
    assert found.fired == ("semantic",), found.scores  # worded apart, meant the same
    assert matcher.match("What was Acme's total revenue by segment in FY2020?", entries) is None
    assert matcher.match("What was Acme's net income margin in FY2020?", entries) is None
    assert matcher.match("How many shares did Acme repurchase in FY2020?", entries) is None
