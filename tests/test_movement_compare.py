"""Retrievers compared on the same queries (`tasks.movement.compare`), on the small synthetic
market of test_movement with a scripted reader: the tables, the choice on validation, the
report, and the score cache that lets a run stop and continue."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.reader.llm import Message, ScriptedLLM
from finkg.retrieval.sequence_retrievers import open_retriever
from finkg.retrieval.sequences import WindowPool
from finkg.tasks.movement.compare import (
    Reader,
    ScoreCache,
    as_json,
    choose,
    compare,
    rule_name,
)
from finkg.tasks.movement.compare_adapted import compare_adapted
from finkg.tasks.movement.compare_report import render
from finkg.tasks.movement.forecast import MovementConfig
from finkg.tasks.movement.questions import labelled_queries
from tests.test_movement import SESSIONS, TICKERS, filled, market

NAMES = ("none", "random", "dtw")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> BaseStore:
    return filled(market(tmp_path_factory.mktemp("compare")))


def follower(messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
    """A reader biased to "rise" that leans towards the retrieved windows' movements, with
    noise from the exact prompt: its raw argmax is nearly constant, its content is not."""
    text = messages[-1]["content"]
    lean = text.count("-> rise") - text.count("-> fall")
    noise = int(hashlib.sha256(text.encode()).hexdigest()[:6], 16) / 16**6 - 0.5
    return {"rise": -0.3 + 0.2 * lean + noise, "fall": -1.6 - 0.2 * lean - noise}


def run(
    store: BaseStore, cache: Path | None = None, *, flip: bool = False, small: int = 12
) -> tuple:
    val = labelled_queries(store, TICKERS, SESSIONS[20], SESSIONS[33], n=24, seed=0, salt="v")
    test = labelled_queries(store, TICKERS, SESSIONS[34], SESSIONS[-1], n=30, seed=0, salt="t")
    if flip:  # what the test queries turned out to be must not change the choice
        test = [(q, "fall" if y == "rise" else "rise") for q, y in test]
    pool = WindowPool.load(store, before=max(q.decision for q, _ in val + test))
    llm = ScriptedLLM(scores=follower, model_id="scripted-follower")
    lines: list[str] = []
    reader = Reader(llm, pool, MovementConfig(k=5, sample=1.0), ScoreCache(cache), log=lines.append)
    retrievers = {name: open_retriever(name) for name in NAMES}
    result = compare(retrievers, val, test, reader, small=small, n=100)
    return result, llm, lines, val, test


@pytest.fixture(scope="module")
def plain(store: BaseStore) -> tuple:
    return run(store)


def test_every_retriever_is_tabled_on_the_same_queries(plain: tuple) -> None:
    result, llm, lines, val, test = plain
    best = result.choice.best
    assert best in ("random", "dtw")  # `none` is the reference, never the choice
    assert any(f"best retriever on the {len(val)} validation queries" in x for x in lines)
    assert any("reads so far (" in x and "/h" in x for x in lines)  # progress with reads/hour
    # every retriever reads every validation query and the first 12 test queries; none and
    # the chosen one read the rest
    assert len(llm.calls) == len(NAMES) * (len(val) + 12) + 2 * (len(test) - 12)
    first, second = result.tables
    assert first.queries == 12 and set(first.retrievers) == set(NAMES)
    assert second.queries == len(test) and second.retrievers == ("none", best)
    names = [r.name for r in first.rows]
    assert names[:5] == ["majority", "stratified", "previous-day", "momentum", "card"]
    for r in NAMES:
        assert {rule_name(r, h) for h in ("none", "prior", "multinomial")} <= set(names)
    rows = {r.name: r for r in first.rows}
    assert set(rows["dtw/prior"].versus) == {"majority", "previous-day", "none/prior"}
    assert set(rows["none/prior"].versus) == {"majority", "previous-day"}
    assert rows["none/raw"].mix["rise"] > 0.9  # the biased reader's raw argmax
    assert 0 < rows["dtw/prior"].mix["rise"] < 1  # the head's predictions are not constant
    for r in first.rows:
        mcc = r.metrics["MCC"]
        assert mcc.n == 12 and mcc.low <= mcc.value <= mcc.high
        assert 0 < r.permutation.p <= 1 and sum(r.mix.values()) == pytest.approx(1.0)
        # the same MCC with an interval that resamples whole trading weeks
        assert r.grouped is not None and r.grouped.value == mcc.value
        assert set(r.versus_grouped) == set(r.versus)


def test_the_report_says_what_it_ran_on(plain: tuple) -> None:
    result, _, _, val, test = plain
    report = {
        "options": {"queries": str(len(test))},
        "reader": "scripted-follower",
        "data": {
            "folder": "/data",
            "store": "/store",
            "stocks": len(TICKERS),
            "validation": [str(SESSIONS[20]), str(SESSIONS[33])],
            "test": [str(SESSIONS[34]), str(SESSIONS[-1])],
            "test_queries": len(test),
            "since": str(SESSIONS[0]),
            "sample": 1.0,
            "pool": 123,
            "k": 5,
            "threads": 1,
        },
        **as_json(result),
        "heads": {},
        "skipped": {"finseer": "no trained model"},
        "wall_seconds": 1.0,
    }
    text = render(json.loads(json.dumps(report)))  # renders from the saved JSON too
    best = result.choice.best
    assert f"Chosen: **{best}**" in text
    assert f"Validation: {len(val)} non-freeze queries" in text
    assert "## All retrievers on the first 12 test queries" in text
    assert f"## none and {best} on all {len(test)} test queries" in text
    assert "| dtw/prior |" in text and "`finseer`: no trained model" in text
    assert "Rules that predicted one class for every query:" in text
    assert "no difference" in text and "(123 windows)" in text
    assert "MCC [95 % CI, weeks resampled]" in text and "whole trading weeks resampled" in text
    older = json.loads(json.dumps(report))  # a result saved before weeks were figured
    for t in older["tables"]:
        for r in t["rules"].values():
            r.pop("mcc_weeks"), r.pop("mcc_vs_weeks")
    assert "weeks resampled" not in render(older) and "| dtw/prior |" in render(older)
    alone = json.loads(json.dumps(report))  # `--retrievers none`: nothing to choose from
    alone["selection"]["best"] = None
    assert "No retriever to choose" in render(alone) and "**None**" not in render(alone)


def test_the_choice_never_sees_a_test_label(store: BaseStore, plain: tuple) -> None:
    a = plain[0]
    b = run(store, flip=True)[0]
    assert a.choice == b.choice
    assert a.tables[0].rows != b.tables[0].rows  # the test figures did change
    # and `choose` is given validation items alone: its figures are theirs
    fitting = {r: list(items.values()) for r, items in a.fitting.items()}
    assert choose(fitting, n=100) == a.choice


def test_a_stopped_run_continues_from_the_cache(store: BaseStore, tmp_path: Path) -> None:
    cache = tmp_path / "scores.json"
    first, _, _, _, _ = run(store, cache)
    assert cache.exists() and first.throughput["dtw"]["reads"] > 0
    again, llm2, _, _, _ = run(store, cache)
    assert llm2.calls == []  # every score came from the cache
    for t in again.throughput.values():
        assert t["reads"] == 0 and t["reads_per_hour"] is None and t["cached"] > 0
    assert as_json(again)["tables"] == as_json(first)["tables"]


def contrarian(messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
    """The follower reversed: an "adapted" reader that reads the same prompts otherwise."""
    scores = follower(messages, options)
    return {"rise": scores["fall"], "fall": scores["rise"]}


def test_an_adapted_reader_is_tabled_beside_the_frozen_one(store: BaseStore, plain: tuple) -> None:
    result, _, _, val, test = plain
    pool = WindowPool.load(store, before=max(q.decision for q, _ in val + test))
    llm = ScriptedLLM(scores=contrarian, model_id="scripted-follower+lora:" + "a" * 64)
    adapted = Reader(llm, pool, MovementConfig(k=5, sample=1.0), ScoreCache(None))
    retrievers = {name: open_retriever(name) for name in NAMES}
    both = compare_adapted(result, retrievers, val, test, adapted, n=100)
    best = result.choice.best
    # the adapted reader reads none's and the chosen retriever's queries, validation and test
    assert len(llm.calls) == 2 * (len(val) + len(test))
    assert both.tables[:-1] == result.tables and both.choice == result.choice
    extra = both.tables[-1]
    assert extra.queries == len(test)
    assert extra.retrievers == ("none", best, "none+lora", f"{best}+lora")
    rows = {r.name: r for r in extra.rows}
    # each adapted rule is paired with the frozen reader's same rule
    assert set(rows["none+lora/prior"].versus) == {"majority", "previous-day", "none/prior"}
    assert set(rows[f"{best}+lora/raw"].versus) == {"majority", "previous-day", f"{best}/raw"}
    assert rows["none+lora/raw"].mix["fall"] > 0.9  # the reversed bias
    assert "none+lora" in both.throughput and both.throughput["none+lora"]["reads"] > 0
    manifest = {
        "name": "stock-llm", "base_model": "smollm2-135m@sha256:0", "adapter_sha256": "a" * 64,
        "threads": 2, "job_parameters": {"stocks": {"train": ["AAA"], "valid": ["BBB"]}},
        "hyper_parameters": {"rank": 16, "alpha": 32, "lr": 2e-4, "batch": 64},
        "training": {"items": 40, "start": "2019-01-02T00:00:00-05:00",
                     "end": "2019-02-01T00:00:00-05:00",
                     "labels_before": "2019-02-01T00:00:00-05:00"},
        "validation": {"items": 9, "start": "2019-02-01T00:00:00-05:00",
                       "end": "2019-03-01T00:00:00-05:00"},
        "figures": {"frozen": 0.0, "best": 0.1, "best_step": 2, "steps": 3, "seconds": 60.0,
                    "device": "cpu", "steps_per_second": 0.05},
    }  # fmt: skip
    report = {
        "options": {}, "reader": "scripted-follower", "data": {
            "folder": "/data", "store": "/store", "stocks": 3, "validation": ["a", "b"],
            "test": ["c", "d"], "test_queries": len(test), "since": "s", "sample": 1.0,
            "pool": 1, "k": 5, "threads": 1,
        },
        **as_json(both), "adapter": manifest, "wall_seconds": 1.0,
        "finseer": {
            "model_id": "finseer@sha256:0123456789ab", "base_model": "minilm@sha256:0",
            "reader": "scripted-follower+lora:" + "a" * 64,
            "split_counts": {"train": 1, "valid": 1, "test": 1},
            "examples": {"train": 8, "valid": 2},
            "hyper_parameters": {"query_from": "2019-01-02", "query_to": "2019-02-01",
                                 "candidates": 16, "positives": 1, "negatives": 15,
                                 "alpha": 0.1, "tau": 0.05, "epochs": 3, "lr": 2e-5},
            "valid_kl": {"base_minilm": 2.9, "finseer": 2.7}, "seconds": 12.0,
        },
    }  # fmt: skip
    text = render(json.loads(json.dumps(report)))
    assert "## The trained retriever (paper 001's FinSeer)" in text
    assert "feedback of `scripted-follower+lora:aaaa" in text and "2.900 for the packaged" in text
    assert "## The adapted reader (paper 001's StockLLM)" in text
    assert "on 40 questions of the 1 training stocks" in text and "0.000 frozen, 0.100" in text
    assert f"## The adapted reader beside the frozen one on all {len(test)} test queries" in text
    assert "vs the frozen reader's same rule" in text and "| none+lora/prior |" in text


def test_the_adapted_reader_reads_the_retrievers_asked_for_and_only_fully_read_ones(
    store: BaseStore, plain: tuple
) -> None:
    result, _, _, val, test = plain
    pool = WindowPool.load(store, before=max(q.decision for q, _ in val + test))
    retrievers = {name: open_retriever(name) for name in NAMES}
    other = next(r for r in ("random", "dtw") if r != result.choice.best)

    def adapted() -> tuple[ScriptedLLM, Reader]:
        llm = ScriptedLLM(scores=contrarian, model_id="scripted-follower+lora:" + "b" * 64)
        return llm, Reader(llm, pool, MovementConfig(k=5, sample=1.0), ScoreCache(None))

    # `other` read the first 12 test queries only: nothing to pair its adapted reads with
    llm, reader = adapted()
    with pytest.raises(InputError, match="every test query") as e:
        compare_adapted(result, retrievers, val, test, reader, also=[other], n=100)
    assert e.value.value == [other] and llm.calls == []
    # every retriever read every test query: the one asked for is read and tabled too
    full = run(store, small=len(test))[0]
    llm, reader = adapted()
    both = compare_adapted(full, retrievers, val, test, reader, also=[other], n=100)
    assert len(llm.calls) == 3 * (len(val) + len(test))
    extra = both.tables[-1]
    assert set(extra.retrievers) == {*NAMES, *(r + "+lora" for r in NAMES)}
    rows = {r.name: r for r in extra.rows}
    assert f"{other}/prior" in rows[f"{other}+lora/prior"].versus


def test_the_benchmark_reads_its_frozen_rows_without_the_adapter_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from benchmarks.movement_decisions import frozen_settings, options
    from finkg.config import Settings

    monkeypatch.setenv("FINKG_ADAPTER", "stockllm-0.5b")  # as the movement page leaves it
    args = options(["--store", str(tmp_path / "s"), "--adapter", "stockllm-0.5b", "--threads", "1"])
    env = Settings.from_env()
    assert env.adapter == "stockllm-0.5b"
    frozen = frozen_settings(args, env)
    assert frozen.adapter is None and frozen.reader == args.reader and frozen.threads == 1
    assert "FINKG_ADAPTER=stockllm-0.5b ignored" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a retriever the adapted reader reads must read them all
        options(["--retrievers", "none,dtw", "--adapter", "a", "--adapted-retrievers", "dtw"])
    with pytest.raises(SystemExit):  # and be one of the run's
        options(["--adapter", "a", "--adapted-retrievers", "bm25", "--retrievers", "none",
                 "--queries-small", "1000"])  # fmt: skip


def test_the_benchmark_refuses_a_finseer_trained_on_its_test_stocks(tmp_path: Path) -> None:
    from benchmarks.movement_decisions import finseer_manifest
    from finkg.retrieval.rank import finseer
    from finkg.retrieval.rank.trained import write_manifest

    split = {"train": ["AAA", "BBB"], "valid": ["CCC"], "test": ["DDD", "EEE"]}
    write_manifest(tmp_path, {"kind": finseer.KIND, "format": finseer.FORMAT, "split": split})
    assert finseer_manifest(tmp_path, ["DDD", "EEE"])["split"] == split
    with pytest.raises(InputError, match="trained on test stocks") as e:
        finseer_manifest(tmp_path, ["CCC", "DDD"])  # another seed's test stocks
    assert e.value.value == ["CCC"]
