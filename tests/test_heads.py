"""Decision heads: fitted only on what had matured, and they remove a reader's class bias."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from finkg.errors import InputError
from finkg.tasks.heads import Matured, Prequential, fit_as_of

START = dt.datetime(2020, 1, 1, 21, tzinfo=dt.UTC)
CLASSES = ("rise", "fall")


def biased_items(n: int, seed: int = 0, *, signal: float = 0.8) -> list[Matured]:
    """A reader that always prefers "rise" by 1.5 nats, plus `signal` nats of real content,
    and a card feature that carries the label as well."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        up = bool(rng.random() < 0.5)
        content = signal * (1 if up else -1) + rng.normal(0, 0.5)
        feature = (1.0 if up else -1.0) + rng.normal(0, 0.7)
        items.append(
            Matured(
                START + dt.timedelta(days=i),
                {"rise": -0.2 + content / 2, "fall": -1.7 - content / 2},
                (feature,),
                "rise" if up else "fall",
            )
        )
    return items


def accuracy(head, items: list[Matured]) -> float:  # type: ignore[no-untyped-def]
    return float(np.mean([head.decide(i.scores, i.features) == i.label for i in items]))


def test_the_raw_argmax_of_a_biased_reader_is_constant_and_the_prior_head_is_not() -> None:
    fitting, test = biased_items(300), biased_items(300, seed=1)
    later = START + dt.timedelta(days=400)
    raw = fit_as_of(fitting, as_of=later, kind="none", classes=CLASSES)
    prior = fit_as_of(fitting, as_of=later, kind="prior", classes=CLASSES)
    assert [raw.decide(i.scores, i.features) for i in test].count("rise") > 0.95 * len(test)
    decided = [prior.decide(i.scores, i.features) for i in test]
    assert 0.3 < decided.count("rise") / len(decided) < 0.7
    assert accuracy(prior, test) > 0.8 > accuracy(raw, test)


def test_the_card_head_uses_the_features_and_the_multinomial_head_both() -> None:
    fitting, test = biased_items(400), biased_items(400, seed=2)
    later = START + dt.timedelta(days=500)
    card = fit_as_of(fitting, as_of=later, kind="card", classes=CLASSES)
    both = fit_as_of(fitting, as_of=later, kind="multinomial", classes=CLASSES)
    assert accuracy(card, test) > 0.85
    assert accuracy(both, test) >= accuracy(card, test)
    p = both.probabilities(test[0].scores, test[0].features)
    assert p.shape == (2,) and p.sum() == pytest.approx(1.0)


def test_a_head_sees_nothing_that_matured_at_or_after_its_instant() -> None:
    items = biased_items(200)
    cut = items[100].matured_at
    before = fit_as_of(items[:100], as_of=cut, kind="multinomial", classes=CLASSES)
    # the future, including an item maturing exactly at the instant, changes nothing
    future = [Matured(i.matured_at, {"rise": 5.0, "fall": -9.0}, (3.0,), "fall") for i in items]
    every = fit_as_of(items[:100] + future[100:], as_of=cut, kind="multinomial", classes=CLASSES)
    assert every.n == before.n == 100
    assert every.sha256 == before.sha256 and every.parameters == before.parameters
    assert before.last is not None and before.last < cut


def test_the_prequential_head_refits_only_when_something_new_has_matured() -> None:
    items = biased_items(50)
    head = Prequential("prior", CLASSES)
    for item in items[:10]:
        head.add(item)
    first = head.at(items[5].matured_at)
    assert first.n == 5
    assert head.at(items[5].matured_at - dt.timedelta(hours=1)) is first  # nothing new
    assert head.at(items[9].matured_at + dt.timedelta(hours=1)).n == 10
    assert head.fits == 2


def test_unknown_heads_and_naive_instants_are_refused() -> None:
    with pytest.raises(InputError, match="unknown decision head"):
        fit_as_of([], as_of=START, kind="svm", classes=CLASSES)
    with pytest.raises(InputError, match="zone"):
        fit_as_of([], as_of=dt.datetime(2020, 1, 1), kind="prior", classes=CLASSES)  # noqa: DTZ001


def test_a_head_state_is_rdf_that_conforms_and_is_read_back_as_of_any_instant(store) -> None:  # type: ignore[no-untyped-def]
    from finkg.tasks.head_records import head_as_of, write_head

    items = biased_items(60)
    early = fit_as_of(items, as_of=items[20].matured_at, kind="multinomial", classes=CLASSES)
    late = fit_as_of(items, as_of=items[50].matured_at, kind="multinomial", classes=CLASSES)
    write_head(store, "movement", early)
    write_head(store, "movement", late)
    write_head(store, "movement", late)  # a rerun adds nothing
    assert head_as_of(store, "movement", "multinomial", items[10].matured_at) is None
    between = head_as_of(store, "movement", "multinomial", items[30].matured_at)
    assert between is not None and between["n"] == 20 and between["sha256"] == early.sha256
    assert between["state"]["weights"] == early.parameters["weights"]
    assert head_as_of(store, "movement", "multinomial", items[59].matured_at)["n"] == 50  # type: ignore[index]
    assert head_as_of(store, "movement", "prior", items[59].matured_at) is None


def test_a_head_whose_window_reaches_its_instant_breaks_its_shape(store) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from finkg.shapes.validate import validate_quads
    from finkg.tasks.head_records import head_quads

    items = biased_items(10)
    state = fit_as_of(items, as_of=items[5].matured_at, kind="prior", classes=CLASSES)
    _, good = head_quads(store, "movement", state)
    assert validate_quads(good).conforms
    _, bad = head_quads(store, "movement", replace(state, last=items[7].matured_at))
    report = validate_quads(bad)
    assert not report.conforms and "windowEnd" in str(report)
