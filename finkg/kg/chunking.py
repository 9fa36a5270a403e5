"""Text normalization and recursive chunking with offsets (paper 003, stage 2).

`normalize` removes control and zero-width characters, applies Unicode NFKC, and
regularizes whitespace, keeping what finance needs verbatim: currency symbols, percentages,
dates, accounting negatives like "(1,234)".

`chunk` splits normalized text into chunks of at most `size` tokens with `overlap` tokens
shared between neighbours (768 and 128 by default, as in the paper). It splits recursively,
preferring section headings, then paragraphs, line breaks, sentences and finally spaces, and
returns character offsets into the text it was given, so `text[c.start:c.end] == c.text`.
Tokens are words and single punctuation marks (`\\w+|[^\\w\\s]`), a tokenizer that needs no
model and counts numbers like "1,234.5" as a few tokens.

>>> text = "Item 7. Results\\n\\nRevenue rose 12% to $58.3 billion.\\n\\nMargins held at 38.2%."
>>> [c.text for c in chunk(text, size=16, overlap=4)]
['Item 7. Results\\n\\nRevenue rose 12% to $58.3 billion.', 'billion.\\n\\nMargins held at 38.2%.']

A chunk opens with the end of the one before: whole pieces when they fit in the overlap,
else the last words of the piece that does not.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from finkg.errors import InputError

TOKEN = re.compile(r"\w+|[^\w\s]")
# Characters that carry no text: C0/C1 controls (but tab and newline) and zero-width marks.
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff]")
_SPACES = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_HEADING = re.compile(
    r"\n(?=(?:item\s+\d+[a-z]?(?:\.\d+)?\b|part\s+[ivx]+\b|#{1,6}\s|[A-Z][A-Z0-9 ,&'\-]{3,80}\n))",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
SEPARATORS: tuple[re.Pattern[str], ...] = (
    _HEADING,
    re.compile(r"\n\n"),
    re.compile(r"\n"),
    _SENTENCE,
    re.compile(r" "),
)


def normalize(text: str) -> str:
    """Unicode NFKC, no invisible characters, single spaces, at most one blank line.

    >>> normalize("Net\\u00a0loss\\u200b of  (1,234)\\t€ \\r\\n\\r\\n\\r\\nQ3  12.5%")
    'Net loss of (1,234) €\\n\\nQ3 12.5%'
    """
    text = unicodedata.normalize("NFKC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _INVISIBLE.sub("", text)
    text = _SPACES.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()


def tokens(text: str) -> int:
    return len(TOKEN.findall(text))


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    end: int
    text: str
    tokens: int


def chunk(text: str, *, size: int = 768, overlap: int = 128) -> list[Chunk]:
    """Chunks of at most `size` tokens overlapping by up to `overlap` tokens."""
    if size < 1:
        raise InputError("chunk size must be at least 1 token", field="size", value=size)
    if not 0 <= overlap < size:
        raise InputError(
            "overlap must be at least 0 and below the chunk size",
            field="overlap",
            value=overlap,
            hint=f"the size is {size}",
        )
    pieces = _split(text, 0, len(text), size, 0)
    chunks: list[Chunk] = []
    current: list[tuple[int, int, int]] = []  # (start, end, tokens) of the pieces in a chunk
    count = 0
    for piece in pieces:
        if current and count + piece[2] > size:
            chunks.append(_make(text, len(chunks), current))
            current, count = _tail(text, current, min(overlap, size - piece[2]))
        current.append(piece)
        count += piece[2]
    if current:
        chunks.append(_make(text, len(chunks), current))
    return chunks


def section_headings(text: str) -> list[tuple[int, str]]:
    """Where each section heading the chunker splits at starts in `text`, and its line.

    >>> section_headings("Cover\\nItem 7. Results\\nRevenue rose.\\nRISK FACTORS\\nSome.")
    [(6, 'Item 7. Results'), (36, 'RISK FACTORS')]
    """
    out = []
    for m in _HEADING.finditer(text):
        start = m.end()
        end = text.find("\n", start)
        out.append((start, text[start : len(text) if end < 0 else end].strip()[:120]))
    return out


def section_heading_at(headings: list[tuple[int, str]], offset: int) -> str:
    """The heading of the section `offset` falls in ("" before the first heading)."""
    i = bisect.bisect_right([start for start, _ in headings], offset) - 1
    return headings[i][1] if i >= 0 else ""


def _split(text: str, start: int, end: int, size: int, level: int) -> list[tuple[int, int, int]]:
    """Pieces of text[start:end] no larger than `size` tokens (where a space split can tell)."""
    n = tokens(text[start:end])
    if n == 0:
        return []
    if n <= size or level >= len(SEPARATORS):
        return [_trim(text, start, end, n)]
    pieces, cursor = [], start
    for m in SEPARATORS[level].finditer(text, start, end):
        pieces += _split(text, cursor, m.start(), size, level + 1)
        cursor = m.end()
    pieces += _split(text, cursor, end, size, level + 1)
    return pieces


def _trim(text: str, start: int, end: int, n: int) -> tuple[int, int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end, n


def _tail(
    text: str, pieces: list[tuple[int, int, int]], budget: int
) -> tuple[list[tuple[int, int, int]], int]:
    """The end of a chunk, at most `budget` tokens, to open the next one with: whole pieces,
    then the last words of the piece that does not fit whole."""
    kept: list[tuple[int, int, int]] = []
    count = 0
    for start, end, n in reversed(pieces):
        if count + n <= budget:
            kept.insert(0, (start, end, n))
            count += n
            continue
        words = [(m.start(), m.end(), tokens(m.group())) for m in _WORD.finditer(text, start, end)]
        for word in reversed(words):
            if count + word[2] > budget:
                break
            kept.insert(0, word)
            count += word[2]
        break
    return kept, count


def _make(text: str, index: int, pieces: list[tuple[int, int, int]]) -> Chunk:
    start, end = pieces[0][0], pieces[-1][1]
    body = text[start:end]
    return Chunk(index, start, end, body, tokens(body))
