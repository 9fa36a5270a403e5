"""Source memory (paper 000 §3.5): the reranking score by hand, updates per variant, and the
memory as of an instant, read back from the graph."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG
from finkg.retrieval.memory.source import (
    EVENT_TYPES,
    CellCounts,
    Feedback,
    MemoryParams,
    _derangement,
    class_weights,
    label_mix,
    memory_counts,
    rerank,
    source_memory,
    updates_for,
    write_updates,
)
from finkg.retrieval.pools import Candidate

NY = ZoneInfo("America/New_York")
T0 = dt.datetime(2020, 5, 1, 16, 0, tzinfo=NY)
EG = FKG.EarningsGuidance
PARAMS = MemoryParams()
WEIGHTS = {h: {-1: 2.0, 0: 0.5, 1: 2.0} for h in (1, 3, 5)}


def test_the_adjustment_is_equation_six_by_hand() -> None:
    a, b = 10.0, 2.0
    n, u = a + b, (a + 1) / (a + b + 2)
    expected = 0.30 * max(-0.2, min(0.2, n / (n + 30) * (u - 0.5)))
    assert CellCounts(a, b).adjustment(PARAMS) == pytest.approx(expected)
    assert CellCounts(0, 0).adjustment(PARAMS) == 0.0  # cold start: neutral
    assert CellCounts(10_000, 0).adjustment(PARAMS) == pytest.approx(0.30 * 0.20)  # clipped
    assert CellCounts(0, 10_000).adjustment(PARAMS) == pytest.approx(-0.30 * 0.20)
    assert CellCounts(10_000, 0).adjustment(MemoryParams(lam=0)) == 0.0  # memory off


def _cand(name: str, family: NamedNode, relevance: float) -> Candidate:
    return Candidate(NamedNode(f"https://e.org/{name}"), family, T0, False, 0.0, 0.0, relevance)


def test_rerank_moves_a_useful_family_up_and_keeps_relevance_otherwise() -> None:
    news, filing = _cand("n", FKG.News, 0.80), _cand("f", FKG.SecFiling, 0.75)
    assert [
        r.candidate for r in rerank([news, filing], event_type=EG, counts={}, params=PARAMS)
    ] == [
        news,
        filing,
    ]
    counts = {(FKG.SecFiling, EG, h): CellCounts(60, 10) for h in (1, 3, 5)}
    ranked = rerank([news, filing], event_type=EG, counts=counts, params=PARAMS)
    assert [r.candidate for r in ranked] == [filing, news]
    assert ranked[0].mean == pytest.approx(0.75 + CellCounts(60, 10).adjustment(PARAMS))
    # another event type's cells do not apply
    other = rerank([news, filing], event_type=FKG.LegalRegulatory, counts=counts, params=PARAMS)
    assert [r.candidate for r in other] == [news, filing]


def test_class_weights_balance_the_validation_mix() -> None:
    w = class_weights([0] * 6 + [1] * 2 + [-1] * 2)
    assert w == pytest.approx({0: 10 / 18, 1: 10 / 6, -1: 10 / 6})
    assert label_mix([0, 0, 1, -1]) == {-1: 0.25, 0: 0.5, 1: 0.25}


def _feedback(**changes) -> Feedback:
    base = dict(
        prediction=NamedNode("https://e.org/pred/1"),
        event_type=EG,
        horizon=5,
        predicted=1,
        realized=1,
        matured_at=T0,
        cited_families=(FKG.SecFiling, FKG.News, FKG.SecFiling),
        context_families=(FKG.News, FKG.SecFiling),
    )
    return Feedback(**(base | changes))


def test_cited_updates_split_credit_and_punish_errors(store: BaseStore) -> None:
    memory = source_memory(store, "cited")
    right = updates_for(_feedback(), memory, weights=WEIGHTS)
    assert {(u.cell[0], u.positive, u.negative) for u in right} == {
        (FKG.SecFiling, 1.0, 0.0),
        (FKG.News, 1.0, 0.0),
    }  # w = 2.0 split over the two cited families
    wrong = updates_for(_feedback(realized=0), memory, weights=WEIGHTS)
    assert {(u.positive, u.negative) for u in wrong} == {(0.0, 0.25)}
    assert updates_for(_feedback(cited_families=()), memory, weights=WEIGHTS) == []


def test_selected_evidence_credits_the_whole_context(store: BaseStore) -> None:
    memory = source_memory(store, "sel", variant="selected-evidence")
    fb = _feedback(cited_families=(), context_families=(FKG.News,))
    assert [(u.cell[0], u.positive) for u in updates_for(fb, memory, weights=WEIGHTS)] == [
        (FKG.News, 2.0)
    ]


def test_shuffled_labels_are_drawn_from_the_mix_deterministically(store: BaseStore) -> None:
    memory = source_memory(store, "shuf", variant="shuffled-labels", seed=3)
    mix = {5: {-1: 0.0, 0: 1.0, 1: 0.0}}  # every draw is 0: the +1 prediction is always wrong
    ups = updates_for(_feedback(), memory, weights=WEIGHTS, mix=mix)
    assert ups and all(u.positive == 0 and u.negative > 0 for u in ups)
    mix = {5: {-1: 0.3, 0: 0.4, 1: 0.3}}
    draws = [
        updates_for(
            _feedback(prediction=NamedNode(f"https://e.org/p/{i}")),
            memory,
            weights=WEIGHTS,
            mix=mix,
        )[0].positive
        > 0
        for i in range(200)
    ]
    assert 0.2 < sum(draws) / 200 < 0.4  # right about as often as the mix says +1
    again = [
        updates_for(
            _feedback(prediction=NamedNode(f"https://e.org/p/{i}")),
            memory,
            weights=WEIGHTS,
            mix=mix,
        )[0].positive
        > 0
        for i in range(200)
    ]
    assert draws == again
    with pytest.raises(InputError, match="mix"):
        updates_for(_feedback(), memory, weights=WEIGHTS)


def test_shuffled_event_types_move_every_type(store: BaseStore) -> None:
    memory = source_memory(store, "evt", variant="shuffled-event-types", seed=1)
    perm = _derangement(memory)
    assert sorted(perm.values(), key=str) == sorted(EVENT_TYPES, key=str)
    assert all(perm[e] != e for e in EVENT_TYPES)
    (u, *_) = updates_for(_feedback(), memory, weights=WEIGHTS)
    assert u.cell[1] == perm[EG] != EG


def test_the_memory_as_of_an_instant_sums_only_matured_updates(store: BaseStore) -> None:
    memory = source_memory(store, "cited")
    early = updates_for(_feedback(), memory, weights=WEIGHTS)
    late = updates_for(
        _feedback(
            prediction=NamedNode("https://e.org/pred/2"),
            realized=-1,
            matured_at=T0 + dt.timedelta(days=3),
        ),
        memory,
        weights=WEIGHTS,
    )
    write_updates(store, memory, early + late)
    stored = set(store.quads(store.graphs.memory))
    write_updates(store, memory, early + late)  # the same feedback again: nothing new
    assert set(store.quads(store.graphs.memory)) == stored
    at_t0 = memory_counts(store, memory, T0)
    assert at_t0 == {}  # matured exactly at T0: not strictly before
    after = memory_counts(store, memory, T0 + dt.timedelta(days=1))
    assert after[(FKG.SecFiling, EG, 5)] == CellCounts(1.0, 0.0, 1)
    both = memory_counts(store, memory, T0 + dt.timedelta(days=4))
    assert both[(FKG.SecFiling, EG, 5)] == CellCounts(1.0, 1.0, 2)
    other = source_memory(store, "other")
    assert memory_counts(store, other, T0 + dt.timedelta(days=4)) == {}  # memories do not mix


def test_params_and_variants_are_checked() -> None:
    with pytest.raises(InputError, match="kappa"):
        MemoryParams(kappa=0)
    with pytest.raises(InputError, match="variant"):
        source_memory(None, "x", variant="everything")  # type: ignore[arg-type]


def test_the_timeline_agrees_with_the_query_at_every_instant(store: BaseStore) -> None:
    from finkg.retrieval.memory.source import MemoryTimeline

    memory = source_memory(store, "cited")
    feedback = [
        _feedback(
            prediction=NamedNode(f"https://e.org/pred/{i}"),
            realized=(-1, 0, 1)[i % 3],
            horizon=(1, 3, 5)[i % 3],
            event_type=EVENT_TYPES[i % 5],
            matured_at=T0 + dt.timedelta(hours=7 * i),
        )
        for i in range(40)
    ]
    write_updates(
        store, memory, [u for f in feedback[:25] for u in updates_for(f, memory, weights=WEIGHTS)]
    )
    timeline = MemoryTimeline(store, memory)
    write_updates(
        store, memory, [u for f in feedback[25:] for u in updates_for(f, memory, weights=WEIGHTS)]
    )
    assert timeline.counts(T0 + dt.timedelta(days=30)) != memory_counts(
        store, memory, T0 + dt.timedelta(days=30)
    )  # it has not seen the later writes yet
    timeline.refresh()
    for hours in (-1, 0, 1, 7, 50, 51, 100, 180, 400):
        at = T0 + dt.timedelta(hours=hours)
        ours, reference = timeline.counts(at), memory_counts(store, memory, at)
        assert ours.keys() == reference.keys(), hours
        for key in ours:
            assert ours[key].positive == pytest.approx(reference[key].positive)
            assert ours[key].negative == pytest.approx(reference[key].negative)
            assert ours[key].updates == reference[key].updates


def test_two_news_families_keep_their_own_cells_and_rerank(store: BaseStore) -> None:
    """Publisher families (finkg's extension of paper 000's two families): a memory over
    news alone learns that press releases paid off and analysis did not, in cells of their
    own, and moves a less relevant press release above an analysis piece."""
    memory = source_memory(store, "cited")
    feedback = [
        _feedback(
            prediction=NamedNode(f"https://e.org/pred/{family.value[-4:]}/{i}"),
            realized=1 if family == FKG.PressRelease else -1,  # the +1 calls on analysis fail
            matured_at=T0 + dt.timedelta(hours=i),
            cited_families=(family,),
            context_families=(FKG.PressRelease, FKG.Analysis),
        )
        for family in (FKG.PressRelease, FKG.Analysis)
        for i in range(30)
    ]
    write_updates(
        store, memory, [u for f in feedback for u in updates_for(f, memory, weights=WEIGHTS)]
    )
    counts = memory_counts(store, memory, T0 + dt.timedelta(days=2))
    assert counts == {
        (FKG.PressRelease, EG, 5): CellCounts(60.0, 0.0, 30),
        (FKG.Analysis, EG, 5): CellCounts(0.0, 60.0, 30),
    }
    release, analysis = _cand("r", FKG.PressRelease, 0.70), _cand("a", FKG.Analysis, 0.75)
    params = MemoryParams(horizons=(5,))
    static = rerank([release, analysis], event_type=EG, counts={}, params=params)
    assert [r.candidate for r in static] == [analysis, release]
    learned = rerank([release, analysis], event_type=EG, counts=counts, params=params)
    assert [r.candidate for r in learned] == [release, analysis]
    assert learned[0].mean == pytest.approx(0.70 + 0.30 * 0.20)  # clipped at +delta
