"""Source families as `finkg.ttl` declares them, and the family of a news item.

The concepts of `fkg:SourceFamilies`, their `skos:broader` links, labels and the publisher
sites of the news families are read from the packaged `finkg.ttl`; nothing here repeats
them. The publisher families narrower than `fkg:News` (press releases, analysis and
commentary, news reports) are finkg's extension of paper 000, which keeps two families,
News and SEC filings: `top_family` gives the paper's family of any concept.

A site is matched after `normalise_site` (lower case; a URL's host; a leading `www.`
dropped), itself first and then each parent domain, longest first, so a subdomain
belongs to its site unless it is listed itself; a site listed nowhere, or none, is News.

>>> family_of_site("www.BusinessWire.com").value
'https://w3id.org/finkg/ns#PressRelease'
>>> family_of_site("feeds.benzinga.com") == FKG.Analysis
True
>>> family_of_site("example.org") == family_of_site(None) == FKG.News
True
>>> top_family(FKG.NewsReport) == FKG.News, family_label(FKG.NewsReport)
(True, 'News report')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from urllib.parse import urlsplit

import pyoxigraph as ox
from pyoxigraph import NamedNode

from finkg.errors import FinkgError
from finkg.ontology import ontology_path
from finkg.ontology.terms import FKG, SKOS

__all__ = [
    "family_label",
    "family_of_site",
    "normalise_site",
    "publisher_sites",
    "source_families",
    "top_family",
    "with_narrower",
]


@dataclass(frozen=True)
class _Scheme:
    families: tuple[NamedNode, ...]  # every concept of fkg:SourceFamilies, by IRI
    broader: Mapping[NamedNode, NamedNode]
    labels: Mapping[NamedNode, str]
    sites: Mapping[str, NamedNode]


@cache
def _scheme() -> _Scheme:
    triples = [
        q.triple
        for q in ox.parse(path=str(ontology_path()), format=ox.RdfFormat.TURTLE)
        if isinstance(q.subject, NamedNode)
    ]
    scheme = (SKOS.inScheme, FKG.SourceFamilies)
    members = {t.subject for t in triples if (t.predicate, t.object) == scheme}
    broader: dict[NamedNode, NamedNode] = {}
    labels: dict[NamedNode, str] = {}
    sites: dict[str, NamedNode] = {}
    for t in triples:
        subject, o = t.subject, t.object
        if not isinstance(subject, NamedNode) or subject not in members:
            continue
        if t.predicate == SKOS.broader:
            if not isinstance(o, NamedNode):
                raise FinkgError(f"finkg.ttl: {subject.value} is narrower than {o}, not a concept")
            broader[subject] = o
        elif t.predicate == SKOS.prefLabel:
            labels[subject] = _text(o)
        elif t.predicate == FKG.publisherSite:
            site = _text(o)
            if normalise_site(site) != site or sites.get(site, subject) != subject:
                raise FinkgError(
                    f"finkg.ttl lists publisher site {site!r} twice or unnormalised "
                    "(lower case, no www.): fix the ontology"
                )
            sites[site] = subject
    return _Scheme(
        tuple(sorted(members, key=lambda n: n.value)),
        MappingProxyType(broader),
        MappingProxyType(labels),
        MappingProxyType(sites),
    )


def _text(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> str:
    """A label's or site's text in finkg.ttl (a literal)."""
    if not isinstance(term, ox.Literal):
        raise FinkgError(f"finkg.ttl gives {term} where a literal belongs: fix the ontology")
    return term.value


def source_families() -> tuple[NamedNode, ...]:
    """Every concept of `fkg:SourceFamilies`, the narrower ones included, sorted by IRI."""
    return _scheme().families


def publisher_sites() -> Mapping[str, NamedNode]:
    """The site -> family mapping of `finkg.ttl` (`fkg:publisherSite`), read-only."""
    return _scheme().sites


def normalise_site(site: str | None) -> str | None:
    """A publisher site as the mapping spells it: lower case, stripped, a URL's host (no
    port), no trailing dot and no leading `www.`; None when nothing is left.

    >>> normalise_site(" https://WWW.Reuters.com:443/article/x "), normalise_site("  ")
    ('reuters.com', None)
    """
    if site is None:
        return None
    text = site.strip().lower()
    try:
        host = urlsplit(text if "://" in text else "//" + text).hostname
    except ValueError:  # a malformed bracketed host: no site this mapping could list
        host = None
    host = (host or "").removeprefix("www.").rstrip(".")
    return host or None


def family_of_site(site: str | None, *, url: str | None = None) -> NamedNode:
    """The source family of a news item from its publisher `site`; when the site is missing
    or listed nowhere, from the host of the item's `url`; else `fkg:News`."""
    sites = _scheme().sites
    for name in (site, url):
        host = normalise_site(name)
        while host:
            if host in sites:
                return sites[host]
            host = host.partition(".")[2] if host.count(".") > 1 else None
    return FKG.News


def top_family(family: NamedNode) -> NamedNode:
    """The broadest concept above `family` (itself for a top concept or a term of no
    scheme): paper 000's family of a publisher family is `fkg:News`."""
    return _upwards(family)[-1]


def family_label(family: NamedNode) -> str:
    """The family's `skos:prefLabel`, or its local name for a term of no scheme."""
    return _scheme().labels.get(family) or family.value.rsplit("#", 1)[-1]


def with_narrower(families: Iterable[NamedNode]) -> frozenset[NamedNode]:
    """`families` and every concept below them: a pool asked for `fkg:News` also draws
    press releases, analysis and news reports."""
    wanted = set(families)
    return frozenset(
        f for f in (*_scheme().families, *wanted) if not wanted.isdisjoint(_upwards(f))
    )


def _upwards(family: NamedNode) -> list[NamedNode]:
    """`family`, its broader concept, that one's, ... (a cycle stops the walk)."""
    broader, out = _scheme().broader, [family]
    while out[-1] in broader and broader[out[-1]] not in out:
        out.append(broader[out[-1]])
    return out
