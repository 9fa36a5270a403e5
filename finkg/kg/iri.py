"""Minting instance IRIs from stable source keys.

An IRI is `{base}{kind}/{key}/{key}...`: readable when every key is short and made of
`[A-Za-z0-9._-]` (tickers, ISINs, accession numbers, dates), otherwise `{base}{kind}/~{hash}`
with the SHA-256 of the keys (URLs, titles). The same keys always give the same IRI, so
ingesting the same input twice adds nothing.

>>> mint("bar", "AAPL", "2020-05-01").value
'https://w3id.org/finkg/id/bar/AAPL/2020-05-01'
>>> mint("news", "https://example.com/a?b=1").value
'https://w3id.org/finkg/id/news/~6cb547ac73ee23b7a1582362e5f81431'
>>> readable_keys("company", mint("company", "AAPL"))
('AAPL',)
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from pyoxigraph import NamedNode

from finkg.config import DEFAULT_BASE_IRI
from finkg.errors import InputError

_READABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KIND = re.compile(r"[a-z][a-z0-9-]*(/[a-z][a-z0-9-]*)*")


def key_hash(*keys: str) -> str:
    """32 hex digits of SHA-256 over the keys (unit-separator joined)."""
    return hashlib.sha256("\x1f".join(keys).encode("utf-8")).hexdigest()[:32]


def mint(kind: str, *keys: object, base: str = DEFAULT_BASE_IRI) -> NamedNode:
    """The IRI of the `kind` node identified by `keys` under `base`."""
    return _mint(kind, tuple(str(k) for k in keys), base)


@lru_cache(maxsize=65_536)  # companies, assets and sources recur across records
def _mint(kind: str, parts: tuple[str, ...], base: str) -> NamedNode:
    keys = parts
    if not _KIND.fullmatch(kind):
        raise InputError("IRI kind must be lower-case words joined by '/'", value=kind)
    if not keys:
        raise InputError("at least one key is needed to mint an IRI", field=kind)
    if any(p == "" for p in parts):
        raise InputError("empty key", field=kind, value=parts)
    if all(_READABLE.fullmatch(p) for p in parts):
        tail = "/".join(parts)
    else:
        tail = "~" + key_hash(*parts)
    return NamedNode(f"{base}{kind}/{tail}")


def readable_keys(
    kind: str, iri: NamedNode, *, base: str = DEFAULT_BASE_IRI
) -> tuple[str, ...] | None:
    """The keys a readable `kind` IRI was minted from; None for a hashed or foreign IRI.

    Tickers are readable keys, so a company node's ticker is known from its IRI even where
    no companies file was loaded (the news and price loaders only point at the node)."""
    prefix = f"{base}{kind}/"
    if not iri.value.startswith(prefix) or iri.value[len(prefix) :].startswith("~"):
        return None
    keys = tuple(iri.value[len(prefix) :].split("/"))
    return keys if all(_READABLE.fullmatch(k) for k in keys) else None
