"""`finkg ask` end to end on the demo world: routes, retrieval, grounding, the written answer,
its audit trail, the time rule, and the CLI."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re

import pytest
from click.testing import CliRunner
from pyoxigraph import NamedNode

from finkg.cli import cli
from finkg.config import Settings
from finkg.demo.world import WorldSpec, build_world
from finkg.errors import InputError
from finkg.kg.audit import trace
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store
from finkg.reader.llm import ContextOverflow, ScriptedLLM
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.index.indexes import open_indexes
from finkg.retrieval.memory import bank
from finkg.retrieval.passages import PassageRetriever
from finkg.shapes.validate import validate_store
from finkg.tasks.qa.ask import QA, QAConfig
from finkg.tasks.qa.setup import resolve_company

NY = dt.timezone(dt.timedelta(hours=-5))
LATE = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
FKG = "https://w3id.org/finkg/ns#"
PROV = "http://www.w3.org/ns/prov#"
ID = "https://w3id.org/finkg/id/"
XSD = "http://www.w3.org/2001/XMLSchema#"
STATUSES = {"High", "Medium", "Low", "Requires Review", "Critical Issues"}
BLOCK = re.compile(r"^\[(C\d+|B\d+|T\d+)\] (.*)$", re.M)
NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?%?(?: (?:million|billion))?")


def _respond(messages) -> str:
    """A careful fake reader: quotes the first evidence sentence holding a number."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if "market-data tools" in system:
        ticker = re.search(r"\b([A-Z]{4})\b", user.split("Today is")[0])
        day = re.search(r"(\d{4}-\d{2}-\d{2})", user)
        return json.dumps(
            {"tool": "close", "ticker": ticker.group(1) if ticker else "", "date": day.group(1)}
        )
    blocks = BLOCK.findall(user)
    for block_id, text in blocks:
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            numbers = NUMBER.findall(sentence)
            if numbers:
                return json.dumps(
                    {
                        "summary": sentence.strip(),
                        "insights": [{"text": sentence.strip(), "citations": [block_id]}],
                        "signals": [],
                        "citations": [block_id],
                        "numbers": [{"value": numbers[0], "label": "figure", "citation": block_id}],
                        "validation_status": "High",
                    }
                )
    return json.dumps(
        {
            "summary": "The evidence does not answer the question.",
            "insights": [],
            "signals": [],
            "citations": [],
            "numbers": [],
            "validation_status": "Low",
        }
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("qa")
    manifest = build_world(root / "world", WorldSpec(tickers=4, sessions=80, users=2))
    settings = Settings(home=root / "home")
    store = open_store(root / "store", settings=settings)
    init_store(store)
    options = IngestOptions(graphs=store.graphs)
    for kind, pattern in (("companies", "companies.csv"), ("prices", "prices/*.csv")):
        ingest(store, kind, loader(kind), sorted((root / "world").glob(pattern)), options)
    docs = sorted((root / "world" / "documents").glob("*.txt"))
    report = ingest_documents(store, docs)
    assert report.ready == len(docs) == 4
    text, vectors, _ = open_indexes(
        store, settings, embedder=HashEmbedder(), directory=root / "indexes"
    )
    yield root, settings, store, manifest, (text, vectors)
    with contextlib.suppress(AttributeError):  # the CLI test closes it to open it itself
        store.close()


def _qa(world, llm=None, **config) -> QA:
    _, _, store, _, (text, vectors) = world
    retriever = PassageRetriever(store, text=text, vectors=vectors, embedder=HashEmbedder())
    return QA(
        store,
        retriever,
        llm or ScriptedLLM(respond=_respond),
        matcher=bank.Matcher(HashEmbedder()),
        config=QAConfig(**config),
    )


def _doc_of(store: BaseStore, chunk: NamedNode) -> str:
    found = store.select(
        f"SELECT ?title WHERE {{ GRAPH ?g {{ <{chunk.value}> <{PROV}wasDerivedFrom> ?d }} "
        "GRAPH ?h { ?d <http://purl.org/dc/terms/title> ?title } }"
    )
    return next(iter(found))["title"].value  # type: ignore[index, union-attr]


def test_an_answer_is_grounded_in_its_document_and_written_with_its_run(world) -> None:
    _root, _, store, manifest, _ = world
    pair = manifest.qa[0]
    truth = next(d for d in manifest.documents if d.path == pair.document)
    asked = _qa(world).ask(pair.question, as_of=LATE)
    assert [p.route for p in asked.parts] == ["documents"] * len(asked.parts)
    passages = [b for b in asked.blocks if b.id.startswith("C")]
    assert 1 <= len(passages) <= 5
    assert _doc_of(store, passages[0].node) == truth.title  # the right document ranks first
    assert asked.scores["j"] == 1.0 and 0 < asked.scores["s_comp"] <= 1
    assert asked.scores["gc"] == 1.0  # the quoted figure is in the evidence
    assert asked.iri is not None
    report = validate_store(store)
    assert report.conforms, report.text()
    # the answer's citation resolves to a chunk; audit walks it to the document and its
    # lifecycle transitions
    cites = {
        r["chunk"].value  # type: ignore[union-attr]
        for r in store.select(
            f"SELECT ?chunk WHERE {{ GRAPH ?g {{ <{asked.iri.value}> <{FKG}citation> ?c . "
            f"?c <{FKG}cites> ?chunk }} }}"
        )
    }
    assert cites == {passages[0].node.value}
    hops = trace(store, asked.iri.value)
    reached = {h.iri for h in hops}
    assert passages[0].node.value in reached
    transitions = [
        h
        for h in hops
        if (
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
            "https://w3id.org/finkg/ns#Transition",
        )
        in h.statements
    ]
    assert len(transitions) >= 4  # Uploaded → Normalized → Analyzed → Indexed → Ready
    # a second identical ask adds nothing
    before = store.generation()
    again = _qa(world).ask(pair.question, as_of=LATE)
    assert again.iri == asked.iri and store.generation() == before


def test_as_of_keeps_documents_published_later_out(world) -> None:
    _, _, _store, manifest, _ = world
    first = min(manifest.documents, key=lambda d: d.published)
    cutoff = dt.datetime.combine(
        dt.date.fromisoformat(first.published) + dt.timedelta(days=1), dt.time(1), tzinfo=NY
    )
    retriever = _qa(world).retriever
    eligible = retriever.candidates(before=cutoff)
    assert eligible and all(p.available < cutoff for p in eligible)
    assert {p.title for p in eligible} == {
        d.title for d in manifest.documents if d.published <= first.published
    }
    later = [d for d in manifest.documents if d.published > first.published]
    pair = next(q for q in manifest.qa if q.document in {d.path for d in later})
    asked = _qa(world).ask(pair.question, as_of=cutoff, write=False)
    assert all(b.node in {p.node for p in eligible} for b in asked.blocks if b.id.startswith("C"))


def test_company_filter_keeps_only_passages_about_it(world) -> None:
    _, _, store, manifest, _ = world
    doc = next(d for d in manifest.documents if len(d.tickers) == 1)
    company = resolve_company(store, doc.tickers[0].lower())
    eligible = _qa(world).retriever.candidates(before=LATE, company=company)
    assert eligible
    for p in eligible:
        assert store.ask(
            f"ASK {{ GRAPH ?g {{ <{p.node.value}> <{FKG}about> <{company.value}> }} }}"
        )
    with pytest.raises(InputError, match="no company with this ticker"):
        resolve_company(store, "NOPE")


def test_each_path_ranks_and_rrf_fuses(world) -> None:
    _, _, _store, manifest, _ = world
    retriever = _qa(world).retriever
    hits = retriever.search(manifest.qa[0].question, before=LATE)
    assert hits and set().union(*(h.ranks for h in hits)) <= {"sparse", "dense", "metadata"}
    top = hits[0]
    assert top.score == pytest.approx(sum(1 / (60 + r) for r in top.ranks.values()))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    only_sparse = retriever.search(manifest.qa[0].question, before=LATE, paths=["sparse"])
    assert all(set(h.ranks) == {"sparse"} for h in only_sparse)
    with pytest.raises(InputError, match="unknown or unavailable retrieval path"):
        retriever.search("x", before=LATE, paths=["graph"])


def test_a_bank_match_answers_without_the_reader(world) -> None:
    _, _, store, manifest, _ = world
    company = resolve_company(store, manifest.documents[0].tickers[0])
    evidence = _qa(world).retriever.candidates(before=LATE, company=company)[0]
    entry = bank.BankEntry(
        company=company.value,
        question="What was the total revenue?",
        period="FY2018",
        answer="$12.5 billion",
        available_at=evidence.available + dt.timedelta(hours=1),
        evidence=(evidence.node.value,),
    )
    bank.add_entries(store, [entry])
    llm = ScriptedLLM(respond=_respond)
    asked = _qa(world, llm).ask(
        "What was the total revenue in FY2018?", as_of=LATE, company=company
    )
    assert [p.route for p in asked.parts] == ["bank"]
    assert asked.summary == "$12.5 billion" and llm.calls == []
    assert asked.read is None and asked.iri is not None
    # before the entry was knowable the bank has nothing and retrieval answers instead
    early = _qa(world).ask(
        "What was the total revenue in FY2018?",
        as_of=entry.available_at,
        company=company,
        write=False,
    )
    assert [p.route for p in early.parts] == ["documents"]


def test_a_price_question_goes_to_the_close_tool(world) -> None:
    _, _, store, manifest, _ = world
    ticker = manifest.documents[0].tickers[0]
    day = "2019-02-01"
    asked = _qa(world).ask(f"What was the closing price of {ticker} on {day}?", as_of=LATE)
    assert [p.route for p in asked.parts] == ["tool"]
    row = store.select(
        f"SELECT ?close WHERE {{ GRAPH ?g {{ ?b <{FKG}about> <{ID}company/{ticker}> ; "
        f"<{FKG}sessionDate> ?d ; <{FKG}close> ?close }} "
        f'FILTER (?d <= "{day}"^^<{XSD}date>) }} ORDER BY DESC(?d) LIMIT 1'
    )
    close = next(iter(row))["close"].value  # type: ignore[index, union-attr]
    assert close in asked.parts[0].answer
    assert asked.blocks[0].id == "T1"
    # the tool never reads a bar from after the answer's instant
    early = dt.datetime(2019, 1, 2, tzinfo=NY)
    asked = _qa(world).ask(
        f"What was the closing price of {ticker} on {day}?", as_of=early, write=False
    )
    assert [p.route for p in asked.parts] == ["documents"]


def test_past_the_context_window_the_weakest_passage_goes(world) -> None:
    _, _, _, manifest, _ = world
    seen: list[int] = []

    class Narrow(ScriptedLLM):
        def generate(self, messages, schema=None, *, max_tokens=512):
            n = len(BLOCK.findall(messages[-1]["content"]))
            seen.append(n)
            if n > 2:
                raise ContextOverflow("too long")
            return super().generate(messages, schema, max_tokens=max_tokens)

    asked = _qa(world, Narrow(respond=_respond)).ask(
        manifest.qa[1].question, as_of=LATE, write=False
    )
    assert seen[0] > 2 and seen[-1] == 2
    assert [b.id for b in asked.blocks] == ["C1", "C2"]


def test_bank_add_checks_every_line_before_writing_and_ask_then_uses_it(world, tmp_path) -> None:
    root, settings, _, manifest, _ = world
    location = tmp_path / "store"
    s = open_store(location, settings=settings)
    init_store(s)
    ingest(
        s,
        "companies",
        loader("companies"),
        [root / "world" / "companies.csv"],
        IngestOptions(graphs=s.graphs),
    )
    ingest_documents(s, sorted((root / "world" / "documents").glob("*.txt")))
    ticker = manifest.documents[1].tickers[0]
    company = resolve_company(s, ticker)
    chunk = next(
        iter(
            s.select(
                f"SELECT ?c ?t WHERE {{ GRAPH ?g {{ ?c <{FKG}about> <{company.value}> ; "
                f"<{FKG}availableAt> ?t }} }} LIMIT 1"
            )
        )
    )
    available = dt.datetime.fromisoformat(chunk["t"].value)  # type: ignore[index, union-attr]
    generation = s.generation()
    s.close()
    good = {
        "company": ticker.lower(),
        "question": "What was the operating margin?",
        "period": "FY2018",
        "answer": "21.4%",
        "available_at": (available + dt.timedelta(days=1)).isoformat(),
        "evidence": [chunk["c"].value],  # type: ignore[index, union-attr]
    }
    runner = CliRunner()
    env = {"FINKG_HOME": str(settings.home), "FINKG_EMBEDDER": "hash"}
    at = ["--store", str(location)]
    path = tmp_path / "bank.jsonl"
    cases = [
        ({k: v for k, v in good.items() if k != "answer"}, "missing field"),
        (good | {"available_at": "2019-05-01T10:00"}, "zone"),
        (good | {"company": "NOPE"}, "no company with this ticker"),
        (good | {"period": "2019"}, "period"),
        ("[1, 2]", "JSON object"),
    ]
    for bad, message in cases:
        second = bad if isinstance(bad, str) else json.dumps(bad)
        path.write_text(json.dumps(good) + "\n" + second + "\n")
        result = runner.invoke(cli, ["bank", "add", str(path), *at], env=env)
        assert result.exit_code == 2, result.output
        assert f"{path}:2" in result.output and message in result.output, result.output
    early = good | {"available_at": (available - dt.timedelta(days=1)).isoformat()}
    path.write_text(json.dumps(early) + "\n")
    result = runner.invoke(cli, ["bank", "add", str(path), *at], env=env)
    assert result.exit_code != 0 and "evidence" in result.output  # dated before its evidence
    with open_store(location, settings=settings) as s:
        assert s.generation() == generation  # nothing written by any refused file
    path.write_text(json.dumps(good) + "\n")
    result = runner.invoke(cli, ["bank", "add", str(path), *at], env=env)
    assert result.exit_code == 0 and "1 added" in result.output, result.output
    again = runner.invoke(cli, ["bank", "add", str(path), *at], env=env)
    assert "0 added" in again.output
    listed = runner.invoke(cli, ["bank", "list", "--company", ticker, *at], env=env)
    assert "21.4%" in listed.output and "1 entries" in listed.output
    before_entry = runner.invoke(
        cli, ["bank", "list", "--as-of", available.date().isoformat(), *at], env=env
    )
    assert "0 entries" in before_entry.output


def test_tied_passages_share_their_mean_rank(world) -> None:
    """Breaking ties by pool order would hand a document's first chunks the top ranks."""
    _, _, store, _, _ = world

    class Same:  # every passage reads alike
        def tokens(self, iris):
            return [["revenu", "rose"] for _ in iris]

    retriever = PassageRetriever(store, text=Same(), vectors=None, embedder=None)
    pool = retriever.candidates(before=LATE)
    ranks = retriever.ranks("revenue rose", pool, ["sparse"])["sparse"]
    assert len(pool) > 2
    assert ranks.tolist() == [pytest.approx((1 + len(pool)) / 2)] * len(pool)
    hits = retriever.fuse(pool, {"sparse": ranks})
    assert len({h.score for h in hits}) == 1


def test_a_cross_encoder_that_was_never_trained_is_named_with_the_command(tmp_path) -> None:
    from finkg.tasks.qa.setup import open_reranker

    settings = Settings(home=tmp_path)
    assert open_reranker("auto", settings, ScriptedLLM()) is None  # auto falls back to none
    with pytest.raises(InputError, match="finkg train-reranker"):
        open_reranker("cross", settings, ScriptedLLM())
    with pytest.raises(InputError, match="unknown reranker"):
        open_reranker("colbert", settings, ScriptedLLM())


class _Together(ScriptedLLM):
    """The careful fake, declaring it can read several prompts at once (issue 29)."""

    concurrency = 4


def test_many_questions_read_together_write_what_one_at_a_time_writes(world) -> None:
    _, _, store, manifest, _ = world
    questions = [pair.question for pair in manifest.qa[:4]]
    one = [_qa(world).ask(q, as_of=LATE) for q in questions]
    before = store.generation()
    many = _qa(world, llm=_Together(respond=_respond)).ask_many(questions, as_of=LATE)
    assert [a.iri for a in many] == [a.iri for a in one]  # the same answers, in order
    assert [a.output for a in many] == [a.output for a in one]
    assert store.generation() == before  # so writing them again added nothing


def test_the_llm_reranker_scores_passages_together_as_one_at_a_time() -> None:
    from finkg.retrieval.rank.rerank import LLMReranker

    def scores(messages, options):  # type: ignore[no-untyped-def]
        n = len(messages[-1]["content"])
        return {o: -((n * (i + 3)) % 7) / 3 for i, o in enumerate(options)}

    texts = [f"passage {i} " * (i + 1) for i in range(12)]
    alone = LLMReranker(ScriptedLLM(scores=scores)).scores("q", texts)
    together = LLMReranker(_Together(scores=scores)).scores("q", texts)
    assert together.tolist() == alone.tolist()


# last: it closes the module's store to open it through the CLI
def test_the_cli_answers_and_prints_json(world, monkeypatch) -> None:
    """The command's own path (options, opening indexes, bank and reranker, printing); the
    reader is the fake above (a packaged reader's JSON answer takes minutes on two cores and
    is exercised by benchmarks/qa.py)."""
    import finkg.reader.transport.backends

    monkeypatch.setattr(
        finkg.reader.transport.backends,
        "open_reader",
        lambda *a, **k: ScriptedLLM(respond=_respond),
    )
    root, settings, store, manifest, _ = world
    store.close()
    runner = CliRunner()
    env = {"FINKG_HOME": str(settings.home), "FINKG_EMBEDDER": "hash"}
    args = [
        "ask",
        manifest.qa[2].question,
        "--store",
        str(root / "store"),
        "--json",
        "--rerank",
        "none",
    ]
    result = runner.invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["validation_status"] in STATUSES and report["summary"]
    assert report["scores"]["j"] == 1.0 and report["evidence"][0]["id"] == "C1"
    assert report["answer"].startswith("https://w3id.org/finkg/id/answer/")
    assert report["routes"][0]["route"] == "documents"
    bad = runner.invoke(
        cli, ["ask", "x", "--store", str(root / "store"), "--as-of", "2020-01-01T10:00"], env=env
    )
    assert bad.exit_code == 2 and "needs a zone" in bad.output
