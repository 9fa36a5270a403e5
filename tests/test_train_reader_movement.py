"""`finkg train-reader --job movement` (issue 42 item 1; paper 001's StockLLM): a LoRA
adapter trained on the movement job's own questions by stock split, point-in-time, loaded
by the reader whose forecast then records it. Two steps of SmolLM2-135M on a small
synthetic market: the plumbing, not the learning."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import open_store
from finkg.ontology.terms import FKG, PROV
from finkg.reader.adapt.fit import period
from finkg.reader.adapt.manifest import AdapterManifest
from finkg.retrieval.sequence_retrievers import open_retriever
from finkg.tasks.movement.adapt import examples, train_movement_reader
from finkg.tasks.movement.forecast import MovementConfig
from finkg.tasks.movement.questions import split_stocks
from finkg.tasks.span import Span
from tests.readers import THREADS
from tests.test_movement import SESSIONS, TICKERS, market

NY = ZoneInfo("America/New_York")


def _at(i: int) -> dt.datetime:
    return dt.datetime.combine(SESSIONS[i], dt.time(0), NY)


TRAIN = Span(_at(8), _at(30))
VALIDATION = Span(_at(30), _at(45))
SPLIT = split_stocks(TICKERS, seed=0)
DTW = MovementConfig(k=3, sample=1.0)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("adapt-movement")
    settings = Settings(home=root / "home", embedder="hash", threads=THREADS, reader="smollm2-135m")
    with open_store(root / "store", settings=settings) as store:
        paths = market(root / "csv")
        ingest(store, "prices", loader("prices"), paths, IngestOptions(graphs=store.graphs))
    return root, settings


def _env(s: Settings) -> dict[str, str]:
    """The settings as the CLI reads them (it builds its own from the environment)."""
    return {
        "FINKG_HOME": str(s.home), "FINKG_READER": s.reader, "FINKG_EMBEDDER": s.embedder,
        "FINKG_THREADS": str(s.threads),
    }  # fmt: skip


@pytest.mark.model  # SmolLM2-135M, trained and read
def test_the_cli_trains_an_adapter_by_stock_that_saw_no_later_label_and_forecasts_record_it(
    world: tuple[Path, Settings],
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("peft")
    root, settings = world
    result = CliRunner().invoke(
        cli,
        [
            *f"train-reader --job movement --name smol-move --train {TRAIN.first_day}:"
            f"{TRAIN.last_day} --validation {VALIDATION.first_day}:{VALIDATION.last_day} "
            "--anchors 4 --val-anchors 2 --batch 2 --max-steps 2 --rank 4 --alpha 8 "
            "--lr 5e-3 --precision bf16 --store".split(),
            str(root / "store"),
        ],
        env=_env(settings),
    )
    assert result.exit_code == 0, result.output
    assert "trained on 4 questions of 4 queries, 2 steps" in result.output
    assert "validation MCC" in result.output and "FINKG_ADAPTER=smol-move" in result.output
    folder = settings.cache_dir / "adapters" / "smol-move"
    m = AdapterManifest.model_validate_json((folder / "manifest.json").read_text())
    assert m.job == "movement" and m.figures.metric == "MCC" and m.figures.steps == 2
    # the matrix products in bf16, as asked, and said where the adapter's figures are
    assert m.hyper_parameters["precision"] == m.figures.precision == "bf16"
    assert "on cpu, bf16" in result.output
    # by stock: the training questions come from the training stocks only, the
    # validation ones from the validation stocks; the test stocks are never asked about
    assert m.job_parameters["stocks"] == SPLIT and m.job_parameters["retriever"] == "none"
    t, v = m.training, m.validation
    assert t.items == t.anchors == 4 and v.items == 2
    assert t.labels_before == VALIDATION.start and t.last_matured < VALIDATION.start
    assert v.labels_before == VALIDATION.end and v.last_matured < VALIDATION.end

    # the reader loads it by name; the forecast's run used the adapter node
    runner = CliRunner()
    forecast = runner.invoke(
        cli,
        [
            *f"forecast --ticker {SPLIT['test'][0]} --date {SESSIONS[46]} --retriever none "
            "--store".split(),
            str(root / "store"),
        ],
        env={**_env(settings), "FINKG_ADAPTER": "smol-move"},
    )
    assert forecast.exit_code == 0, forecast.output
    with open_store(root / "store", settings=settings) as store:
        quads = list(store.quads(store.graphs.outputs))
    adapters = {q.subject: q.object.value for q in quads if q.predicate == FKG.adapterSha256}
    used = {q.object for q in quads if q.predicate == PROV.used}
    assert list(adapters.values()) == [m.adapter_sha256] and set(adapters) <= used


def test_training_questions_do_not_change_when_later_prices_do(
    world: tuple[Path, Settings], tmp_path: Path
) -> None:
    """Future invariance: every bar from the validation period's first session on is
    tripled (the movement at the cut flips, later windows move); the training questions,
    their retrieved windows (DTW) and labels, stay."""
    root, settings = world
    copy = tmp_path / "store"
    shutil.copytree(root / "store", copy)
    dtw = open_retriever("dtw")
    train = SPLIT["train"]
    rows = []
    for tamper in (False, True):
        with open_store(copy, settings=settings) as store:
            if tamper:
                market = store.graphs.market.value
                store.update(
                    "PREFIX fkg: <https://w3id.org/finkg/ns#> "
                    f"DELETE {{ GRAPH <{market}> {{ ?bar fkg:adjClose ?c }} }} "
                    f"INSERT {{ GRAPH <{market}> {{ ?bar fkg:adjClose ?x }} }} "
                    f"WHERE {{ GRAPH <{market}> {{ ?bar a fkg:PriceBar ; "
                    "fkg:sessionDate ?d ; fkg:adjClose ?c . FILTER (?d >= "
                    f'"{SESSIONS[30].isoformat()}"^^<http://www.w3.org/2001/XMLSchema#date>) '
                    "BIND (?c * 3 AS ?x) } }",
                    note="the future rewritten",
                )
            for span, before in ((TRAIN, VALIDATION.start), (Span(TRAIN.start, _at(34)), _at(34))):
                found = examples(
                    store, train, span, before=before, retriever=dtw, config=DTW, seed=0
                )
                assert found and all(e.matured_at < before for e in found)
                rows.append(period(span.start, span.end, before, found).sha256)
    plain, plain_later, tampered, tampered_later = rows
    assert plain == tampered
    # the control: a period running into the rewrite does see it
    assert plain_later != tampered_later


def test_bad_periods_and_options_are_refused(world: tuple[Path, Settings]) -> None:
    root, settings = world
    none = open_retriever("none")
    with open_store(root / "store", settings=settings) as store:
        with pytest.raises(InputError, match="must end before the validation period"):
            train_movement_reader(
                store, settings, name="bad", training=Span(TRAIN.start, _at(35)),
                validation=VALIDATION, retriever=none,
            )  # fmt: skip
        with pytest.raises(InputError, match="stocks come from the split"):
            train_movement_reader(
                store, settings, name="bad", training=TRAIN, validation=VALIDATION,
                retriever=none, config=MovementConfig(universe=("AAA",)),
            )  # fmt: skip
    result = CliRunner().invoke(
        cli,
        [
            *"train-reader --job movement --name x --train 2019-01-10:2019-02-01 --validation "
            "2019-02-04:2019-02-20 --retriever colbert --store".split(),
            str(root / "store"),
        ],
        env=_env(settings),
    )
    assert result.exit_code == 2 and "unknown retriever" in result.output
