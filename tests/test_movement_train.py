"""`finkg train-retriever` (paper 001 §3.3): split, candidate scoring and selection, KL
distillation into a MiniLM copy, the manifest, and the trained retriever in a forecast."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.reader.llm import Message, ScriptedLLM
from finkg.retrieval.rank import finseer
from finkg.retrieval.sequences import WindowPool
from finkg.tasks.movement.forecast import MovementConfig, forecast
from finkg.tasks.movement.questions import labelled_queries, split_stocks, store_tickers
from finkg.tasks.movement.train import (
    TrainConfig,
    examples_for,
    open_sequence_retriever,
    select,
    train_retriever,
)
from tests.readers import THREADS
from tests.test_movement import DAY, SESSIONS, TICKERS, filled, market


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> BaseStore:
    return filled(market(tmp_path_factory.mktemp("m")))


def fond_of_rsi(messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
    """A reader that is sure of "rise" when shown an RSI window, unsure otherwise."""
    sure = " rsi: " in messages[-1]["content"]  # the reader's line of an RSI window
    return {o: (-0.05 if o == "rise" else -3.0) if sure else -0.69 for o in options}


def test_split_is_by_stock_in_table_2_proportions() -> None:
    names = [f"T{i:02d}" for i in range(87)]
    s = split_stocks(names, seed=0)
    assert [len(s[k]) for k in ("train", "valid", "test")] == [40, 6, 41]
    assert sorted(s["train"] + s["valid"] + s["test"]) == names
    assert split_stocks(names, seed=0) == s and split_stocks(names, seed=1) != s
    with pytest.raises(InputError, match="three stocks"):
        split_stocks(["A", "B"])


def test_top_one_positive_and_bottom_fifteen_negatives() -> None:
    rewards = [0.5 + i / 100 for i in range(20)]
    chosen = select(rewards)
    assert len(chosen) == 16
    assert chosen[0] == int(np.argmax(rewards)) and set(chosen[1:]) == set(range(15))


def test_candidates_are_scored_by_the_reader_and_selected(store: BaseStore) -> None:
    assert store_tickers(store) == list(TICKERS)
    labelled = labelled_queries(store, ["AAA"], SESSIONS[30], SESSIONS[-1], n=3, seed=0)
    assert len(labelled) == 3 and all(label in ("rise", "fall") for _, label in labelled)
    assert all(q.day >= SESSIONS[30] for q, _ in labelled)
    pool = WindowPool.load(store, before=max(q.decision for q, _ in labelled))
    rises = [(q, y) for q, y in labelled if y == "rise"] or labelled[:1]
    config = TrainConfig(candidates=40)
    llm = ScriptedLLM(scores=fond_of_rsi)
    examples = examples_for(llm, rises[:1], pool, ["BBB", "CCC"], config, None, "t")
    assert len(llm.calls) == 40  # one reader call per candidate, query + that candidate
    ex = examples[0]
    assert len(ex.candidates) == 16 and ex.rewards[0] == max(ex.rewards)
    if rises[0][1] == "rise" and any('"rsi_list"' in c for c in ex.candidates):
        assert '"rsi_list"' in ex.candidates[0] and ex.rewards[0] > 0.9
    assert all('"candidate_stock": "AAA"' not in c for c in ex.candidates)  # its split only


def test_bad_training_options_are_input_errors() -> None:
    with pytest.raises(InputError, match="--candidates"):
        TrainConfig(candidates=1)
    with pytest.raises(InputError, match="--alpha/--tau"):
        TrainConfig(tau=0)


@pytest.mark.model
def test_training_moves_the_retriever_towards_the_reader(store: BaseStore, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", threads=THREADS)
    config = TrainConfig(
        queries=2,
        valid_queries=1,
        candidates=6,
        epochs=3,
        lr=2e-4,
        query_from=SESSIONS[30],
        query_to=SESSIONS[-1],
        since=SESSIONS[0],
        sample=1.0,
    )
    folder = tmp_path / "finseer"
    llm = ScriptedLLM(scores=fond_of_rsi, model_id="scripted-rsi")
    manifest = train_retriever(store, llm=llm, settings=settings, config=config, folder=folder)
    saved = json.loads((folder / "manifest.json").read_text())
    assert saved["reader"] == "scripted-rsi" and saved["split_counts"] == {
        "train": 1,
        "valid": 1,
        "test": 1,
    }
    assert (
        saved["hyper_parameters"]["alpha"] == 0.1 and saved["hyper_parameters"]["negatives"] == 15
    )
    assert saved["data"]["train_queries"] and saved["model_id"].startswith("finseer@sha256:")
    kl = manifest["train_kl"]
    assert kl["finseer"] < kl["base_minilm"]  # distillation moved it towards the reader
    retriever = open_sequence_retriever("finseer", settings, model_dir=folder)
    assert retriever.model_id == saved["model_id"]
    test_stock = saved["split"]["test"][0]
    f = forecast(
        store,
        ticker=test_stock,
        day=DAY,
        llm=ScriptedLLM(scores=fond_of_rsi),
        retriever=retriever,
        config=MovementConfig(sample=0.03),
    )
    assert 0 < len(f.hits) <= 5 and f.prediction is not None
    with pytest.raises(InputError, match="no trained model"):
        finseer.FinSeer(tmp_path / "nothing")
