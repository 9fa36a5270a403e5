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
import re

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
    todo: list[tuple[object, str, int]] = [(value, "", 0)]
    while todo:
        item, where, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise InputError(
                f"not valid JSON for finkg: nested deeper than {MAX_DEPTH} levels",
                source=source,
                line=line,
                field=_shown(re.split(r"[.\[]", where, maxsplit=1)[0]) or None,  # its top key
            )
        if isinstance(item, str):
            _unicode(item, where, source, line)
        elif isinstance(item, dict):
            for k, v in item.items():
                name = f"{where}.{k}" if where else str(k)
                _unicode(k, where or "(a key)", source, line)
                todo.append((v, name, depth + 1))
        elif isinstance(item, list):
            todo += [(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item)]


def _unicode(text: str, where: str, source: str | None, line: int | None) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        raise InputError(
            f"not valid Unicode: a lone surrogate (\\u{ord(bad):04x}); escape it as a pair, "
            "or drop it",
            source=source,
            line=line,
            field=_shown(where) or None,
        ) from None


def _shown(name: str) -> str:
    """A field name as it can be printed (a key may hold the surrogate itself)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")
