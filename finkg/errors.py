"""finkg's errors: one base, subclasses that carry context, one exit code each.

Exit codes (documented in the README and used by every command):

- 0: success
- 1: validation failures found (the data was read, and it does not conform)
- 2: usage or input error (a bad file, value, query, graph name or option)
- 3: internal error (a store or endpoint failed, a bug)
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path


class FinkgError(Exception):
    """Base of every error finkg raises on purpose."""

    exit_code = 3


class InputError(FinkgError):
    """Bad input: names where (file, line, field or query position), what, and the fix.

    >>> print(InputError("naive timestamp", source="news.jsonl", line=3,
    ...                  field="publishedDate", value="2020-01-02 09:00:00",
    ...                  hint="give --tz"))
    news.jsonl:3: publishedDate: naive timestamp (got '2020-01-02 09:00:00'); give --tz
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        source: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        value: object = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.source = str(source) if source is not None else None
        self.line = line
        self.field = field
        self.value = value
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        text = where + (f"{self.field}: " if self.field else "") + self.message
        if self.value is not None:
            shown = repr(self.value)
            text += f" (got {shown[:200]}{'...' if len(shown) > 200 else ''})"
        if self.hint:
            text += f"; {self.hint}"
        return text


class TimestampError(InputError):
    """A timestamp without a zone, or one that cannot be read."""


def require_zone(value: dt.datetime, *, field: str, what: str = "the instant") -> dt.datetime:
    """`value`, or a TimestampError when it has no zone (finkg compares instants only)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise TimestampError(
            f"{what} has no zone",
            field=field,
            value=value.isoformat(),
            hint="give a zoned instant, e.g. 2020-06-01T09:30:00-04:00",
        )
    return value


class QueryError(InputError):
    """A SPARQL query or update that does not parse, or a binding that does not fit it."""


class UnknownGraphError(InputError):
    """A named graph that is not one of finkg's."""


class MissingStoreError(InputError):
    """A store location where there is no store (a read-only open of a directory that does
    not exist): the user named the wrong place, or has not created the store yet."""


class StoreError(FinkgError):
    """The store or the remote endpoint failed (I/O, HTTP, a locked database)."""
