"""The QA reranker (paper 002 §4.3): the cross-encoder, its folder and manifest, stage-1 data
(TAT-QA labels, entity abstraction), stage-2 labelling by the reader, the options."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from finkg.errors import InputError
from finkg.reader.llm import ScriptedLLM
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.rank import cross_encoder as ce
from finkg.retrieval.rank.trained import weights_digest, write_manifest
from finkg.tasks.qa import rerank_company, rerank_data
from finkg.tasks.qa.rerank_train import RerankConfig, ranking_metrics
from tests.readers import THREADS

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa"

GROUPS = [
    ce.Group(
        "How much did revenue grow in the year?",
        ("Revenue grew 12% to $4.1 billion on higher sales of services.",),
        (
            "The board appointed a new chief financial officer in March.",
            "The company leases its headquarters and two warehouses.",
            "Litigation with a former supplier was settled.",
        ),
    ),
    ce.Group(
        "Who was appointed chief financial officer?",
        ("The board appointed Jane Roe as chief financial officer in March.",),
        (
            "Revenue grew 12% to $4.1 billion on higher sales of services.",
            "Inventories fell by 3% as stores cleared seasonal goods.",
            "The company leases its headquarters and two warehouses.",
        ),
    ),
]


def _manifest(folder: Path, **extra: object) -> None:
    digest = weights_digest(folder)
    write_manifest(
        folder,
        {"kind": ce.KIND, "format": ce.FORMAT, "model_id": f"test@{digest[:8]}"}
        | {"weights_sha256": digest}
        | extra,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reranker")
    ce.train(GROUPS, folder, negatives=3, epochs=4, lr=2e-4, max_length=48, seed=0, threads=THREADS)
    _manifest(folder)
    return folder


@pytest.mark.model
def test_training_puts_each_positive_above_its_hard_negatives(trained: Path) -> None:
    from finkg.retrieval.index.embed import packaged_model_dir

    before = ce._net(packaged_model_dir(), threads=THREADS)
    after = ce.CrossEncoder(trained, threads=THREADS)
    for g in GROUPS:
        texts = [*g.positives, *g.negatives]
        untrained = ce.pair_scores(*before, g.query, texts)
        assert np.ptp(untrained) == 0  # the zero head: no order before training
        s = after.scores(g.query, texts)
        assert s[0] > s[1:].max(), s


@pytest.mark.model
def test_scores_are_deterministic_and_do_not_depend_on_the_company_they_keep(
    trained: Path,
) -> None:
    m = ce.CrossEncoder(trained, threads=THREADS)
    q, texts = GROUPS[0].query, [*GROUPS[0].positives, *GROUPS[0].negatives]
    a, b = m.scores(q, texts), m.scores(q, texts)
    assert np.array_equal(a, b)
    alone = m.scores(q, texts[2:3])
    assert alone[0] == pytest.approx(a[2], abs=1e-5)
    filler = " ".join(["The weather was mild and the harvest average."] * 60)
    with_answer, without = m.scores(q, [filler + " " + texts[0], filler + " " + texts[1]])
    assert with_answer > without  # the answer past the first window is still read (MaxP)
    assert m.scores(q, []).shape == (0,)


@pytest.mark.model
def test_a_folder_is_refused_when_missing_altered_or_of_another_kind(
    trained: Path, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match="finkg train-reranker") as e:
        ce.CrossEncoder(tmp_path / "nothing")
    assert str(tmp_path / "nothing") in str(e.value)
    copy = tmp_path / "copy"
    shutil.copytree(trained, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    assert ce.CrossEncoder(copy).model_id == manifest["model_id"]  # the round trip
    head = copy / "model" / ce.HEAD
    head.write_bytes(head.read_bytes() + b" ")
    with pytest.raises(InputError, match="do not match their manifest"):
        ce.CrossEncoder(copy)
    _manifest(copy, kind="finkg-finseer")
    with pytest.raises(InputError, match="not a finkg-cross-encoder folder"):
        ce.CrossEncoder(copy)


def test_training_refuses_groups_it_cannot_learn_from(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="positive and a negative"):
        ce.train([ce.Group("q", ("p",), ())], tmp_path)


def test_abstraction_is_consistent_within_a_group_and_spares_common_words() -> None:
    a = rerank_data.Abstractor(["what was the company revenue and net income", "it reported"])
    q, p, n = a.abstract(
        [
            "What was Proofpoint's net income in fiscal 2019?",
            "Proofpoint reported net income in 2019 and 2018 under GAAP in December.",
            "Zendesk Inc. reported revenue in Q3 2019 (NYSE: ZEN).",
        ]
    )
    assert q == "What was [NAME_1]'s net income in [YEAR_1]?"
    assert p == "[NAME_1] reported net income in [YEAR_1] and [YEAR_2] under GAAP in December."
    assert n == "[NAME_2] reported revenue in Q3 [YEAR_1] ([TICKER])."


def test_metrics_count_ties_as_half() -> None:
    g = [ce.Group("q", ("p",), ("n",))]
    assert ranking_metrics(lambda q, t: np.zeros(len(t)), g) == {
        "mrr": pytest.approx(1 / 1.5, abs=1e-4),
        "accuracy@1": 0.5,
        "groups": 1,
    }


@pytest.mark.skipif(not (DATA / rerank_data.TATQA).is_file(), reason="../shared/data absent")
def test_tatqa_labels_follow_the_annotators() -> None:
    tat = rerank_data.load_tatqa(DATA / rerank_data.TATQA)
    assert len(tat.contexts) == 278 and len(tat.questions) > 1600
    by_text = {q.text: q for q in tat.questions}
    text_q = by_text["What is the company paid on a cost-plus type contract?"]
    uid = text_q.context
    assert text_q.positives == (f"{uid}/p2",)
    assert f"{uid}/table" not in text_q.negatives and f"{uid}/p1" in text_q.negatives
    table_q = next(q for q in tat.questions if q.positives == (f"{q.context}/table",))
    assert table_q.negatives == ()  # its paragraphs were not annotated: not negatives
    split = rerank_data.split_contexts(tat.contexts, held_out=0.2, seed=0)
    assert not set(split["train"]) & set(split["held_out"])
    keys = tat.of(split["held_out"][:5])
    miner = rerank_data.Miner(keys, [tat.passages[k] for k in keys], HashEmbedder(dim=32))
    q = next(q for q in tat.questions if q.context == split["held_out"][0])
    mined = miner.top(q.text, 4, exclude=q.context)
    assert len(mined) == 4 and not any(k.startswith(q.context) for k in mined)


def _reader_scores(messages, options) -> dict[str, float]:
    passage = messages[-1]["content"].split("Passage:")[1].lower()
    yes = -0.1 if "revenue" in passage else -3.0
    return {"yes": yes, "Yes": yes - 2, "no": -3.1 - yes, "No": -5.1 - yes}


def test_stage_two_questions_and_labels_come_from_the_reader() -> None:
    filler = " ".join(["word"] * 40)
    passages = [
        f"Revenue grew 8% on pricing. {filler}",
        f"Revenue in Latin America fell. {filler}",
        f"The board met four times. {filler}",
        f"Leases run to 2030. {filler}",
        f"Pension costs rose. {filler}",
        "Too short to ask about.",
    ]
    llm = ScriptedLLM(
        respond=lambda m: json.dumps({"question": "How did revenue change in the year?"}),
        scores=_reader_scores,
    )
    written = rerank_company.write_questions(llm, "Acme", passages, n=3, seed=0)
    assert len(written) == 3 and all(i != 5 for i, _ in written)
    labelled = rerank_company.label(
        llm,
        written,
        passages,
        HashEmbedder(dim=32),
        candidates=3,
        random_negatives=2,
        threshold=0.5,
        seed=0,
    )
    assert labelled  # every question found a revenue passage among its candidates
    for item in labelled:
        assert item.source in item.candidates
        assert not set(item.random) & set(item.candidates)
        g = item.group(passages)
        assert all("revenue" in p.lower() for p in g.positives)
        assert sum("revenue" in p.lower() for p in g.negatives) <= len(item.random)
        assert item.record()["candidates"][0]["p_yes"] == pytest.approx(item.p_yes[0], abs=1e-6)


def test_bad_options_name_the_option() -> None:
    with pytest.raises(InputError, match="--company-valid"):
        RerankConfig(company_questions=4, company_valid=4)
    with pytest.raises(InputError, match="--threshold"):
        RerankConfig(threshold=1.0)
    with pytest.raises(InputError, match="--questions"):
        RerankConfig(questions=0)
