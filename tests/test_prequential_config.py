"""The impact run as a component (issue 39): `Prequential` checks what it is built from,
so a bad weight table, an instant given for a day or an unzoned citation read is refused
when the run is made, naming the field, not found mid-run."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.store import open_store
from finkg.tasks.impact.prequential import Prequential


def _run(**changes: Any) -> Prequential:
    parts: dict[str, Any] = {
        "store": open_store(None),
        "llm": None,
        "texts": None,
        "vectors": None,
        "calendar": get_calendar(),
        "weights": {1: {0: 1.0, 1: 2.5}},
    }
    return Prequential(**(parts | changes))


def test_a_run_is_built_from_good_parts() -> None:
    run = _run(mix={1: {0: 0.0}}, since=dt.date(2020, 1, 2))
    assert run.config.memory.horizons  # the default config
    assert run.since == dt.date(2020, 1, 2)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"weights": {1: {0: -1.0}}}, "weights[1][0]"),
        ({"weights": {5: {2: float("nan")}}}, "weights[5][2]"),
        ({"mix": {1: {1: "much"}}}, "mix[1][1]"),
        ({"since": dt.datetime(2020, 1, 2, tzinfo=dt.UTC)}, "since"),
        ({"citations": [(dt.datetime(2020, 1, 2, 9), {"N1": -1.0})]}, "citations"),  # noqa: DTZ001  # the unzoned instant refused
    ],
)
def test_a_bad_part_is_refused_when_the_run_is_built(changes: dict, field: str) -> None:
    with pytest.raises(InputError) as e:
        _run(**changes)
    assert e.value.field == field
