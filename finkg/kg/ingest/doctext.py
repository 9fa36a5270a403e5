"""Plain text from HTML (inline XBRL included), PDF and text files, with stable offsets.

Passages and chunks point into the text these functions return (`fkg:charStart/charEnd`),
so extraction is deterministic: the same bytes always give the same string (for PDFs, with
the same pypdf version), and every rule below is fixed, with no heuristics that depend on
anything but the input.

- HTML: read in its declared encoding (else UTF-8, else Windows-1252). `script`, `style`,
  `head`, the inline-XBRL header `ix:header` and elements styled `display:none` are
  dropped. Block elements (`p`, `div`, headings, list items, tables, ...) end a paragraph,
  `tr` and `br` end a line, and the non-empty cells of a row are joined with `" | "` (a
  block inside a cell is a space). Inside a paragraph, runs of whitespace become one space.
- PDF: pypdf's layout extraction page by page (`extract_text(extraction_mode="layout")`,
  without the blank lines it adds for vertical gaps), so a table row stays on one line:
  within a line, runs of two or more spaces separate cells, and a line whose cells after
  the first are mostly figures (numbers, amounts, percentages, dashes), the last one too,
  is written as table cells joined with `" | "` (as HTML tables are), a lone currency sign
  or parenthesis joined to its figure; other lines keep single spaces. A page the layout
  mode cannot read falls back to pypdf's plain extraction. Pages are joined by a blank
  line; `pdf_pages` gives them one by one (the same text, page by page).
- Text: read as UTF-8 (Windows-1252 when that fails).

All three then go through `normalize`: line ends become `\\n`, Unicode spaces become a plain
space (zero-width characters and soft hyphens are removed), each line is stripped and its
runs of spaces collapsed, at most one blank line separates paragraphs, and the whole text
is stripped.

>>> html_to_text(b"<p>Item 2.02  Results</p><table><tr><td>a</td><td></td><td>b</td></tr></table>")
'Item 2.02 Results\\n\\na | b'
"""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from lxml import etree
from lxml import html as lxml_html

from finkg.errors import InputError

if TYPE_CHECKING:
    from pypdf import PageObject

HTML = "text/html"
PDF = "application/pdf"
TEXT = "text/plain"

_BLOCK = frozenset(
    "p div h1 h2 h3 h4 h5 h6 li ul ol dl dt dd table thead tbody tfoot section article "
    "blockquote pre hr header footer center address form fieldset main nav aside figure "
    "caption body html".split()
)
_DROP = frozenset(("script", "style", "head", "title", "noscript", "ix:header", "template"))
_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_SPACES = re.compile(r"[ \t\f\v\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_INVISIBLE = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff\xad]")
_BLANKS = re.compile(r"\n{3,}")

# break strengths in the HTML walk: a cell separator, a line end, a paragraph end
_CELL, _LINE, _PARA = 1, 2, 3


def normalize(text: str) -> str:
    r"""The whitespace rules every extractor ends with (see the module docstring).

    >>> normalize("  a\u00a0 b \r\n\r\n\r\n c\t")
    'a b\n\nc'
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _INVISIBLE.sub("", _SPACES.sub(" ", text))
    lines = [line.strip(" ") for line in text.split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def decode(data: bytes) -> str:
    """Bytes as text: UTF-8 (a BOM is dropped), else Windows-1252, which never fails."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def text_to_text(data: bytes | str) -> str:
    """A plain-text document, normalized."""
    return normalize(decode(data) if isinstance(data, bytes) else data)


def html_to_text(data: bytes | str) -> str:
    """An HTML or inline-XBRL document as paragraphs, lines and ` | `-joined table cells."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        return ""
    parser = lxml_html.HTMLParser(encoding=_declared_encoding(data), remove_comments=True)
    try:
        root = lxml_html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError):
        return ""
    out: list[str | int] = []  # text pieces and break strengths
    cells = 0  # depth of table cells: inside one, blocks and line breaks are spaces
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, el in walker:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if event == "start":
            if not tag or tag in _DROP or _HIDDEN.search(el.get("style") or ""):
                walker.skip_subtree()  # its "end" event still comes, and keeps its tail
                continue
            if tag in ("td", "th"):
                out.append(_CELL)
                cells += 1
            elif tag in _BLOCK or tag in ("tr", "br"):
                out.append(_break(tag, cells))
            if el.text:
                out.append(el.text)
        else:
            if tag in ("td", "th") and cells:
                cells -= 1
            elif tag in _BLOCK or tag == "tr":
                out.append(_break(tag, cells))
            if el.tail:
                out.append(el.tail)
    return normalize(_join(out))


def _break(tag: str, cells: int) -> int | str:
    """The break a block, row or line-break tag makes; inside a table cell, a space."""
    if tag == "table":
        return _PARA  # a table nested in a cell still starts its own rows
    if cells and tag != "tr":
        return " "
    return _LINE if tag in ("tr", "br") else _PARA


def _join(pieces: list[str | int]) -> str:
    """Text pieces with the strongest break between each two; cells only inside a line."""
    parts: list[str] = []
    pending = 0  # the strongest break since the last text
    line_has_text = False
    for piece in pieces:
        if isinstance(piece, int):
            pending = max(pending, piece)
            continue
        text = _SPACES.sub(" ", piece.replace("\r", " ").replace("\n", " "))
        if not text.strip():
            if text and parts and pending == 0:
                parts.append(" ")
            continue
        if pending >= _LINE and line_has_text:
            parts.append("\n\n" if pending == _PARA else "\n")
            text = text.lstrip()
        elif pending == _CELL and line_has_text:
            parts.append(" | ")
            text = text.lstrip()
        elif not line_has_text:
            text = text.lstrip()
        parts.append(text)
        line_has_text = True
        pending = 0
    return "".join(parts)


_ENCODING = re.compile(rb"""<\?xml[^>]*encoding=["']([A-Za-z0-9_.-]+)["']""")
_META_CHARSET = re.compile(rb"""<meta[^>]*charset=["']?([A-Za-z0-9_.-]+)""", re.IGNORECASE)


def _declared_encoding(data: bytes) -> str:
    head = data[:4096]
    m = _ENCODING.search(head) or _META_CHARSET.search(head)
    if not m:
        try:  # undeclared: UTF-8 when the bytes are, else Windows-1252 (older EDGAR HTML)
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "cp1252"
        return "utf-8"
    name = m.group(1).decode("ascii").lower()
    if name in ("ascii", "us-ascii"):
        return "utf-8"  # a superset; mislabelled ASCII files with UTF-8 bytes still read
    try:
        "".encode(name)
    except LookupError:
        return "utf-8"
    return name


def pdf_pages(data: bytes, *, source: str = "<pdf>", layout: bool = True) -> list[str]:
    """A PDF's pages as normalized text, one string per page (empty for a page without
    text); with `layout`, table rows kept on their lines (module docstring). An unreadable
    or encrypted PDF is an InputError."""
    import pypdf  # imported here: only PDF inputs pay for it
    from pypdf.errors import DependencyError, PdfReadError

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        return [_page_text(page, layout) for page in reader.pages]
    except DependencyError as e:
        raise InputError(
            "cannot decrypt this PDF",
            source=source,
            value=str(e),
            hint="install the 'cryptography' package, or give a decrypted copy",
        ) from None
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as e:
        raise InputError("not a readable PDF", source=source, value=str(e)) from None


def pdf_to_text(data: bytes, *, source: str = "<pdf>", layout: bool = True) -> str:
    """A PDF's text: its non-empty pages (`pdf_pages`) joined by a blank line."""
    return normalize("\n\n".join(p for p in pdf_pages(data, source=source, layout=layout) if p))


def _page_text(page: PageObject, layout: bool) -> str:
    if layout:
        raw: str | None
        try:
            raw = page.extract_text(extraction_mode="layout", layout_mode_space_vertically=False)
        except Exception:
            raw = None
        if raw is not None:
            return normalize("\n".join(layout_line(line) for line in raw.split("\n")))
    return normalize(page.extract_text() or "")


_GAP = re.compile(r"[ \xa0]{2,}")
_FIGURE = re.compile(r"^[(\[]?[-–—]?\s?(?:US\$|[$€£¥])?\s?[(]?\d[\d,.]*\)?\s?%?\)?[*†]*$|^[-–—]+$")
_OPENERS = frozenset(("$", "US$", "€", "£", "¥", "(", "$(", "($"))
_CLOSERS = frozenset((")", "%", ")%", "%)"))


def layout_line(line: str) -> str:
    """One line of pypdf's layout text: cells joined with `" | "` when it is a table row
    (at least half the cells after the first, the last included, are figures), else its
    words with single spaces.

    >>> layout_line("  Total inventories        5,372      4,985 ")
    'Total inventories | 5,372 | 4,985'
    >>> layout_line("Cash and cash equivalents  $   3,655   $  (4,564 )")
    'Cash and cash equivalents | $3,655 | $(4,564)'
    >>> layout_line("We  make  products  in  2022  and  sell  them.")
    'We make products in 2022 and sell them.'
    """
    cells: list[str] = []
    for cell in _GAP.split(line.strip()):
        cell = " ".join(cell.split())
        if not cell:
            continue
        if cells and (cells[-1] in _OPENERS or cell in _CLOSERS):
            cells[-1] = cells[-1] + cell
        else:
            cells.append(cell)
    cells = [c.replace("$ ", "$").replace("( ", "(").replace(" )", ")") for c in cells]
    figures = [bool(_FIGURE.match(c)) for c in cells[1:]]
    if figures and figures[-1] and 2 * sum(figures) >= len(figures):
        return " | ".join(cells)
    return " ".join(cells)


def media_type(path: Path, data: bytes) -> str:
    """What a document is, told by its content first and its name second."""
    head = data[:2048].lstrip().lower()
    if head.startswith(b"%pdf"):
        return PDF
    if head.startswith((b"<?xml", b"<!doctype html", b"<html")) or b"<html" in head:
        return HTML
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] in (".htm", ".html", ".xhtml"):
        return HTML
    if suffixes and suffixes[-1] == ".pdf":
        return PDF
    return TEXT


def read_bytes(path: Path) -> bytes:
    """A file's bytes, gunzipped when its name ends in `.gz`; errors are InputErrors."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.suffix.lower() == ".gz" else data
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise InputError(f"cannot read file: {e}", source=str(path)) from None


def extract(data: bytes, kind: str, *, source: str = "<document>") -> str:
    """The normalized text of a document of media type `kind` (HTML, PDF or TEXT)."""
    if kind == PDF:
        return pdf_to_text(data, source=source)
    if kind == HTML:
        return html_to_text(data)
    return text_to_text(data)
