"""An adapted reader beside the frozen one (paper 001's StockLLM: a LoRA adapter trained by
`finkg train-reader --job movement`): `none` and the chosen retriever (and any retriever
asked for by name: a FinSeer trained on the adapted reader's feedback, paper 001's pairing)
read every validation and test query again with the adapted reader, and a table more holds
both readers' rules,
each adapted rule (`none+lora/prior`) paired with the frozen reader's same rule
(`compare.table`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from finkg.errors import InputError
from finkg.retrieval.sequence_retrievers import SequenceRetriever
from finkg.tasks.movement.compare import ADAPTED, Comparison, Labelled, Reader, table


def compare_adapted(
    c: Comparison,
    retrievers: Mapping[str, SequenceRetriever],
    validation: Labelled,
    test: Labelled,
    adapted: Reader,
    *,
    also: Sequence[str] = (),
    n: int = 1000,
    seed: int = 0,
) -> Comparison:
    """`c` with a table more: `none`, the chosen retriever and those in `also` read by the
    frozen reader and by `adapted` on every test query, their heads fitted on the same
    validation queries (module docstring). The choice stays the frozen reader's."""
    unread = [r for r in also if r not in c.test or len(c.test[r]) < len(test)]
    if unread:
        raise InputError(
            "the adapted reader is paired with the frozen reader's reads of every test query: "
            "name retrievers that read them all (the chosen one, or --queries-small equal to "
            "--queries)",
            field="also",
            value=unread,
        )
    wanted = ("none", c.choice.best, *also)
    names = [r for r in dict.fromkeys(wanted) if r and r in retrievers]
    fitting, tested = dict(c.fitting), dict(c.test)
    for r in names:
        fitting[r + ADAPTED] = adapted.items(retrievers[r], validation, "validation, adapted")
        tested[r + ADAPTED] = adapted.items(retrievers[r], test, "test, adapted")
    extra = table(
        f"The adapted reader beside the frozen one on all {len(test)} test queries",
        fitting,
        tested,
        [q.key for q, _ in test],
        [*names, *(r + ADAPTED for r in names)],
        n=n,
        seed=seed,
    )
    throughput = c.throughput | {r + ADAPTED: t.summary() for r, t in adapted.throughput.items()}
    return Comparison(c.choice, (*c.tables, extra), fitting, tested, throughput)
