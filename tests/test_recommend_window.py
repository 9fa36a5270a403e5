"""A recommendation's prompts fit the reader's context window (issue 26: `finkg recommend`
on the demo's data exited 3, "a prompt of 5493 tokens does not fit the context window of
4096", with the default reader, for every demo customer and variant)."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.config import Settings
from finkg.demo.world import WorldSpec, build_world
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.reader.llm import ContextOverflow, Message, ScriptedLLM
from finkg.retrieval import subgraph as sg
from finkg.tasks.recommend import pipeline as R

DEMO_CUSTOMER = "047D7DE7D8F9FE6B1CB7"  # the customer, in the default demo world
ATHENS = ZoneInfo("Europe/Athens")


def _demo_market(folder: Path, store: BaseStore) -> None:
    """The default demo world's FAR-Trans files (customers, assets, prices) in `store`."""
    build_world(folder, WorldSpec())
    paths = sorted((folder / "fartrans").glob("*.csv"))
    report = ingest(
        store, "fartrans", loader("fartrans"), paths, IngestOptions(graphs=store.graphs)
    )
    assert not report.rejects


LISTED = re.compile(r"^(https://\S+) \|", re.M)
ASSET = re.compile(r"^(https://\S+/asset/\S+) \|", re.M)
NODE_ID = re.compile(r'"id":"([^"]+)"')


def _respond(messages: list[Message]) -> str:
    user = messages[1]["content"]
    if "Candidates (" in user:
        return json.dumps({"selected": LISTED.findall(user)[-3:]})
    ids = NODE_ID.findall(user)
    picks = [{"asset": a, "reason": "fits", "evidence": ids[:1]} for a in ASSET.findall(user)[:3]]
    return json.dumps({"recommendations": picks})


@dataclass
class Windowed(ScriptedLLM):
    """A scripted reader with a context window, refusing what does not fit as llama.cpp does."""

    n_ctx: int = 4096

    def count_tokens(self, messages: list[Message]) -> int:
        return sum(len(m["content"]) for m in messages) // 3 + 1

    def generate(self, messages, schema=None, *, max_tokens=512):  # type: ignore[no-untyped-def]
        if (n := self.count_tokens(messages)) >= self.n_ctx:
            raise ContextOverflow(f"windowed: a prompt of {n} tokens does not fit {self.n_ctx}")
        return super().generate(messages, schema, max_tokens=max_tokens)


@pytest.fixture(scope="module")
def demo_market(tmp_path_factory: pytest.TempPathFactory) -> BaseStore:
    store = open_store(None)
    _demo_market(tmp_path_factory.mktemp("world"), store)
    return store


@pytest.mark.parametrize("variant", ["multi", "parallel", "full"])
def test_every_prompt_of_a_demo_recommendation_fits_a_4096_token_window(
    demo_market: BaseStore, variant: str
) -> None:
    """The market selection listed 30 summaries and every asset whatever the window."""
    reader = Windowed(respond=_respond, n_ctx=4096)
    config = R.RecommendConfig(variant=variant, n_ctx=4096)
    as_of = dt.datetime(2019, 10, 1, tzinfo=ATHENS)
    result = R.recommend(
        demo_market, reader, user=DEMO_CUSTOMER, as_of=as_of, config=config, write=False
    )
    assert result.ok, result.read.error
    for messages in result.prompts:
        assert reader.count_tokens(messages) <= 4096 - 512  # a reply fits beside each
    for stage in result.stages:
        if stage.selection is not None:  # what was listed is what the prompt says
            listed = stage.selection.candidates
            assert f"{len(listed)} listed of {listed.total}" in json.dumps(result.prompts)


def test_a_listing_is_cut_to_the_window_newest_first() -> None:
    items = [sg.Candidate(f"https://e.org/tx{i:02d}", "x " * 60) for i in range(40)]
    candidates = sg.Candidates(items, total=55, kind="Transaction")
    reader = Windowed(
        respond=lambda m: json.dumps({"selected": LISTED.findall(m[1]["content"])[-1:]})
    )
    reader.n_ctx = 1500
    selection = sg.select(reader, "pick", candidates, max_tokens=300)
    prompt = reader.calls[0]
    assert reader.count_tokens(prompt) <= 1500 - 300
    shown = selection.candidates
    assert 0 < len(shown) < 40 and shown[-1].iri == items[-1].iri  # the newest kept
    assert [c.iri for c in shown] == LISTED.findall(prompt[1]["content"])
    assert f"{len(shown)} listed of 55" in prompt[1]["content"]
    assert selection.selected == [items[-1].iri]


def test_a_prompt_that_cannot_fit_is_an_input_error_naming_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It exited 3 (internal error); the README documents 2 for it now."""
    import finkg.reader.transport.backends

    with open_store(tmp_path / "store") as store:
        _demo_market(tmp_path / "world", store)
    tiny = Windowed(respond=_respond, n_ctx=200)
    monkeypatch.setattr(finkg.reader.transport.backends, "open_reader", lambda *a, **k: tiny)
    argv = ["recommend", "--user", DEMO_CUSTOMER, "--date", "2019-10-01"]
    result = CliRunner().invoke(
        cli, [*argv, "--store", str(tmp_path / "store")], env={"FINKG_HOME": str(tmp_path)}
    )
    assert result.exit_code == 2, result.output
    assert "does not fit" in result.output and "Traceback" not in result.output


@pytest.mark.model
def test_every_prompt_of_the_default_readers_recommendation_fits_its_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26 with the default reader's own count: its chat template and tokenizer (the
    vocabulary alone is loaded), in the window `finkg recommend` opens it with; a prompt that
    does not fit is refused as llama.cpp refuses it. The replies are scripted: a real reader's
    replies through the same command are tested with SmolLM2 (test_recommend.py,
    test_docs.py). Generating them with the 1.5B reader took 227 s of the suite's time."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test does)")
    from llama_cpp import Llama

    import finkg.reader.transport.backends
    from finkg.reader.transport.models import assemble
    from finkg.reader.transport.remote_scoring import ChatTemplate

    path = assemble(Settings().reader, Settings.from_env().cache_dir)
    template = ChatTemplate.from_gguf(path)  # rendered as the local reader renders it
    vocab = Llama(str(path), vocab_only=True, verbose=False)
    arch = vocab.metadata["general.architecture"]
    trained = int(vocab.metadata[f"{arch}.context_length"])  # what LlamaCpp caps the window at
    assert trained >= 8192

    @dataclass
    class Exact(Windowed):
        def count_tokens(self, messages: list[Message]) -> int:
            text = template.render(messages).encode("utf-8")
            return len(vocab.tokenize(text, add_bos=True, special=True))  # as LlamaCpp does

    reader = Exact(respond=_respond, n_ctx=min(R.RecommendConfig().n_ctx, trained))
    monkeypatch.setattr(finkg.reader.transport.backends, "open_reader", lambda *a, **k: reader)
    with open_store(tmp_path / "store") as store:
        _demo_market(tmp_path / "world", store)
    argv = ["recommend", "--user", DEMO_CUSTOMER, "--date", "2019-10-01", "--json"]
    result = CliRunner().invoke(
        cli, [*argv, "--store", str(tmp_path / "store")], env={"FINKG_HOME": str(tmp_path)}
    )
    assert "does not fit" not in result.output
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["recommendations"]) == 3 and doc["recommendation"]
    counts = [reader.count_tokens(m) for m in reader.calls]
    assert counts and max(counts) < reader.n_ctx
    assert max(counts) > 1000  # the real prompts, counted by the real tokenizer


@pytest.mark.model
def test_a_reader_is_never_opened_past_the_window_its_model_was_trained_for(
    tmp_path: Path,
) -> None:
    """recommend opens its reader with 8,192 tokens; SmolLM2-135M was trained for 8,192,
    the Qwen readers for 32,768: a larger request is capped, not run past training."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test does)")
    from finkg.reader.transport.llamacpp import LlamaCpp
    from finkg.reader.transport.models import assemble

    path = assemble("smollm2-135m", tmp_path)
    assert LlamaCpp(path, model_id="smollm2-135m", n_ctx=4096).n_ctx == 4096
    assert LlamaCpp(path, model_id="smollm2-135m", n_ctx=16384).n_ctx == 8192
