"""`finkg train-reader` (issue 42 items 1, 2 and 5): a LoRA adapter for a packaged reader,
trained on the impact job's scored questions and matured labels, point-in-time,
reproducible, converted to GGUF and loaded by the local reader. A few steps of SmolLM2-135M
on a small demo world."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from finkg.config import Settings
from finkg.demo.world import WorldSpec
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.iri import mint
from finkg.kg.store import open_store
from finkg.reader.adapt.fit import period
from finkg.reader.adapt.manifest import sha256_of
from finkg.reader.adapt.train import LoraParams
from finkg.reader.transport.backends import local_llm
from finkg.retrieval.index.indexes import open_indexes
from finkg.retrieval.pools import PoolSpec
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.impact.training import examples, train_impact_reader
from finkg.tasks.span import Span
from tests.readers import THREADS
from tests.worlds import build, load

pytestmark = pytest.mark.model  # SmolLM2-135M, trained and read


@pytest.fixture(scope="module", autouse=True)
def _trainer_installed() -> None:
    """Skip, saying why, without llama-cpp-python or PEFT: checked when the tests run, not
    when they are collected (importing PEFT takes about 6 s, paid by every run that collects
    this file, `make test`'s deselecting second phase included)."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("peft")


NY = ZoneInfo("America/New_York")
CAL = get_calendar()
SPEC = WorldSpec(tickers=4, sessions=200, users=1, seed=5)
DAYS = CAL.sessions(SPEC.start, SPEC.start + dt.timedelta(days=400))[: SPEC.sessions]
PROXY = "ZQMX"
# a pool of 4 items cut at 60 characters: prompts of about 330 tokens, not 910, which halves
# each training (the questions keep their evidence, ids and market card)
CONFIG = ImpactConfig(proxy=PROXY, snippet_chars=60, pool=PoolSpec(size=4))


def _at(i: int) -> dt.datetime:
    return dt.datetime.combine(DAYS[i], dt.time(0), NY)


TRAIN = Span(_at(120), _at(160))
VALIDATION = Span(_at(160), _at(190))
# two steps of two items, validated on one anchor (its three horizons) before and after:
# the plumbing, not the learning
PARAMS = LoraParams(rank=4, alpha=8, batch=2, epochs=2, max_steps=2, eval_every=2, lr=5e-3)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("adapt")
    files = build(root / "files", SPEC)
    settings = Settings(home=root / "home", embedder="hash", threads=THREADS, reader="smollm2-135m")
    with open_store(root / "store", settings=settings) as store:
        load(files, store)
    return root, settings


def _train(root: Path, settings: Settings, name: str):  # type: ignore[no-untyped-def]  # a manifest
    with open_store(root / "store", settings=settings) as store:
        texts, vectors, _ = open_indexes(store, settings)
        return train_impact_reader(
            store, settings, name=name, training=TRAIN, validation=VALIDATION, texts=texts,
            vectors=vectors, config=CONFIG, params=PARAMS, anchors_limit=3, validation_limit=1,
        )  # fmt: skip


@pytest.fixture(scope="module")
def trained(world: tuple[Path, Settings]):  # type: ignore[no-untyped-def]  # two manifests
    root, settings = world
    # the second in another home: nothing of the home's path may reach the adapter's bytes
    elsewhere = settings.with_(home=root / "another-home")
    return _train(root, settings, "smol-impact"), _train(root, elsewhere, "smol-impact-again")


def test_the_adapter_is_described_by_its_manifest_and_saw_no_later_label(trained, world) -> None:
    first, _ = trained
    _, settings = world
    folder = settings.cache_dir / "adapters" / "smol-impact"
    saved = json.loads((folder / "manifest.json").read_text())
    assert saved["adapter_sha256"] == sha256_of(folder / "adapter.gguf") == first.adapter_sha256
    assert saved["base_model"].startswith("smollm2-135m@sha256:")
    assert saved["base_sha256"] == sha256_of(settings.cache_dir / "models" / "smollm2-135m.gguf")
    assert saved["hyper_parameters"]["rank"] == 4 and saved["threads"] == THREADS
    # the defaults: the shared opening evaluated once a step, fp32 products on a CPU
    assert saved["hyper_parameters"]["shared_prefix"] is True
    assert saved["figures"]["precision"] == "fp32"
    t, v = first.training, first.validation
    # a sampled anchor whose labels matured too late is left out
    assert 0 < t.anchors <= 3 and t.items >= t.anchors and 0 < v.anchors <= 2
    # strictly point-in-time: every training label matured before the validation period,
    # every validation label before the decisions the adapter is for
    assert t.labels_before == VALIDATION.start and t.last_matured < VALIDATION.start
    assert v.labels_before == VALIDATION.end and v.last_matured < VALIDATION.end
    f = first.figures
    assert f.history[0][0] == 0 and f.steps == 2 and 2 <= f.items_seen <= 4
    # the adapter kept is the best trained one; the frozen reader's figure stands beside it
    assert f.best_step == 2 and f.best == dict(f.history)[2] and f.frozen == f.history[0][1]
    assert f.steps_per_second > 0


def test_retraining_with_the_same_seed_and_threads_gives_the_same_adapter_in_any_home(
    trained,
) -> None:
    first, again = trained
    assert first.adapter_sha256 == again.adapter_sha256
    assert first.training.sha256 == again.training.sha256


def test_the_local_reader_loads_the_adapter_by_name_and_it_changes_the_scores(
    trained, world
) -> None:
    _, settings = world
    base = local_llm("smollm2-135m", settings.cache_dir, 1, 2048)
    adapted = local_llm("smollm2-135m", settings.cache_dir, 1, 2048, "smol-impact")
    assert adapted.model_id == f"{base.model_id}+lora:{trained[0].adapter_sha256}"
    messages = [{"role": "user", "content": "Acme beats estimates. Up, neutral or down?"}]
    options = ["up", "neutral", "down"]
    before, after = base.score(messages, options), adapted.score(messages, options)
    assert max(abs(before[o] - after[o]) for o in options) > 1e-3
    # the batch path (`score_many`, the job's) reads with the adapter too: it moves the
    # scores as the one-prompt path does, to within 0.2 nats or a tenth of the adapter's
    # largest move (the two paths' kernels differ; an adapter that moves "neutral" by 4.0
    # moved it by 3.95 on the other path, and "up" by -1.02 against -0.79)
    many_base = base.score_many([(messages, options)])[0]
    many = adapted.score_many([(messages, options)])[0]
    assert max(abs(many[o] - many_base[o]) for o in options) > 1e-3
    move = max(abs(after[o] - before[o]) for o in options)
    for o in options:
        assert many[o] - many_base[o] == pytest.approx(
            after[o] - before[o], abs=max(0.2, move / 10)
        )
    with pytest.raises(InputError, match="no adapter file here"):
        local_llm("smollm2-135m", settings.cache_dir, 1, 2048, "never-trained")


def _digest(found: list) -> str:
    return period(TRAIN.start, TRAIN.end, VALIDATION.start, found).sha256


def test_training_items_do_not_change_when_later_prices_do(world, tmp_path: Path) -> None:
    """Future invariance: every bar from the validation period's first session on is
    rewritten (a later label would flip); the training items, prompts and labels, stay."""
    root, settings = world
    copy = tmp_path / "store"
    shutil.copytree(root / "store", copy)
    digests = []
    for tamper in (False, True):
        with open_store(copy, settings=settings) as store:
            if tamper:  # the stocks' later closes tripled, the market proxy's kept
                proxy = mint("company", PROXY, base=store.graphs.base).value
                market = store.graphs.market.value
                store.update(
                    "PREFIX fkg: <https://w3id.org/finkg/ns#> "
                    f"DELETE {{ GRAPH <{market}> {{ ?bar fkg:adjClose ?c }} }} "
                    f"INSERT {{ GRAPH <{market}> {{ ?bar fkg:adjClose ?x }} }} "
                    f"WHERE {{ GRAPH <{market}> {{ ?bar a fkg:PriceBar ; fkg:about ?e ; "
                    "fkg:sessionDate ?d ; fkg:adjClose ?c . FILTER (?d >= "
                    f'"{DAYS[160].isoformat()}"^^<http://www.w3.org/2001/XMLSchema#date> '
                    f"&& ?e != <{proxy}>) BIND (?c * 3 AS ?x) }} }}",
                    note="the future rewritten",
                )
            texts, vectors, _ = open_indexes(store, settings)
            found = examples(
                store, TRAIN, before=VALIDATION.start, texts=texts, vectors=vectors,
                config=CONFIG, limit=12,
            )  # fmt: skip
            assert found and all(e.matured_at < VALIDATION.start for e in found)
            digests.append((_digest(found), len(found)))
            later = examples(
                store, TRAIN, before=VALIDATION.end, texts=texts, vectors=vectors,
                config=CONFIG, limit=12,
            )  # fmt: skip
            digests.append((_digest(later), len(later)))
    (plain, n), (plain_later, n_later), (tampered, m), (tampered_later, _) = digests
    assert plain == tampered and n == m
    # the control: a cut after the rewrite does see it (labels maturing into it changed)
    assert n_later > n and plain_later != tampered_later


def test_a_training_period_that_overlaps_the_validation_is_refused(world) -> None:
    root, settings = world
    with (
        open_store(root / "store", settings=settings) as store,
        pytest.raises(InputError, match="must end before the validation period"),
    ):
        train_impact_reader(
            store, settings, name="bad", training=Span(_at(120), _at(170)),
            validation=VALIDATION, texts=None, vectors=None,  # type: ignore[arg-type]  # refused first
        )  # fmt: skip
