"""The cost of the impact job's decision by scoring against the generated (grammar) replies
it replaced, on the same anchors: seconds per anchor and prompt tokens of each form, with
ratios whose intervals resample anchors (`benchmarks.impact --compare N`)."""

from __future__ import annotations

import time

import numpy as np

from finkg.reader.read import prompt, read
from finkg.reader.schemas import ImpactCompact, ImpactPrediction
from finkg.tasks.impact.predict import anchor_inputs, retrieve, shown_card
from finkg.tasks.impact.prompting import prompt_values
from finkg.tasks.impact.scoreboard import HORIZONS
from finkg.tasks.impact.scoring import questions, score_anchor


def compare_replies(store, llm, sample, *, texts, vectors, config, prices, calendar, n):  # type: ignore[no-untyped-def]
    """Seconds per anchor of the grammar replies (compact and full) and of scoring, no
    cache, the same anchors (static retrieval), each form over the anchors in a row, in both
    orders; ratios with intervals that resample anchors."""
    chosen = sample[:: max(1, len(sample) // n)][:n]
    values = []
    for a in chosen:
        inputs = anchor_inputs(
            store, a, texts=texts, vectors=vectors, config=config, prices=prices, calendar=calendar
        )
        got = retrieve(store, a, pool=inputs.pool, memory=None, config=config)
        chars = config.snippet_chars
        old, ids = prompt_values(store, a, got.context, chars, inputs.card)
        new, _ = prompt_values(store, a, got.context, chars, shown_card(inputs, config))
        values.append((old, new, sorted(ids), inputs.features))
    forms = {
        "grammar": (prompt("impact_compact"), ImpactCompact),
        "full": (prompt("impact"), ImpactPrediction),
    }
    times: dict[str, list[float]] = {k: [] for k in ("grammar", "full", "scored", "scored_same")}

    def first_prompt(v: dict, ids: list[str]) -> list:
        return questions(v, ids=ids, horizons=HORIZONS)[0][0]

    tokens = {
        "grammar": np.mean([llm.count_tokens(forms["grammar"][0].render(v[0])) for v in values]),
        "full": np.mean([llm.count_tokens(forms["full"][0].render(v[0])) for v in values]),
        "scored": np.mean([llm.count_tokens(first_prompt(v[1], v[2])) for v in values]),
    }

    def grammar_round() -> None:
        for key, (template, contract) in forms.items():
            for old, _, ids, _ in values:
                started = time.perf_counter()
                read(
                    llm, template, old, contract, allowed_ids=set(ids), max_tokens=config.max_tokens
                )
                times[key].append(time.perf_counter() - started)

    def scored_round() -> None:
        for old, new, ids, features in values:
            for key, v in (("scored", new), ("scored_same", old)):
                started = time.perf_counter()
                score_anchor(llm, v, ids=ids, horizons=HORIZONS, features=features, heads={})
                times[key].append(time.perf_counter() - started)

    for first, second in ((grammar_round, scored_round), (scored_round, grammar_round)):
        first()
        second()
    arrays = {k: np.array(v) for k, v in times.items()}
    timed = len(arrays["grammar"])  # every anchor once per round
    draws = np.random.default_rng(0).integers(0, timed, size=(1000, timed))
    out: dict[str, float] = {"anchors": len(chosen)}
    out |= {f"{k}_tokens": float(v) for k, v in tokens.items()}
    out |= {f"{k}_s": float(v.mean()) for k, v in arrays.items()}
    for key in ("scored", "scored_same"):
        for base, name in (("grammar", ""), ("full", "_full")):
            ratios = [arrays[base][i].mean() / arrays[key][i].mean() for i in draws]
            low, high = np.percentile(ratios, [2.5, 97.5])
            out |= {
                f"{key}{name}_ratio": float(arrays[base].mean() / arrays[key].mean()),
                f"{key}{name}_low": float(low),
                f"{key}{name}_high": float(high),
            }
    return out
