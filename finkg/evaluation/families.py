"""The family mix of candidate pools: what a source memory kept per family can reorder.

A memory reorders a pool only between families, so a pool whose candidates all share one
family is never reordered. `family_mix` counts, over a set of pools given as the source
families of their candidates, the pools of one family alone, the pools holding each
family, and each family's share of all candidates; `top=True` counts paper 000's families
(`top_family`: a press release is News). `family_mix_lines` prints both views, the paper's
two families and finkg's publisher families (finkg's extension), as Markdown.

>>> from finkg.ontology.terms import FKG
>>> pools = [[FKG.PressRelease, FKG.Analysis], [FKG.Analysis, FKG.Analysis], []]
>>> mix = family_mix(pools)
>>> mix.pools, mix.empty, mix.one_family, mix.shares[FKG.Analysis]
(3, 1, 1, 0.75)
>>> family_mix(pools, top=True).one_family  # both are News in the paper's view
2
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.ontology.families import family_label, top_family


@dataclass(frozen=True)
class FamilyMix:
    pools: int  # every pool counted, empty ones included
    empty: int  # pools without a candidate
    alone: Mapping[NamedNode, int]  # pools whose candidates are all of this one family
    holding: Mapping[NamedNode, int]  # pools with at least one candidate of the family
    candidates: int
    shares: Mapping[NamedNode, float]  # the family's share of all candidates

    @property
    def one_family(self) -> int:
        """Pools of one family alone: a memory kept per family cannot reorder them."""
        return sum(self.alone.values())


def family_mix(pools: Iterable[Iterable[NamedNode]], *, top: bool = False) -> FamilyMix:
    """The mix of `pools`, each given as its candidates' source families (one per
    candidate); with `top`, each family counted as its top family (paper 000's)."""
    n = empty = 0
    alone: Counter[NamedNode] = Counter()
    holding: Counter[NamedNode] = Counter()
    counts: Counter[NamedNode] = Counter()
    for pool in pools:
        families = [top_family(f) if top else f for f in pool]
        n += 1
        empty += not families
        counts.update(families)
        holding.update(set(families))
        if len(set(families)) == 1:
            alone[families[0]] += 1
    total = sum(counts.values())
    return FamilyMix(
        n,
        empty,
        dict(alone),
        dict(holding),
        total,
        {f: c / total for f, c in counts.items()},
    )


def family_mix_lines(pools: Iterable[Iterable[NamedNode]]) -> list[str]:
    """Markdown: the mix in paper 000's two families, then in finkg's publisher families."""
    pools = [list(p) for p in pools]
    lines = []
    for top, title in (
        (True, "Paper 000's families (News, SEC filing)"),
        (False, "finkg's families (news split by publisher: finkg's extension of the paper)"),
    ):
        mix = family_mix(pools, top=top)
        lines += [
            f"{title}: {mix.one_family:,} of {mix.pools:,} pools hold one family alone "
            f"({mix.one_family / max(mix.pools, 1):.0%}; {mix.empty:,} empty), "
            f"{mix.candidates:,} candidates.",
            "",
            "| family | share of candidates | pools holding it | pools of it alone |",
            "|---|---|---|---|",
            *(
                f"| {family_label(f)} | {share:.1%} | {mix.holding[f]:,} | "
                f"{mix.alone.get(f, 0):,} |"
                for f, share in sorted(mix.shares.items(), key=lambda x: (-x[1], x[0].value))
            ),
            "",
        ]
    return lines[:-1]
