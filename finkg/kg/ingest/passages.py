"""Item-aware passages of a filing's extracted text, with exact character offsets.

A filing is cut into sections at its item headings: a line that starts with `Item 2.02`,
`ITEM 7.` or `Item 1A. Risk Factors` (optionally after `Part II,`), and at the
`SIGNATURES` and `EXHIBIT INDEX` lines, which end the last item (`Item 15(a)(3)` and
`Item 7's` are references, not headings). A heading line that ends in a page number is a
contents entry, never a heading; when an item's heading still appears more than once, the
occurrence followed by the longest text before the next heading-like line is the heading,
the others are text. A `PART II` line right before a heading opens that heading's section.

Item labels follow EDGAR: 8-K items as in the submissions index (`"2.02"`), 10-K items as
`"Item 7"`, and, for forms whose parts reuse item numbers (10-Q), with the part:
`"Part II, Item 1A"`. Text before the first heading (the cover page) has no item.

Each section is cut into passages of `min_words`-`max_words` words (words are runs of
non-space characters); only a section's last passage may be shorter. Cuts prefer a
paragraph end, then a line end, then a sentence end, and among those the one nearest
`target` words; a section whose rest is too long for one passage leaves at least
`min_words` for the next, so no tiny trailing piece is left. A passage never crosses a
section boundary and starts and ends on a non-space character.

>>> text = "Cover\\n\\nItem 2.02 Results.\\n\\nRevenue rose.\\n\\nItem 9.01 Exhibits.\\n\\n99.1"
>>> for p in split(text, form="8-K"):
...     print(p.item, repr(text[p.start : p.end]))
None 'Cover'
2.02 'Item 2.02 Results.\\n\\nRevenue rose.'
9.01 'Item 9.01 Exhibits.\\n\\n99.1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_WORDS, MAX_WORDS, TARGET_WORDS = 150, 400, 300

_HEADING = re.compile(
    r"^(?:PART[ \t]+(?P<part>[IV]{1,3})\b[ \t,.:\u2013\u2014-]*)?"
    r"ITEMS?[ \t]+(?P<num>\d{1,2}\.\d{2}|\d{1,2}[A-C]?)(?![\d.]?\d)(?P<after>.?)",
    re.IGNORECASE | re.MULTILINE,
)
_PART = re.compile(
    r"^PART[ \t]+(?P<part>[IV]{1,3})\b(?![^\n]*\bITEMS?\s+\d)[^\n]{0,80}$", re.I | re.M
)
_END = re.compile(r"^(?:SIGNATURES?|EXHIBIT INDEX|INDEX TO EXHIBITS)\s*:?\s*$", re.I | re.M)
# a table-of-contents entry: the line ends with a page number (a cell of its own, or the
# last word of a short line)
_TOC = re.compile(r"(?:\|\s*(?:\d{1,3}|[ivxl]{1,6}|[A-Z]-\d{1,3})|^.{0,150}\s\d{1,3})\s*$", re.I)
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*$")
_SENTENCE_START = re.compile(r"^[\"'(\[\u201c\u2018]*[A-Z0-9$\u2022]")
_PART_FORMS = ("10-Q", "10-QT")


@dataclass(frozen=True)
class Section:
    start: int
    end: int
    item: str | None


@dataclass(frozen=True)
class Passage:
    start: int
    end: int
    item: str | None
    words: int


def _label(num: str, part: str | None, form: str) -> str:
    num = num.upper()
    if "." in num:
        return num
    label = f"Item {num.lstrip('0') or '0'}"
    if part and form.upper().startswith(_PART_FORMS):
        return f"Part {part.upper()}, {label}"
    return label


def _headings(text: str, form: str) -> list[tuple[int, str | None, bool]]:
    """(offset, label, is a contents entry) of every heading-like line, in text order."""
    parts = [(m.start(), m.group("part").upper()) for m in _PART.finditer(text)]
    marks: list[tuple[int, str | None, bool]] = []
    for m in _HEADING.finditer(text):
        after = m.group("after")
        if after.islower() or after in ("(", "'", "\u2019", ","):
            continue  # "Item 15(a)(3)", "Item 7's", "Items 1, 2": a reference, not a heading
        start = m.start()
        line_end = text.find("\n", start)
        toc = bool(_TOC.search(text[start : len(text) if line_end < 0 else line_end]))
        part = m.group("part") or _part_before(parts, start)
        prev_end = start
        while prev_end > 0 and text[prev_end - 1].isspace():
            prev_end -= 1
        prev_start = text.rfind("\n", 0, prev_end) + 1
        if _PART.fullmatch(text[prev_start:prev_end]):
            start = prev_start  # the PART line belongs to the section it opens
        marks.append((start, _label(m.group("num"), part, form), toc))
    marks += [(m.start(), None, False) for m in _END.finditer(text)]
    marks.sort(key=lambda m: m[0])
    return [m for i, m in enumerate(marks) if i == 0 or m[0] != marks[i - 1][0]]


def _part_before(parts: list[tuple[int, str]], offset: int) -> str | None:
    found = None
    for start, part in parts:
        if start >= offset:
            break
        found = part
    return found


def sections(text: str, *, form: str) -> list[Section]:
    """The item sections of `text`, in order and covering it (see the module docstring)."""
    marks = _headings(text, form)
    ends = [m[0] for m in marks[1:]] + [len(text)] if marks else []
    # an item's heading is its occurrence that opens the longest stretch of text before the
    # next heading-like line (contents entries included, so a contents block stays short)
    best: dict[str, tuple[int, int]] = {}  # label -> (start, length)
    for (start, label, toc), end in zip(marks, ends, strict=True):
        if label is not None and not toc and end - start > best.get(label, (0, -1))[1]:
            best[label] = (start, end - start)
    cuts: list[tuple[int, str | None]] = [
        (s, label) for s, label, toc in marks if not toc and (label is None or best[label][0] == s)
    ]
    if not cuts or cuts[0][0] > 0:
        cuts.insert(0, (0, None))
    out = []
    for i, (start, label) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        if text[start:end].strip():
            out.append(Section(start, end, label))
    return out


def _strength(text: str, prev: re.Match[str], word: re.Match[str]) -> int:
    """How good a cut between two words is: 3 a paragraph end, 2 a line end, 1 a sentence
    end, 0 any other space."""
    gap = text[prev.end() : word.start()]
    if "\n\n" in gap:
        return 3
    if "\n" in gap:
        return 2
    if _SENTENCE_END.search(prev.group()) and _SENTENCE_START.match(word.group()):
        return 1
    return 0


def split(
    text: str,
    *,
    form: str,
    min_words: int = MIN_WORDS,
    max_words: int = MAX_WORDS,
    target: int = TARGET_WORDS,
) -> list[Passage]:
    """The passages of `text`, section by section (see the module docstring)."""
    if not 0 < min_words <= target <= max_words or max_words < 2 * min_words:
        raise ValueError(
            f"need 0 < min_words <= target <= max_words and max_words >= 2 * min_words; "
            f"got {min_words}, {target}, {max_words}"
        )
    out: list[Passage] = []
    for section in sections(text, form=form):
        words = list(_WORD.finditer(text, section.start, section.end))
        out += _cut(text, words, section.item, min_words, max_words, target)
    return out


def _cut(
    text: str, words: list[re.Match[str]], item: str | None, lo: int, hi: int, target: int
) -> list[Passage]:
    out = []
    pos, n = 0, len(words)
    while pos < n:
        rest = n - pos
        if rest <= hi:
            end = n
        else:
            # cut after word index `end - 1`; leave at least `lo` words for what follows
            first, last = pos + lo, min(pos + hi, n - lo)
            end = max(
                range(first, last + 1),
                key=lambda e: (
                    _strength(text, words[e - 1], words[e]) - abs(e - pos - target) / 250,
                    -e,
                ),
            )
        out.append(Passage(words[pos].start(), words[end - 1].end(), item, end - pos))
        pos = end
    return out
