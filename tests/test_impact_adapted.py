"""Paper 000's Table 2 from two impact runs (`benchmarks.impact_adapted`): each run's
decisions written beside its report, read back and paired on the anchors both labelled;
synthetic decisions, no store, no reader."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.impact_adapted import NO_SKILL, Run, decisions_json, pair, report, score
from finkg.evaluation.labels import ResidualLabel
from finkg.tasks.impact.history import ScoredItem
from finkg.tasks.impact.scoreboard import HORIZONS, Anchors, labelled_anchors

OPTION = {1: "up", 0: "neutral", -1: "down"}
START = dt.date(2020, 1, 6)


def _board(n: int, seed: int = 0) -> Anchors:
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        day = START + dt.timedelta(days=i)
        decision = dt.datetime.combine(day, dt.time(9), dt.UTC)
        label = int(rng.choice([-1, 0, 0, 1]))
        for h in HORIZONS:
            found = ResidualLabel(
                "AAA", day, h, 0, 0, 0, 1, 0.01, label * 1.5, label, 200,
                decision + dt.timedelta(days=h),
            )  # fmt: skip
            items.append(
                ScoredItem(
                    prediction=f"p-{i}",
                    anchor=f"a-{i}",
                    ticker="AAA",
                    headline="x",
                    prediction_day=day,
                    decision=decision,
                    horizon=h,
                    value=0,
                    logprobs={},
                    features=(),
                    label=found,
                )
            )
    return labelled_anchors(items)


def _run(path: Path, board: Anchors, decided: dict[str, np.ndarray], adapter: str | None) -> Path:
    facts = {
        "command": f"impact {adapter}", "reader": f"r@{adapter}", "head": "prior",
        "validation": "2019-07-01 to 2019-12-31", "test": "2020-01-01 to 2020-12-31",
    }  # fmt: skip
    path.write_text(json.dumps(decisions_json(facts, board, decided, adapter=adapter)))
    return path


def _rules(board: Anchors, truth_share: float, seed: int) -> dict[str, np.ndarray]:
    """Decisions right on about `truth_share` of the anchors, neutral elsewhere."""
    rng = np.random.default_rng(seed)
    right = rng.random(len(board.keys))[:, None] < truth_share
    guess = np.where(right, board.labels, "neutral")
    rules = ("static", "cited", "none", "prior", "multinomial", *NO_SKILL)
    return {r: guess.copy() if r not in NO_SKILL else np.full_like(guess, "neutral") for r in rules}


def test_two_runs_pair_on_the_anchors_both_labelled_in_the_frozen_order(tmp_path: Path) -> None:
    board = _board(40)
    frozen = _run(tmp_path / "f.json", board, _rules(board, 0.2, 1), None)
    later = _board(40)
    adapted_rules = _rules(later, 0.9, 2)
    # the adapted run lists its anchors in another order, one missing
    order = list(range(1, 40))[::-1]
    data = json.loads(_run(tmp_path / "a.json", later, adapted_rules, "lora-1").read_text())
    data["anchors"] = [data["anchors"][i] for i in order]
    data["days"] = [data["days"][i] for i in order]
    data["labels"] = [data["labels"][i] for i in order]
    data["decided"] = {r: [d[i] for i in order] for r, d in data["decided"].items()}
    (tmp_path / "a.json").write_text(json.dumps(data))

    paired = pair(Run.read(frozen), Run.read(tmp_path / "a.json"))

    assert paired.anchors == board.keys[1:]
    assert paired.decided["LoRA + no memory"].tolist() == adapted_rules["static"][1:].tolist()
    assert (
        paired.decided["frozen + no memory"].tolist()
        == _rules(board, 0.2, 1)["static"][1:].tolist()
    )
    assert len(paired.weeks) == 39 and len(set(paired.weeks)) == 6


def test_the_report_says_the_adapted_reader_is_better_when_it_is(tmp_path: Path) -> None:
    board = _board(120)
    frozen = Run.read(_run(tmp_path / "f.json", board, _rules(board, 0.1, 1), None))
    adapted = Run.read(_run(tmp_path / "a.json", board, _rules(board, 0.95, 2), "lora-1"))
    paired = pair(frozen, adapted)
    rows = {r.name: r for r in score(paired, n=60)}

    lora = rows["LoRA + no memory"]
    assert lora.versus["frozen + no memory"].low > 0
    assert lora.versus_grouped["frozen + no memory"].low > 0
    text = "\n".join(report(frozen, adapted, paired, list(rows.values())))
    assert "| LoRA + no memory | frozen + no memory | +" in text
    assert "adapter `lora-1`" in text and "**120 test anchors**" in text


def test_runs_that_label_an_anchor_differently_are_refused(tmp_path: Path) -> None:
    board = _board(30)
    frozen = _run(tmp_path / "f.json", board, _rules(board, 0.5, 1), None)
    data = json.loads(_run(tmp_path / "a.json", board, _rules(board, 0.5, 2), "x").read_text())
    data["labels"][3] = ["up", "up", "up"] if data["labels"][3][0] != "up" else ["down"] * 3
    (tmp_path / "a.json").write_text(json.dumps(data))

    with pytest.raises(SystemExit, match="label the same anchors differently"):
        pair(Run.read(frozen), Run.read(tmp_path / "a.json"))
