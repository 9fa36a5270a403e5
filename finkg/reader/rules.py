"""A rule-following reader for the event-impact prompt: deterministic, no weights, no network.

`rule_analyst()` answers paper 000's impact prompt the way a careful rule-follower would:
it reads the retrieved evidence in the order given (the ranking is the retrieval layer's
whole say), trusts only items dated within the last week, takes the first one with a
directional cue (a filing raising or lowering guidance; news whose shares rose or fell, or
that calls something a clear positive or negative), predicts that direction at every
horizon and cites it; with nothing directional it predicts 0 and cites nothing. It never
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


def respond(messages: Sequence[Message]) -> str:
    """The JSON reply to one rendered impact prompt."""
    user = messages[-1]["content"]
    day = DAY.search(user)
    today = dt.date.fromisoformat(day.group(1)) if day else dt.date.max
    value, ids, why = "0", [], "no recent directional evidence"
    for line in user.splitlines():
        m = LINE.match(line)
        if not m or (today - dt.date.fromisoformat(m.group(2))).days > RECENT_DAYS:
            continue
        direction = cue(m.group(3))
        if direction:
            value = "+1" if direction > 0 else "-1"
            ids, why = [m.group(1)], f"{m.group(1)} is recent and directional"
            break
    signal = {"signal": value, "ids": ids, "reason": why}
    return json.dumps(
        {
            "event_type": "rule",
            "signals": {"1D": signal, "3D": signal, "5D": signal},
            "main_uncertainty": "a rule, not a reader",
        }
    )


def rule_analyst() -> ScriptedLLM:
    """The rule-following reader behind the LLM protocol (module docstring)."""
    return ScriptedLLM(respond=respond, model_id=MODEL_ID)
