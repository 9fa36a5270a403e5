"""Reader calls with the scripted fake: templates, repair, citations, cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finkg.errors import InputError
from finkg.reader.llm import ContextOverflow, ScriptedLLM, messages_hash
from finkg.reader.read import OutputCache, narrow_schema, prompt, read
from finkg.reader.schemas import OUTPUTS, Answer, ImpactPrediction

VALUES = {
    "anchor_id": "A0",
    "headline": "Acme raises guidance",
    "ticker": "ZQAW",
    "prediction_day": "2019-05-02",
    "event_type": "Earnings & Guidance",
    "evidence": "N1: Acme beat.\nF1: 8-K Item 2.02.",
    "market_card": "flat market",
}


def impact(ids: list[str], signal: str = "+1") -> str:
    one = {"signal": signal, "ids": ids, "reason": "guidance"}
    return json.dumps(
        {
            "event_type": "Earnings & Guidance",
            "signals": {"1D": one, "3D": one, "5D": one},
            "main_uncertainty": "m",
        }
    )


def test_templates_render_and_are_hashed() -> None:
    p = prompt("impact")
    messages = p.render(VALUES)
    assert messages[0]["role"] == "system" and "Return valid JSON only" in messages[0]["content"]
    assert "A0: Acme raises guidance" in messages[1]["content"]
    assert len(p.sha256) == 64
    with pytest.raises(InputError, match=r"\$market_card"):
        p.render({k: v for k, v in VALUES.items() if k != "market_card"})


def test_a_valid_reply_is_read_and_citations_checked() -> None:
    llm = ScriptedLLM(replies=[impact(["N1", "F9", "F1"])])
    result = read(llm, prompt("impact"), VALUES, ImpactPrediction, allowed_ids={"N1", "F1"})
    assert result.json_valid and result.attempts == 1
    assert result.invalid_citations == ["F9", "F9", "F9"]
    assert result.output.signals.d1.ids == ["N1", "F1"]  # type: ignore[union-attr]
    assert set(result.cited) == {"N1", "F1"}


def test_an_invalid_reply_is_repaired_at_most_twice() -> None:
    llm = ScriptedLLM(replies=["not json", '{"event_type": "x"}', impact(["N1"])])
    result = read(llm, prompt("impact"), VALUES, ImpactPrediction, allowed_ids={"N1"})
    assert result.json_valid and result.attempts == 3
    repair = llm.calls[1][-1]["content"]
    assert repair.startswith("That reply does not match the required JSON schema")
    llm = ScriptedLLM(replies=["no", "still no", "never"])
    failed = read(llm, prompt("impact"), VALUES, ImpactPrediction)
    assert not failed.json_valid and failed.attempts == 3 and failed.output is None
    assert failed.error


def test_the_cache_returns_the_same_reply_without_calling(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path / "replies.sqlite")
    llm = ScriptedLLM(replies=[impact(["N1"])])
    first = read(llm, prompt("impact"), VALUES, ImpactPrediction, cache=cache)
    second = read(llm, prompt("impact"), VALUES, ImpactPrediction, cache=cache)  # no reply left
    assert second.cached and not first.cached
    assert second.output == first.output and second.prompt_hash == first.prompt_hash


def test_the_cache_keeps_the_replies_of_two_decoders_apart(tmp_path: Path) -> None:
    """A backend whose decoding changed (`LlamaCpp.decoding`) must not get the replies the
    old decoder cached for the same prompt."""
    cache = OutputCache(tmp_path / "replies.sqlite")
    old = ScriptedLLM(replies=[impact(["N1"], "+1")])
    read(old, prompt("impact"), VALUES, ImpactPrediction, cache=cache)
    new = ScriptedLLM(replies=[impact(["N1"], "-1")])
    new.decoding = "choice-2"  # type: ignore[attr-defined]
    first = read(new, prompt("impact"), VALUES, ImpactPrediction, cache=cache)
    again = read(new, prompt("impact"), VALUES, ImpactPrediction, cache=cache)
    assert not first.cached and again.cached
    assert first.output.signals.d1.signal == again.output.signals.d1.signal == "-1"  # type: ignore[union-attr]
    assert (
        first.prompt_hash
        == read(old, prompt("impact"), VALUES, ImpactPrediction, cache=cache).prompt_hash
    )


def test_prompt_hash_changes_with_any_input() -> None:
    a = prompt("impact").render(VALUES)
    b = prompt("impact").render({**VALUES, "headline": "Acme cuts guidance"})
    assert messages_hash(a) != messages_hash(b)
    assert messages_hash(a, {"x": 1}) != messages_hash(a)


def test_narrowed_schemas_allow_only_given_ids() -> None:
    schema = narrow_schema(ImpactPrediction.model_json_schema(), {"N1", "F1"})
    ids = schema["$defs"]["HorizonSignal"]["properties"]["ids"]
    assert ids["items"]["enum"] == ["F1", "N1"]
    assert ids["maxItems"] == 2  # a looping model cannot cite the same id forever
    answer = narrow_schema(Answer.model_json_schema(), {"C1"})
    assert answer["$defs"]["NumberClaim"]["properties"]["citation"]["enum"] == ["C1"]


def test_every_output_schema_is_strict() -> None:
    for model in OUTPUTS.values():
        assert model.model_json_schema().get("additionalProperties") is False


def test_a_repair_past_the_context_window_fails_the_read_without_raising() -> None:
    def respond(messages) -> str:
        if len(messages) > 2:  # the repair: prompt, failed reply, complaint
            raise ContextOverflow("tiny: Requested tokens (4369) exceed context window of 4096")
        return "not json"

    failed = read(ScriptedLLM(respond=respond), prompt("impact"), VALUES, ImpactPrediction)
    assert not failed.json_valid and failed.output is None and failed.attempts == 1
    assert "does not fit the context window" in (failed.error or "")

    def too_long(messages) -> str:
        raise ContextOverflow("tiny: Requested tokens (9000) exceed context window of 4096")

    with pytest.raises(ContextOverflow):  # a first prompt too long is the caller's error
        read(ScriptedLLM(respond=too_long), prompt("impact"), VALUES, ImpactPrediction)


def test_no_output_schema_bounds_a_string_beyond_what_llama_cpp_grammars_take() -> None:
    """llama.cpp turns maxLength into a bounded repetition in the grammar; the Answer schema's
    1,200-character summary crashed the packaged readers (a segfault while sampling), 400
    works. Every output model keeps its bounded strings at 400 or less."""
    from finkg.reader.schemas import OUTPUTS

    def bounds(schema: object) -> list[int]:
        if isinstance(schema, dict):
            found = [schema["maxLength"]] if "maxLength" in schema else []
            return found + [b for v in schema.values() for b in bounds(v)]
        if isinstance(schema, list):
            return [b for v in schema for b in bounds(v)]
        return []

    for name, model in OUTPUTS.items():
        assert max(bounds(model.model_json_schema()), default=0) <= 400, name
