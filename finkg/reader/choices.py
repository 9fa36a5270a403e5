"""The replies a JSON schema admits, when they are few: constrained decoding as a choice.

A schema built only from enums, booleans, and objects and bounded arrays of them has a
finite language: the compact impact reply with five citable ids has 3 x 3 x 3 x 31 = 837
possible texts. A reader can then decode by walking the token trie of those texts
(`LlamaCpp`): tokens that every remaining reply shares are evaluated together in one batch,
and only where the replies branch does the model choose, greedily among the branches. That is
a handful of model calls instead of one per reply token, and no grammar is matched against
the whole vocabulary at every step.

The texts are written the way `json.dumps` writes them (", " and ": " separators), the
form the grammar-constrained readers produce too, with properties in the schema's order.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from typing import Any

FINITE_LIMIT = 4096  # more replies than this are decoded with the grammar instead


class _Infinite(Exception):
    """The schema admits unboundedly many replies, or more than the limit."""


def finite_replies(schema: Mapping[str, Any], limit: int = FINITE_LIMIT) -> list[str] | None:
    """Every JSON text `schema` admits, in a fixed order, or None when there are more than
    `limit` (a free string or number, an unbounded array, or just too many).

    >>> finite_replies({"type": "object", "properties": {"up": {"type": "boolean"}},
    ...                 "required": ["up"], "additionalProperties": False})
    ['{"up": true}', '{"up": false}']
    >>> finite_replies({"type": "string"}) is None
    True
    """
    defs = schema.get("$defs", {})

    def values(node: Mapping[str, Any]) -> list[Any]:
        if "$ref" in node:
            return values(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "const" in node:
            return [node["const"]]
        if "enum" in node:
            return list(node["enum"])
        kind = node.get("type")
        if kind == "boolean":
            return [True, False]
        if kind == "null":
            return [None]
        if kind == "object":
            return objects(node)
        if kind == "array":
            return arrays(node)
        raise _Infinite

    def objects(node: Mapping[str, Any]) -> list[Any]:
        properties = node.get("properties", {})
        if node.get("additionalProperties", True) is not False or set(
            node.get("required", ())
        ) != set(properties):
            raise _Infinite  # optional or extra keys: not the fixed shape this walks
        names = list(properties)
        options = [values(properties[n]) for n in names]
        if math.prod(len(o) for o in options) > limit:
            raise _Infinite
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*options)]

    def arrays(node: Mapping[str, Any]) -> list[Any]:
        if "maxItems" not in node:
            raise _Infinite
        items = values(node.get("items", {}))
        lists: list[Any] = []
        for n in range(node.get("minItems", 0), node["maxItems"] + 1):
            if len(items) ** n > limit:
                raise _Infinite
            lists.extend(list(combo) for combo in itertools.product(items, repeat=n))
            bounded(lists)
        return lists

    def bounded(out: list[Any]) -> list[Any]:
        if len(out) > limit:
            raise _Infinite
        return out

    try:
        return [json.dumps(v, ensure_ascii=False) for v in values(schema)]
    except _Infinite:
        return None
