"""Text from Word (.docx) and Excel (.xlsx) files, deterministic like `doctext`.

- DOCX: the body's paragraphs in order with a blank line between them, then each table as
  rows of cells joined by " | " (python-docx lists tables apart from paragraphs).
- XLSX: every sheet in workbook order as "Sheet: NAME", then one line per non-empty row,
  cells joined by " | ", values as stored (formulas give their cached values).
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from finkg.errors import InputError
from finkg.kg.ingest.doctext import normalize

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def docx_to_text(data: bytes, *, source: str = "<docx>") -> str:
    import docx  # only Word inputs pay for the import

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise InputError("not a readable Word document", source=source, value=str(e)) from None
    parts = [p.text for p in document.paragraphs if p.text.strip()]
    for table in document.tables:
        rows = [
            " | ".join(c.text.strip() for c in row.cells if c.text.strip()) for row in table.rows
        ]
        parts.append("\n".join(r for r in rows if r))
    return normalize("\n\n".join(parts))


def _cell(value: object) -> str:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def xlsx_to_text(data: bytes, *, source: str = "<xlsx>") -> str:
    import openpyxl  # only Excel inputs pay for the import

    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise InputError("not a readable Excel workbook", source=source, value=str(e)) from None
    parts = []
    for sheet in book.worksheets:
        lines = [f"Sheet: {sheet.title}"]
        for row in sheet.iter_rows(values_only=True):
            cells = [_cell(v) for v in row if v is not None and _cell(v)]
            if cells:
                lines.append(" | ".join(cells))
        parts.append("\n".join(lines))
    book.close()
    return normalize("\n\n".join(parts))
