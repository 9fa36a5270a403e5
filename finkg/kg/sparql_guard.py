"""Which SPARQL requests would make the server call another host.

The Oxigraph server evaluates `SERVICE <url> {...}` by sending the pattern to `url` and
`LOAD <url>` by fetching it: anyone who can query an endpoint could make it call any host
it can reach. `finkg serve` refuses both unless started with `--allow-service`.

The check reads the request as SPARQL's tokens: strings, IRIs, comments, variables and
prefixed names are skipped, and a SERVICE or LOAD keyword anywhere else refuses the
request. Codepoint escapes (`\\u0053ERVICE`) are decoded first, as SPARQL 1.1 §19.2 says.
It never lets a keyword through that a SPARQL parser would read as one; at worst it
refuses a request that a parser would reject anyway.

>>> outbound_reason("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
'SERVICE'
>>> outbound_reason('SELECT * WHERE { ?service <http://e.org/p> "SERVICE" } # SERVICE')
>>> outbound_reason("LOAD <http://example.org/data.ttl>")
'LOAD'
"""

from __future__ import annotations

import re
import urllib.parse

_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_TOKEN = re.compile(
    r"""
      (?P<comment>\#[^\n\r]*)
    | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
                |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
    | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
    | (?P<var>[?$][\w\u00b7\u0300-\u036f\u203f-\u2040]+)
    | (?P<name>[\w\-.]*:(?:[\w\-.:%]|\\.)*)
    | (?P<word>[A-Za-z_]\w*)
    | (?P<other>\S)
    """,
    re.VERBOSE | re.DOTALL,
)
_OUTBOUND = {"SERVICE", "LOAD"}


def outbound_reason(text: str) -> str | None:
    """The keyword (SERVICE or LOAD) that would make the server call out, else None."""
    try:
        text = _ESCAPE.sub(lambda m: chr(int(m[1] or m[2], 16)), text)
    except ValueError:  # beyond U+10FFFF
        return "a malformed codepoint escape"
    for m in _TOKEN.finditer(text):
        if m.lastgroup == "word" and m.group().upper() in _OUTBOUND:
            return m.group().upper()
        if m.lastgroup == "other" and m.group() in "'\"":
            return "an unterminated string"  # what follows cannot be read reliably
    return None


_PREFIX_DECL = re.compile(r"(?:PREFIX|BASE)$", re.IGNORECASE)


def iris(text: str) -> list[str]:
    """Every IRI `text` names, written in full or as a prefixed name (expanded with the
    text's own PREFIX declarations; a relative IRI resolved against its BASE), in order.

    >>> iris("PREFIX u: <https://e.org/users/> SELECT * FROM u:a WHERE { GRAPH <b> {} }")
    ['https://e.org/users/', 'https://e.org/users/a', 'b']
    """
    text = _ESCAPE.sub(lambda m: chr(int(m[1] or m[2], 16)), text)
    prefixes: dict[str, str] = {}
    base, found, pending = "", [], None  # pending: the keyword a declaration is reading
    for m in _TOKEN.finditer(text):
        kind, token = m.lastgroup, m.group()
        if kind == "word" and _PREFIX_DECL.match(token):
            pending = [token.upper()]
            continue
        if kind == "iri":
            iri = urllib.parse.urljoin(base, token[1:-1]) if base else token[1:-1]
            found.append(iri)
            if pending and pending[0] == "BASE":
                base = iri
            elif pending and len(pending) == 2:
                prefixes[pending[1]] = iri
            pending = None
        elif kind == "name":
            if pending and pending[0] == "PREFIX" and len(pending) == 1 and token.endswith(":"):
                pending.append(token[:-1])
                continue
            prefix, _, local = token.partition(":")
            if prefix in prefixes:
                found.append(prefixes[prefix] + re.sub(r"\\(.)", r"\1", local))
            pending = None
        elif kind != "comment":
            pending = None
    return found


def has_dataset_clause(text: str) -> bool:
    """Whether a query names its own dataset (FROM or FROM NAMED).

    >>> has_dataset_clause("SELECT * FROM <g> { ?s ?p ?o }"), has_dataset_clause("SELECT ?from {}")
    (True, False)
    """
    return any(m.lastgroup == "word" and m.group().upper() == "FROM" for m in _TOKEN.finditer(text))
