"""JSON from source files, read so that no input can raise past a loader.

`json.loads` accepts what finkg cannot store or must not try to: a lone surrogate escape
(`"\\ud800"` decodes to a string UTF-8 cannot encode, and the canonical dump of a news
record raised UnicodeEncodeError), and nesting deep enough to raise RecursionError. `loads`
turns both, and every syntax error, into an InputError naming the line and, for a bad
string, the field that holds it.

>>> loads('{"title": "ok"}')
{'title': 'ok'}
>>> loads('{"title": "\\\\ud800"}', source="news.jsonl", line=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
finkg.errors.InputError: news.jsonl:3: title: not valid Unicode: a lone surrogate (\\ud800)...
"""

from __future__ import annotations

import json

from finkg.errors import InputError

MAX_DEPTH = 64  # JSON nesting levels; finkg's sources use at most 4


def loads(text: str, *, source: str | None = None, line: int | None = None) -> object:
    """The JSON value of `text`, checked (see the module docstring)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        at = e.lineno if line is None else line
        raise InputError(f"not valid JSON: {e.msg}", source=source, line=at) from None
    except RecursionError:
        raise InputError(
            f"not valid JSON for finkg: nested deeper than {MAX_DEPTH} levels",
            source=source,
            line=line,
        ) from None
    check(value, source=source, line=line)
    return value


def check(value: object, *, source: str | None = None, line: int | None = None) -> None:
    """Refuse nesting deeper than MAX_DEPTH and strings that are not valid Unicode."""
    found = _fault(value, 0)
    if found is None:
        return
    fault, path = found
    if fault == "deep":
        raise InputError(
            f"not valid JSON for finkg: nested deeper than {MAX_DEPTH} levels",
            source=source,
            line=line,
            field=_shown(path[0]) if path else None,  # its top-level key
        )
    raise InputError(
        f"not valid Unicode: a lone surrogate ({fault}); escape it as a pair, or drop it",
        source=source,
        line=line,
        field=_shown(".".join(path).replace(".[", "[")) or None,
    )


def _fault(item: object, depth: int) -> tuple[str, list[str]] | None:
    """("deep" or the bad character's escape, the path to it), or None: names are built
    only for a fault (a news record is checked in about a microsecond)."""
    if depth > MAX_DEPTH:
        return "deep", []
    if isinstance(item, str):
        bad = _surrogate(item)
        return None if bad is None else (bad, [])
    if isinstance(item, dict):
        for key, value in item.items():
            bad = _surrogate(key)
            if bad is not None:
                return bad, ["(a key)"]
            found = _fault(value, depth + 1) if not _plain(value) else None
            if found is not None:
                found[1].insert(0, str(key))
                return found
    elif isinstance(item, list):
        for i, value in enumerate(item):
            found = _fault(value, depth + 1) if not _plain(value) else None
            if found is not None:
                found[1].insert(0, f"[{i}]")
                return found
    return None


def _plain(value: object) -> bool:
    """An ASCII string, a number, a boolean or null: nothing to check."""
    return (type(value) is str and value.isascii()) or not isinstance(value, str | dict | list)


def _surrogate(text: str) -> str | None:
    """The escape of the first lone surrogate in `text`, if any."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"\\u{ord(text[e.start]):04x}"
    return None


def _shown(name: str) -> str:
    """A field name as it can be printed (a key may hold the surrogate itself)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")
