"""Enrichment analyzers and the paper-000 event-type mapper."""

from __future__ import annotations

import pytest

from finkg.kg.enrich import EVENT_CONCEPTS, event_counts, event_type, tickers, topics

KNOWN = {"AAPL": "Apple Inc.", "ZQAW": "Acme Widgets Corp (synthetic)", "MSFT": "Microsoft Corp"}


@pytest.mark.parametrize(
    ("headline", "expected"),
    [
        (
            "Apple Reports Big Q2 Earnings Beat, Driven By Record Services Revenue",
            "Earnings & Guidance",
        ),
        ("FTC opens antitrust probe into Acme", "Legal & Regulatory"),
        ("Acme agrees to $2 billion acquisition, announces buyback", "Capital & Transactions"),
        ("Acme CFO resigns; board appoints interim", "Management & Operations"),
        ("Shares moved today", "Other/Mixed"),  # no cue
        ("CEO departs amid lawsuit", "Other/Mixed"),  # departs is no cue: ceo 1 vs lawsuit 1
    ],
)
def test_event_types_follow_appendix_a(headline: str, expected: str) -> None:
    assert event_type(headline) == expected
    assert expected in EVENT_CONCEPTS


def test_cues_match_whole_words_only() -> None:
    assert event_counts("Fine-tuned models are finest")["Legal & Regulatory"] == 1  # "fine"
    assert event_counts("The boardwalk")["Management & Operations"] == 0
    assert event_counts("EPS of $2.55 beat")["Earnings & Guidance"] == 2


def test_topics_are_counted_and_ranked() -> None:
    text = (
        "We expect full-year revenue growth; our outlook assumes stable demand. "
        "Liquidity remains strong with $20 billion of cash and cash equivalents."
    )
    found = topics(text)
    assert found[0] == "guidance"
    assert {"liquidity", "market events"} <= set(found)
    assert topics("Nothing to see.") == []


def test_tickers_from_symbols_and_names() -> None:
    text = "Apple (AAPL) and $MSFT rose; Acme Widgets said NASDAQ: ZQAW would split. (CEO) left."
    assert tickers(text, KNOWN) == ["AAPL", "MSFT", "ZQAW"]
    assert tickers("An apple a day, pineapple", {"AAPL": "Apple Inc."}) == []  # capitalization
    assert tickers("Apple said", {"AAPL": "Apple Inc."}) == ["AAPL"]
    assert tickers("Unknown (XYZ) ticker", KNOWN) == []
