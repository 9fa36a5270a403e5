"""A rule-following reader for the event-impact prompt: deterministic, no weights, no network.

`rule_analyst()` answers paper 000's impact prompt the way a careful rule-follower would:
it reads the retrieved evidence in the order given (the ranking is the retrieval layer's
whole say), trusts only items dated within the last week, takes the first one with a
directional cue (a filing raising or lowering guidance; news whose shares rose or fell, or
that calls something a clear positive or negative), predicts that direction at every
horizon and cites it; with nothing directional it predicts 0 and cites nothing. Asked to
score the options of a scored prompt (`tasks/impact/scoring.py`), it gives the option of
that direction probability 0.9 and each other 0.05, and the id it follows (or "none")
the same when asked which item matters most. It never
sees prices or labels, and it reads the anchor's headline only as the event, not as a cue.

It is the frozen reader of the demo and of the tests: because it follows the best-ranked
directional item, anything that reorders the evidence (paper 000's source memory) changes
what it predicts, which is what makes the memory's effect measurable without an LLM. It is
labelled `rule-analyst` in every run it writes, so its outputs are never mistaken for a
model's.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Sequence

from finkg.reader.llm import Message, ScriptedLLM

MODEL_ID = "rule-analyst"
RECENT_DAYS = 7
UP = re.compile(r"raises (full-year guidance|its outlook)|shares rose|a clear positive", re.I)
DOWN = re.compile(r"lowers (its outlook|its full-year guidance)|shares fell|a clear negative", re.I)
LINE = re.compile(r"^([NFD]\d+) \[[^,]+, (\d{4}-\d{2}-\d{2})\]: (.*)$")
DAY = re.compile(r"prediction_day: (\d{4}-\d{2}-\d{2})")


def cue(text: str) -> int:
    """+1, -1 or 0: the direction an evidence text states.

    >>> cue("Acme raises full-year guidance."), cue("Acme shares fell."), cue("Acme met.")
    (1, -1, 0)
    """
    return 1 if UP.search(text) else -1 if DOWN.search(text) else 0


OPTION_OF = {1: "up", 0: "neutral", -1: "down"}
CHOSEN, OTHER = math.log(0.9), math.log(0.05)


def rule_of(user: str) -> tuple[int, list[str], str]:
    """The rule's direction, the id it rests on, and why, for one rendered impact prompt."""
    day = DAY.search(user)
    today = dt.date.fromisoformat(day.group(1)) if day else dt.date.max
    for line in user.splitlines():
        m = LINE.match(line)
        if not m or (today - dt.date.fromisoformat(m.group(2))).days > RECENT_DAYS:
            continue
        direction = cue(m.group(3))
        if direction:
            return direction, [m.group(1)], f"{m.group(1)} is recent and directional"
    return 0, [], "no recent directional evidence"


def respond(messages: Sequence[Message]) -> str:
    """The JSON reply to one rendered impact prompt."""
    user = messages[-1]["content"]
    direction, ids, why = rule_of(user)
    value = {1: "+1", 0: "0", -1: "-1"}[direction]
    signal = {"signal": value, "ids": ids, "reason": why}
    return json.dumps(
        {
            "event_type": "rule",
            "signals": {"1D": signal, "3D": signal, "5D": signal},
            "main_uncertainty": "a rule, not a reader",
        }
    )


def score(messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
    """Option log-probabilities for a scored impact prompt: a direction question's option of
    the rule's direction at 0.9, each other at 0.05 (the rule is the same at every horizon);
    a citation question's id the rule follows at 0.9, or "none" when it follows none."""
    direction, ids, _ = rule_of(messages[-1]["content"])
    if set(options) == set(OPTION_OF.values()):
        chosen = OPTION_OF[direction]
    else:
        chosen = ids[0] if ids and ids[0] in options else "none"
    return {o: CHOSEN if o == chosen else OTHER for o in options}


def rule_analyst() -> ScriptedLLM:
    """The rule-following reader behind the LLM protocol (module docstring)."""
    return ScriptedLLM(respond=respond, scores=score, model_id=MODEL_ID)
