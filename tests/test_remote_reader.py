"""The endpoint reader against finkg's OpenAI-compatible stub on loopback (issue 29): retries
with back-off on 429/5xx, time-outs and dropped connections, each attempt recorded; a request
that fails for good is named; a bound on requests in flight; option scoring through prompt
log-probabilities (`echo`) or the first token's `top_logprobs`, detected once, and a server
that offers neither refused with what it lacks."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from finkg.errors import InputError
from finkg.reader.llm import ReaderError, ScriptedLLM
from finkg.reader.read import OutputCache, score_many
from finkg.reader.transport.concurrent import Skipped, concurrency_of, map_ordered, run_all
from finkg.reader.transport.endpoint import HTTPRefused, RequestFailed
from finkg.reader.transport.openai_http import OpenAICompatible
from finkg.reader.transport.remote_scoring import MISSING, ChatTemplate
from finkg.reader.transport.stub import StubServer, chatml, token_logprob, tokens
from finkg.reader.transport.usage import metered

MESSAGES = [{"role": "system", "content": "Answer."}, {"role": "user", "content": "Up or down?"}]


TEMPLATE = ChatTemplate("chatml", chatml, "<|im_end|>")


def _reader(stub: StubServer, **kw) -> OpenAICompatible:  # type: ignore[no-untyped-def]
    kw.setdefault("backoff_s", 0.01)
    return OpenAICompatible(stub.url, model="stub", **kw)


def _expected(messages, option: str) -> float:  # type: ignore[no-untyped-def]
    """The stub's log-probability of `option` and the end of turn after the prompt."""
    prompt = chatml(messages)
    total, before = 0.0, prompt
    for t in tokens(option + "<|im_end|>"):
        total += token_logprob(before, t)
        before += t
    return total


# -- retries ---------------------------------------------------------------------------------


def test_429_and_5xx_are_retried_with_each_attempt_recorded() -> None:
    with StubServer(failures=[503, 429, 502]) as stub:
        llm = _reader(stub)
        with metered() as usage:
            g = llm.generate(MESSAGES)
    assert g.text == '{"ok": true}'
    assert [s.split()[-1] for s in stub.seen] == ["503", "429", "502", "200"]
    assert usage.requests == 1 and usage.retries == 3 and not usage.failed
    assert len(usage.attempts) == 3
    assert "attempt 1: HTTP 503" in usage.attempts[0] and "retried after" in usage.attempts[0]
    assert "attempt 2: HTTP 429" in usage.attempts[1]
    assert usage.tokens_in > 0 and usage.tokens_out > 0


def test_a_timeout_and_a_dropped_connection_are_retried() -> None:
    with StubServer(failures=["hang", "drop"], hang_s=1.5) as stub:
        llm = _reader(stub, timeout_s=0.5)
        with metered() as usage:
            g = llm.generate(MESSAGES)
    assert g.text == '{"ok": true}'
    assert usage.retries == 2
    assert "no answer within 0.5 s" in usage.attempts[0]
    assert "connection dropped" in usage.attempts[1]


def test_a_request_failing_on_every_attempt_is_named() -> None:
    with StubServer(failures=[503] * 3) as stub:
        llm = _reader(stub, retries=2)
        with metered() as usage, pytest.raises(RequestFailed) as caught:
            llm.generate(MESSAGES)
    e = caught.value
    assert e.request == f"POST {stub.url}/v1/chat/completions" and e.attempts == 3
    assert str(e).startswith(f"POST {stub.url}/v1/chat/completions failed after 3 attempt(s)")
    assert usage.failed == [str(e)] and usage.retries == 2 and usage.requests == 0
    assert "gave up" in usage.attempts[-1]


def test_a_refusal_is_not_retried() -> None:
    with StubServer(failures=[400]) as stub:
        llm = _reader(stub)
        with pytest.raises(HTTPRefused) as caught:
            llm.generate(MESSAGES)
    assert caught.value.status == 400 and len(stub.seen) == 1


def test_a_500_naming_an_invalid_body_is_a_refusal_and_the_schema_style_switches() -> None:
    """llama-cpp-python's server answers a `json_schema` response_format with 500 and
    pydantic's validation error (found by benchmarks/remote_reader.py): not retried, the
    reader switches to `json_object` with a `schema` at once and keeps it."""
    schema = {"title": "Ok", "type": "object", "properties": {"ok": {"type": "boolean"}}}
    with StubServer(features={"echo"}) as stub:
        llm = _reader(stub)
        with metered() as usage:
            g = llm.generate(MESSAGES, schema)
            llm.generate(MESSAGES, schema)
    assert g.text == '{"ok": true}'
    assert [s.split()[-1] for s in stub.seen] == ["500", "200", "200"]
    assert usage.retries == 0 and usage.requests == 2


def test_retry_after_is_obeyed_within_the_bound() -> None:
    waits: list[float] = []
    with StubServer(failures=[429]) as stub:
        llm = _reader(stub, backoff_s=0.0)
        llm.transport._sleep = waits.append
        llm.generate(MESSAGES)
    assert waits == [0.0]  # the stub's Retry-After: 0


def test_options_are_checked_when_the_reader_is_built() -> None:
    with pytest.raises(InputError, match="concurrency: must be at least 1"):
        OpenAICompatible("http://127.0.0.1:1", model="m", concurrency=0)
    with pytest.raises(InputError, match="must be an http"):
        OpenAICompatible("ftp://x", model="m")


# -- the bound on requests in flight ----------------------------------------------------------


def test_no_more_than_concurrency_requests_are_in_flight() -> None:
    with StubServer(latency_s=0.1, limit=64) as stub:
        llm = _reader(stub, concurrency=4)
        t = time.perf_counter()
        got = map_ordered(lambda i: llm.generate(MESSAGES).text, range(16), concurrency=16)
        seconds = time.perf_counter() - t
    assert got == ['{"ok": true}'] * 16
    assert stub.peak == 4  # 16 threads asked; the reader let 4 through at a time, together
    assert seconds > 0.35  # so at least four rounds of 0.1 s (no upper bound: on a loaded
    # machine a starved process waits for the CPU far longer than the stub waits)


def test_run_all_keeps_the_order_and_skips_what_follows_a_failure() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def task(i: int):  # type: ignore[no-untyped-def]
        def run() -> int:
            with lock:
                started.append(i)
            time.sleep(0.01 * (5 - i % 5))
            if i == 3:
                raise ValueError("three")
            return i

        return run

    outcomes = run_all([task(i) for i in range(40)], concurrency=4)
    assert [o.value for o in outcomes[:3]] == [0, 1, 2]
    assert isinstance(outcomes[3].error, ValueError)
    skipped = [i for i, o in enumerate(outcomes) if isinstance(o.error, Skipped)]
    assert skipped and min(skipped) > 3  # reads start in order: nothing before it is skipped
    assert len(started) < 40
    assert [o.get() for o in run_all([lambda: 1, lambda: 2], concurrency=1)] == [1, 2]
    assert concurrency_of(ScriptedLLM()) == 1


# -- option scoring -------------------------------------------------------------------------


def test_echo_scores_whole_options_with_the_end_of_turn() -> None:
    with StubServer() as stub:
        llm = _reader(stub, template=TEMPLATE, concurrency=8)
        assert llm.scoring == "remote-echo-1"
        scores = llm.score(MESSAGES, ["up", "neutral", "down"])
        many = llm.score_many([(MESSAGES, ["up", "down"]), (MESSAGES[1:], ["yes", "no"])])
    for option, value in scores.items():
        assert value == pytest.approx(_expected(MESSAGES, option), abs=1e-12)
    assert many[0] == {o: scores[o] for o in ("up", "down")}
    assert many[1]["yes"] == pytest.approx(_expected(MESSAGES[1:], "yes"), abs=1e-12)
    # the probe (an echo, then the check of one token against top_logprobs: 2 echoes);
    # the prompt alone and each option after it: 1 + 3, then 2 x (1 + 2)
    assert len([s for s in stub.seen if s.startswith("/v1/completions")]) == 3 + 4 + 6


def test_the_method_is_detected_once_per_server() -> None:
    with StubServer() as stub:
        llm = _reader(stub, template=TEMPLATE)
        for _ in range(3):
            llm.score(MESSAGES, ["up", "down"])
        # the probe (3 echoes, 1 chat), then (1 + 2) requests a score
        assert len(stub.seen) == 4 + 3 * 3


def test_without_echo_the_first_tokens_top_logprobs_are_used() -> None:
    with StubServer(features={"top_logprobs"}) as stub:
        llm = _reader(stub, template=TEMPLATE)
        assert llm.scoring == "remote-top_logprobs-1"
        scores = llm.score(MESSAGES, ["up", "neutral", "down", "sideways"])
    assert scores["up"] == pytest.approx(token_logprob(chatml(MESSAGES), "up"))
    assert scores["sideways"] == MISSING


def test_without_a_template_echo_is_not_tried() -> None:
    with StubServer(features={"echo"}) as stub:
        llm = _reader(stub)
        with pytest.raises(ReaderError) as caught:
            llm.score(MESSAGES, ["up", "down"])
    text = str(caught.value)
    assert "cannot score options" in text and "FINKG_LLM_TEMPLATE" in text
    assert "no `logprobs`/`top_logprobs`" in text or "refused `logprobs`" in text


def test_a_server_offering_neither_is_refused_naming_both() -> None:
    with StubServer(features=()) as stub:
        llm = _reader(stub, template=TEMPLATE)
        with pytest.raises(ReaderError) as caught:
            llm.score(MESSAGES, ["up", "down"])
    text = str(caught.value)
    assert "no prompt log-probabilities for `echo` with `logprobs`" in text
    assert "`top_logprobs`" in text


def test_scores_are_cached_under_the_method_and_a_hit_makes_no_request(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = OutputCache(tmp_path / "replies.sqlite")
    with StubServer() as stub:
        llm = _reader(stub, template=TEMPLATE)
        first = score_many(llm, [(MESSAGES, ["up", "down"])], cache=cache)
        seen = len(stub.seen)
        again = score_many(llm, [(MESSAGES, ["up", "down"])], cache=cache)
    assert again[0].cached and again[0].logprobs == first[0].logprobs
    assert len(stub.seen) == seen


def test_settings_name_the_concurrency_the_device_and_the_template() -> None:
    from finkg.config import Settings
    from finkg.reader.transport.backends import open_reader

    env = {
        "FINKG_LLM_URL": "http://127.0.0.1:9/v1",
        "FINKG_CONCURRENCY": "16",
        "FINKG_DEVICE": "cpu",
        "FINKG_LLM_TEMPLATE": "smollm2-135m",
    }
    settings = Settings.from_env(env)
    assert settings.concurrency == 16 and settings.device == "cpu"
    assert settings.llm_template == "smollm2-135m"
    llm = open_reader(settings)
    assert isinstance(llm, OpenAICompatible) and llm.concurrency == 16
    assert concurrency_of(llm) == 16
    for bad, field in (({"FINKG_CONCURRENCY": "0"}, "FINKG_CONCURRENCY"),
                       ({"FINKG_CONCURRENCY": "many"}, "FINKG_CONCURRENCY"),
                       ({"FINKG_DEVICE": "tpu"}, "FINKG_DEVICE")):  # fmt: skip
        with pytest.raises(InputError, match=field):
            Settings.from_env(bad)


def test_an_adapter_is_asked_for_by_name_and_refused_where_the_server_lacks_it(
    tmp_path: Path,
) -> None:
    from finkg.config import Settings
    from finkg.reader.transport.backends import open_reader

    with StubServer() as stub:
        settings = Settings(home=tmp_path, llm_url=stub.url, adapter="impact-2019")
        with pytest.raises(
            ReaderError, match=r"does not serve the adapter impact-2019 \(it serves stub\)"
        ):
            open_reader(settings)
        served = open_reader(settings.with_(adapter="stub"))  # the server's own name for it
        assert isinstance(served, OpenAICompatible) and served.model == "stub"
