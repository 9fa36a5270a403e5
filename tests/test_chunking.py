"""Normalization and the recursive token chunker."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finkg.errors import InputError
from finkg.kg.chunking import chunk, normalize, tokens

WORDS = st.sampled_from(
    [
        "revenue",
        "rose",
        "12%",
        "$58.3",
        "billion.",
        "Item",
        "7.",
        "(1,234)",
        "margin",
        "guidance",
        "Q3",
        "2020-04-30",
        "€4.1m",
        "risk",
    ]
)
PARAGRAPH = st.lists(WORDS, min_size=1, max_size=60).map(" ".join)
TEXT = st.lists(PARAGRAPH, min_size=1, max_size=12).map("\n\n".join)


def test_normalize_keeps_finance_tokens() -> None:
    raw = (
        "Revenue\u00a0of\u00a0$58.3\u200bbn (up 12.5%)\r\n"
        "net loss (1,234) \u20ac 3\uff05 on 2020-04-30\x07"
    )
    assert normalize(raw) == "Revenue of $58.3bn (up 12.5%)\nnet loss (1,234) € 3% on 2020-04-30"


@settings(max_examples=150, deadline=None)
@given(TEXT, st.integers(min_value=8, max_value=120), st.integers(min_value=0, max_value=7))
def test_chunks_cover_the_text_with_exact_offsets(text: str, size: int, overlap: int) -> None:
    chunks = chunk(text, size=size, overlap=overlap)
    covered = set()
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert c.tokens <= size
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    for a, b in itertools.pairwise(chunks):
        assert a.start < b.start <= a.end + 2  # in order; overlapping or adjacent
        if b.start < a.end:
            assert tokens(text[b.start : a.end]) <= overlap


def test_paragraphs_that_fit_are_never_cut() -> None:
    paragraphs = [" ".join([f"p{i}"] * n) + "." for i, n in enumerate((30, 40, 25, 50))]
    text = "\n\n".join(paragraphs)
    starts = {text.index(p) for p in paragraphs}
    chunks = chunk(text, size=80, overlap=0)
    assert [c.start for c in chunks] and all(c.start in starts for c in chunks)


def test_a_long_paragraph_is_cut_at_sentences_first() -> None:
    sentence = "The company raised its full-year revenue guidance again."
    text = " ".join([sentence] * 20)
    chunks = chunk(text, size=40, overlap=0)
    assert len(chunks) > 1
    assert all(c.text.endswith(".") for c in chunks)


def test_overlap_repeats_the_end_of_the_previous_chunk() -> None:
    text = "\n\n".join(" ".join(f"w{i}_{j}" for j in range(20)) for i in range(6))
    chunks = chunk(text, size=50, overlap=10)
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end
        assert 0 < tokens(text[b.start : a.end]) <= 10


def test_defaults_are_the_papers() -> None:
    text = " ".join(["token"] * 2000)
    chunks = chunk(text)
    assert max(c.tokens for c in chunks) == 768
    assert tokens(text[chunks[1].start : chunks[0].end]) == 128


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_bad_sizes_are_refused(size: int, overlap: int) -> None:
    with pytest.raises(InputError):
        chunk("some text", size=size, overlap=overlap)
