"""`finkg recommend` (paper 004): stages, variants, the contract, isolation, time, metrics.

A small synthetic FAR-Trans world (3 customers, 3 companies, 200 sessions) loaded with the
real loader; the reader is a ScriptedLLM that picks the last listed candidates and
recommends the first listed assets, citing the first node of the graph it was given (the
test of a real packaged reader is `test_a_packaged_reader_...`, marked `model`).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from pyoxigraph import Literal, NamedNode

from finkg.cli import cli
from finkg.config import Settings
from finkg.demo.world import WorldSpec, build_world
from finkg.errors import InputError, TimestampError
from finkg.evaluation import hits
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG
from finkg.reader.llm import ScriptedLLM
from finkg.shapes.validate import validate_store
from finkg.tasks.recommend import pipeline as R
from finkg.tasks.recommend.stages import subgraph
from finkg.tasks.recommend.window import count_tokens
from tests.readers import SMALL_READER, THREADS

ATHENS = ZoneInfo("Europe/Athens")
AS_OF = dt.datetime(2019, 8, 1, tzinfo=ATHENS)
LISTED = re.compile(r"^(https://\S+) \|", re.M)
ASSET = re.compile(r"^(https://\S+/asset/\S+) \|", re.M)
NODE_ID = re.compile(r'"id":"([^"]+)"')


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("rec") / "world"
    manifest = build_world(folder, WorldSpec(users=3, tickers=3, sessions=200))
    return folder, [u.customer_id for u in manifest.users]


def _load(files: Path) -> BaseStore:
    store = open_store(None)
    paths = sorted((files / "fartrans").glob("*.csv"))
    report = ingest(
        store, "fartrans", loader("fartrans"), paths, IngestOptions(graphs=store.graphs)
    )
    assert not report.rejects
    return store


def _respond(messages) -> str:  # type: ignore[no-untyped-def]
    user = messages[1]["content"]  # the prompt (a repair request comes after it)
    if "Candidates (" in user:
        return json.dumps({"selected": LISTED.findall(user)[-3:]})
    ids = NODE_ID.findall(user)
    picks = [{"asset": a, "reason": "fits", "evidence": ids[:1]} for a in ASSET.findall(user)[:3]]
    return json.dumps({"recommendations": picks})


def _reader(**kw: object) -> ScriptedLLM:
    return ScriptedLLM(respond=_respond, **kw)  # type: ignore[arg-type]


def _count(store: BaseStore, cls: NamedNode) -> int:
    return len(store.select(f"SELECT ?s WHERE {{ GRAPH ?g {{ ?s a <{cls.value}> }} }}"))


def test_multi_stage_recommends_three_assets_citing_the_subgraphs(
    world: tuple[Path, list[str]],
) -> None:
    files, users = world
    store = _load(files)
    llm = _reader()
    result = R.recommend(store, llm, user=users[0], as_of=AS_OF)
    assert result.ok and len(set(result.assets)) == 3
    assert [s.name for s in result.stages] == ["personal", "market"]
    personal, market = result.stages
    assert personal.selection and len(personal.selection.selected) == 3
    assert {n["type"] for n in personal.nodes} >= {"Transaction"}
    # the MR prompt carries the PTR subgraph as context (multi-stage)
    assert len(llm.calls) == 3
    assert personal.text() in llm.calls[1][1]["content"]
    final = llm.calls[2][1]["content"]
    assert personal.text() in final and market.text() in final
    # every cited id is a node of the subgraphs given; assets are the market's
    for pick in result.output.recommendations:  # type: ignore[union-attr]
        assert set(pick.evidence) <= set(result.offered_nodes)
        assert pick.asset in result.offered_assets
    # written: the recommendation, three picks and the run, all in the outputs graph
    rec = result.recommendation
    assert rec is not None
    stored = list(store.quads(store.graphs.outputs))
    assert validate_store(store).conforms  # the output shapes with the evidence it cites
    about = {(q.predicate, q.object) for q in stored if q.subject == rec}
    assert (FKG.forCustomer, NamedNode(f"{store.graphs.base}customer/{users[0]}")) in about
    assert sum(1 for p, _ in about if p == FKG.recommends) == 3
    runs = [q for q in stored if q.predicate == FKG.task and q.object.value == "recommend"]
    assert len(runs) == 1
    # the same recommendation again adds nothing
    again = R.recommend(store, _reader(), user=users[0], as_of=AS_OF)
    assert again.recommendation == rec and not again.written
    assert _count(store, FKG.Recommendation) == 1


def test_parallel_market_retrieval_sees_no_personal_context(
    world: tuple[Path, list[str]],
) -> None:
    files, users = world
    store = _load(files)
    llm = _reader()
    result = R.recommend(
        store, llm, user=users[0], as_of=AS_OF, config=R.RecommendConfig(variant="parallel")
    )
    assert result.ok
    personal = result.stages[0]
    mr_prompt = llm.calls[1][1]["content"]
    assert "Context retrieved so far:\n(none)" in mr_prompt
    assert personal.text() not in mr_prompt


def test_full_baseline_injects_the_graph_cut_to_the_context_window(
    world: tuple[Path, list[str]],
) -> None:
    files, users = world
    store = _load(files)
    wide = R.recommend(
        store,
        _reader(),
        user=users[1],
        as_of=AS_OF,
        config=R.RecommendConfig(variant="full", n_ctx=200_000),
        write=False,
    )
    eligible = R.sg.candidates(
        store, FKG.Transaction, graphs=[store.graphs.user(users[1])], before=AS_OF, cap=10_000
    )
    assert wide.ok and wide.truncated == 0 and len(wide.prompts) == 1  # no retrieval calls
    given = {n["id"] for s in wide.stages for n in s.nodes}
    assert {c.iri for c in eligible} <= given
    narrow = R.recommend(
        store,
        _reader(),
        user=users[1],
        as_of=AS_OF,
        config=R.RecommendConfig(variant="full", n_ctx=3000, max_tokens=300),
        write=False,
    )
    assert narrow.truncated > 0
    # the scripted reader has no tokenizer: about three characters a token
    assert count_tokens(ScriptedLLM(), narrow.prompts[0]) <= 3000 - 3 * 300 - 300


def _graph_terms(store: BaseStore, graph: NamedNode) -> tuple[set[str], set[str]]:
    iris, literals = set(), set()
    for q in store.quads(graph):
        for term in (q.subject, q.object):
            if isinstance(term, NamedNode):
                iris.add(term.value)
            elif isinstance(term, Literal):
                literals.add(term.value)
    return iris, literals


def _found(terms: set[str], text: str) -> list[str]:
    """The terms `text` holds as whole tokens (transaction/5 is not in transaction/55)."""
    return [t for t in terms if re.search(r"(?<![\w./~-])" + re.escape(t) + r"(?![\w./~-])", text)]


def test_another_customers_graph_never_reaches_the_prompt_or_the_output(
    world: tuple[Path, list[str]],
) -> None:
    files, users = world
    store = _load(files)
    a, b = users[0], users[1]
    b_iris, b_literals = _graph_terms(store, store.graphs.user(b))
    a_iris, a_literals = _graph_terms(store, store.graphs.user(a))
    m_iris, m_literals = _graph_terms(store, store.graphs.market)
    only_b_iris = b_iris - a_iris - m_iris
    only_b_literals = {x for x in b_literals - a_literals - m_literals if len(x) >= 8}
    assert only_b_iris and only_b_literals
    secret = sorted(i for i in only_b_iris if "/transaction/" in i)[:2]

    def respond(messages):  # type: ignore[no-untyped-def]
        user = messages[1]["content"]  # the prompt (a repair request comes after it)
        if "Candidates (" in user:  # names B's transactions besides what it was shown
            return json.dumps({"selected": [*secret, *LISTED.findall(user)[-2:]]})
        return _respond(messages)

    llm = ScriptedLLM(respond=respond)
    result = R.recommend(store, llm, user=a, as_of=AS_OF)
    assert result.ok
    assert result.stages[0].selection.invalid == secret  # type: ignore[union-attr]
    prompts = "\n".join(m["content"] for p in result.prompts for m in p)
    assert _found(secret, "\n".join(secret))  # the check can see an IRI
    assert not _found(only_b_iris, prompts)
    assert not _found(only_b_literals, prompts)
    output = "\n".join(
        f"{q.subject} {q.predicate} {q.object}" for q in store.quads(store.graphs.outputs)
    )
    assert not _found(only_b_iris, output)
    assert not _found(only_b_literals, output)
    # the CONSTRUCT itself reads only the dataset, whatever it is asked for
    dataset = [store.graphs.user(a), store.graphs.market]
    assert subgraph(store, secret, graphs=dataset, before=AS_OF) == []


def test_a_reply_citing_what_was_not_offered_fails_and_writes_nothing(
    world: tuple[Path, list[str]], settings: Settings
) -> None:
    files, users = world
    store = _load(files)
    b_tx = next(
        i for i in _graph_terms(store, store.graphs.user(users[1]))[0] if "/transaction/" in i
    )

    def cites_b(messages):  # type: ignore[no-untyped-def]
        reply = json.loads(_respond(messages))
        if "recommendations" in reply:
            reply["recommendations"][0]["evidence"] = [b_tx]
        return json.dumps(reply)

    def unknown_asset(messages):  # type: ignore[no-untyped-def]
        reply = json.loads(_respond(messages))
        if "recommendations" in reply:
            reply["recommendations"][0]["asset"] = store.graphs.base + "asset/ZZX000000000"
        return json.dumps(reply)

    def same_asset(messages):  # type: ignore[no-untyped-def]
        reply = json.loads(_respond(messages))
        if "recommendations" in reply:
            first = reply["recommendations"][0]["asset"]
            for pick in reply["recommendations"]:
                pick["asset"] = first
        return json.dumps(reply)

    for respond in (cites_b, unknown_asset, same_asset):
        result = R.recommend(store, ScriptedLLM(respond=respond), user=users[0], as_of=AS_OF)
        assert not result.ok and result.read.attempts == 3 and not result.written
    assert _count(store, FKG.Recommendation) == 0 and _count(store, FKG.Run) == 0
    with pytest.raises(R.RecommendationRejected) as e:
        R.run_recommendation(
            store,
            settings,
            user=users[0],
            as_of=AS_OF,
            config=R.RecommendConfig(),
            llm=ScriptedLLM(respond=same_asset),
        )
    assert e.value.exit_code == 1


def _cut(src: Path, dst: Path, day: dt.date) -> Path:
    """The world's FAR-Trans files with only rows dated before `day`."""
    (dst / "fartrans").mkdir(parents=True)
    for name in ("customer_information.csv", "asset_information.csv"):
        shutil.copy(src / "fartrans" / name, dst / "fartrans" / name)
    for name in ("close_prices.csv", "transactions.csv"):
        with (src / "fartrans" / name).open() as f:
            rows = list(csv.reader(f))
        at = rows[0].index("timestamp")
        kept = [rows[0], *(r for r in rows[1:] if dt.date.fromisoformat(r[at]) < day)]
        assert len(kept) < len(rows)
        with (dst / "fartrans" / name).open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(kept)
    return dst


def test_the_contract_bounds_what_a_reply_may_cite() -> None:
    """Each pick cites at most EVIDENCE_PER_ASSET nodes, in the grammar too: an unbounded
    list let a small reader cite until its token budget cut the JSON off."""
    from pydantic import ValidationError

    from finkg.reader.schemas import EVIDENCE_PER_ASSET

    nodes = [f"https://e.org/node/{i}" for i in range(10)]
    assets = [f"https://e.org/asset/{i}" for i in range(4)]
    model = R.contract(assets, nodes)

    def reply(cited: int) -> dict[str, object]:
        picks = [{"asset": a, "reason": "fits", "evidence": nodes[:cited]} for a in assets[:3]]
        return {"recommendations": picks}

    model.model_validate(reply(EVIDENCE_PER_ASSET))
    with pytest.raises(ValidationError, match="at most 3 items"):
        model.model_validate(reply(EVIDENCE_PER_ASSET + 1))
    assert f'"maxItems": {EVIDENCE_PER_ASSET}' in json.dumps(model.model_json_schema())
    assert R.RecommendConfig().max_tokens >= 600  # three bounded picks fit the reply budget


@pytest.mark.parametrize("variant", R.VARIANTS)
def test_data_after_the_date_changes_no_prompt(
    world: tuple[Path, list[str]], tmp_path: Path, variant: str
) -> None:
    files, users = world
    config = R.RecommendConfig(variant=variant)
    full, cut = _load(files), _load(_cut(files, tmp_path / "cut", AS_OF.date()))
    a = R.recommend(full, _reader(), user=users[2], as_of=AS_OF, config=config, write=False)
    b = R.recommend(cut, _reader(), user=users[2], as_of=AS_OF, config=config, write=False)
    assert a.prompts == b.prompts and a.assets == b.assets and a.ok
    later = _count(full, FKG.Transaction) - _count(cut, FKG.Transaction)
    assert later > 0  # the full store did hold later transactions


def test_bad_input_is_named_with_its_fix(world: tuple[Path, list[str]], tmp_path: Path) -> None:
    files, users = world
    store = _load(files)
    with pytest.raises(InputError, match=r"unknown user.*'NOBODY'.*for example"):
        R.recommend(store, _reader(), user="NOBODY", as_of=AS_OF)
    with pytest.raises(TimestampError, match="no zone"):
        R.recommend(store, _reader(), user=users[0], as_of=dt.datetime(2019, 8, 1))  # noqa: DTZ001
    with pytest.raises(InputError, match=r"unknown variant \(got 'best'\); use one of multi"):
        R.RecommendConfig(variant="best")
    runner = CliRunner()
    disk = tmp_path / "store"
    base = ["recommend", "--store", str(disk), "--user", users[0]]
    for extra, message in (
        (["--date", "2019-08-01T10:00"], "needs a zone"),
        (["--date", "2019-08-01", "--variant", "best"], "unknown variant"),
        (["--date", "01/08/2019"], "not a date"),
    ):
        r = runner.invoke(cli, base + extra)
        assert r.exit_code == 2 and message in r.output, r.output
    r = runner.invoke(
        cli, ["recommend", "--store", str(disk), "--user", "NOBODY", "--date", "2019-08-01"]
    )
    assert r.exit_code == 2 and "unknown user" in r.output


def test_outcomes_count_the_customers_buys_and_the_assets_returns(
    world: tuple[Path, list[str]],
) -> None:
    files, users = world
    store = _load(files)
    user = users[0]
    o = hits.outcome(store, store.graphs.user(user), AS_OF, days=60)
    # the same sets straight from the CSVs (a row dated d is known at midnight after d)
    first, last = AS_OF.date(), AS_OF.date() + dt.timedelta(days=59)
    with (files / "fartrans" / "transactions.csv").open() as f:
        bought = {
            store.graphs.base + "asset/" + r["ISIN"]
            for r in csv.DictReader(f)
            if r["customerID"] == user
            and r["transactionType"] == "Buy"
            and first <= dt.date.fromisoformat(r["timestamp"]) <= last
        }
    assert o.purchased == frozenset(bought)
    closes: dict[str, list[tuple[dt.date, float]]] = {}
    with (files / "fartrans" / "close_prices.csv").open() as f:
        for r in csv.DictReader(f):
            closes.setdefault(r["ISIN"], []).append(
                (dt.date.fromisoformat(r["timestamp"]), float(r["closePrice"]))
            )
    up = set()
    for isin, series in closes.items():
        before = [p for d, p in series if d < first]
        after = [p for d, p in series if d <= last]
        if before and after and after[-1] > before[-1]:
            up.add(store.graphs.base + "asset/" + isin)
    assert o.profitable == frozenset(up) and 0 < len(up) < len(closes)
    rows = [([*sorted(o.combined)[:1], "x", "y"], o), (["x", "y", "z"], o)]
    assert hits.hits_at_3(rows).comb == (0.5 if o.combined else 0.0)
    assert len(hits.recommendation_dates(dt.date(2020, 1, 1), dt.date(2020, 12, 31))) == 27


@pytest.mark.model
def test_a_packaged_reader_recommends_within_the_contract_or_writes_nothing(
    world: tuple[Path, list[str]], small_reader: Path
) -> None:
    from finkg.reader.transport.llamacpp import LlamaCpp

    llm = LlamaCpp(small_reader, model_id=SMALL_READER, n_ctx=4096, threads=THREADS)
    files, users = world
    store = _load(files)
    config = R.RecommendConfig(transactions=3, summaries=2, max_tokens=250)
    result = R.recommend(store, llm, user=users[0], as_of=AS_OF, config=config)
    assert len(result.reads) == 3 and all(r.tokens_in > 100 for r in result.reads)
    assert result.read.tokens_in / result.read.attempts < 4096  # cut to fit, repairs too
    for stage in result.stages:  # the grammar cannot spell an IRI it was not offered
        assert stage.selection is not None and stage.selection.invalid == []
    if result.ok:
        for pick in result.output.recommendations:  # type: ignore[union-attr]
            assert pick.asset in result.offered_assets
            assert set(pick.evidence) <= set(result.offered_nodes)
        assert result.recommendation is not None
    else:
        assert _count(store, FKG.Recommendation) == 0


def test_a_personal_context_past_the_window_is_halved_until_the_market_prompt_fits(
    world: tuple[Path, list[str]],
) -> None:
    """Regression: SmolLM2's 4,096-token window overflowed on the market selection."""
    from finkg.reader.llm import ContextOverflow

    files, users = world
    store = _load(files)

    def small_window(messages) -> str:  # type: ignore[no-untyped-def]
        user = messages[1]["content"]
        if "Candidates (" in user and len(NODE_ID.findall(user)) > 1:
            raise ContextOverflow("scripted: Requested tokens (5000) exceed context window")
        return _respond(messages)

    llm = ScriptedLLM(respond=small_window)
    result = R.recommend(store, llm, user=users[0], as_of=AS_OF)
    assert result.ok
    personal = result.stages[0]
    assert len(personal.nodes) > 1  # the stage keeps its subgraph; only the context was cut
    tried = [c[1]["content"] for c in llm.calls if "Candidates (" in c[1]["content"]][1:]
    assert [len(NODE_ID.findall(p)) for p in tried] == [3, 1]  # all, then the newest half


def test_chance_is_the_expected_hits_of_three_random_offered_assets() -> None:
    bought_a = hits.Outcome(purchased=frozenset({"a"}), profitable=frozenset({"a", "b"}))
    found = hits.chance_at_3([(["a", "b", "c", "d"], bought_a)])
    # 1 - C(3,3)/C(4,3) for one relevant asset of four; two relevant leave no miss
    assert (found.pref, found.prof, found.comb, found.n) == (0.75, 1.0, 0.75, 1)
    assert hits.chance_at_3([]).n == 0


def test_a_batch_of_customers_is_read_together_and_written_in_order(
    world: tuple[Path, list[str]],
) -> None:
    """`recommend_many` (issue 29): what one-at-a-time calls write, read together."""

    class Together(ScriptedLLM):
        concurrency = 3

    files, users = world
    alone, together = _load(files), _load(files)
    one = [R.recommend(alone, _reader(), user=u, as_of=AS_OF) for u in users]
    many = R.recommend_many(together, Together(respond=_respond), users=users, as_of=AS_OF)
    assert [r.recommendation for r in many] == [r.recommendation for r in one]
    assert [r.assets for r in many] == [r.assets for r in one]
    clock = {"startedAtTime", "endedAtTime", "readerSeconds"}

    def outputs(store: BaseStore) -> set:  # type: ignore[type-arg]
        return {
            q
            for q in store.quads(store.graphs.outputs)
            if q.predicate.value.rsplit("#", 1)[-1] not in clock
        }

    assert outputs(together) == outputs(alone)
    assert _count(together, FKG.Recommendation) == len(users)
