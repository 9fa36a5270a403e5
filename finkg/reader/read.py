"""Calling a reader: fixed prompt templates, an exact output cache, schema validation with
repair, and citation checks.

- Templates are files in `reader/prompts/` with `## system` / `## user` sections and
  `$placeholders`; a template's SHA-256 is part of every run's record.
- Decoding is greedy and the reader is frozen, so the same model given the same messages
  and schema answers the same: replies are cached by (model, prompt hash, the backend's
  `decoding` version where it has one), and a hit is the answer, not an approximation.
- A reply that does not validate against the pydantic model is sent back with the error
  for at most two repairs; `json_valid` records whether it finally did.
- Cited ids are checked against the ids the prompt gave; the others are dropped and
  counted, never passed on.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import string
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from finkg.errors import InputError
from finkg.reader.llm import LLM, ContextOverflow, Generation, Message, messages_hash
from finkg.reader.schemas import (
    Answer,
    EntitySelection,
    ImpactPrediction,
    Recommendation,
)
from finkg.reader.transport.concurrent import concurrency_of, map_ordered

MAX_REPAIRS = 2


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str
    sha256: str

    def render(self, values: Mapping[str, object]) -> list[Message]:
        try:
            return [
                {"role": "system", "content": string.Template(self.system).substitute(values)},
                {"role": "user", "content": string.Template(self.user).substitute(values)},
            ]
        except KeyError as e:
            raise InputError(
                f"prompt {self.name} needs a value for ${e.args[0]}",
                field="prompt",
                value=sorted(values),
            ) from None


@cache
def prompt(name: str) -> Prompt:
    """A packaged template by name (`impact`, `relevance`, ...)."""
    path = Path(str(resources.files("finkg.reader") / "prompts" / f"{name}.txt"))
    if not path.exists():
        raise InputError("no such prompt template", field="prompt", value=name)
    text = path.read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# "))
    try:
        _, rest = body.split("## system\n", 1)
        system, user = rest.split("## user\n", 1)
    except ValueError:
        raise InputError("a template has '## system' then '## user'", source=path) from None
    return Prompt(
        name, system.strip(), user.strip(), hashlib.sha256(text.encode("utf-8")).hexdigest()
    )


class OutputCache:
    """Replies by (model, prompt hash), in SQLite under the cache directory."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies (model TEXT, prompt TEXT, text TEXT, "
                "tokens_in INTEGER, tokens_out INTEGER, seconds REAL, PRIMARY KEY (model, prompt))"
            )

    def get(self, model: str, key: str) -> Generation | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, tokens_in, tokens_out, seconds FROM replies "
                "WHERE model = ? AND prompt = ?",
                (model, key),
            ).fetchone()
        return None if row is None else Generation(row[0], model, row[1], row[2], row[3], True)

    def put(self, key: str, g: Generation) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)",
                (g.model, key, g.text, g.tokens_in, g.tokens_out, g.seconds),
            )
            self._db.commit()


@dataclass
class ReadResult:
    output: BaseModel | None
    json_valid: bool
    attempts: int
    prompt: str  # template name
    prompt_sha256: str  # the template's hash
    prompt_hash: str  # the rendered messages' hash (the cache key)
    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    cached: bool = False
    cited: list[str] = field(default_factory=list)
    invalid_citations: list[str] = field(default_factory=list)
    error: str | None = None


def _generate(
    llm: LLM,
    messages: list[Message],
    schema: dict[str, Any],
    cache: OutputCache | None,
    max_tokens: int,
) -> Generation:
    key = messages_hash(messages, schema)
    if decoding := getattr(llm, "decoding", ""):  # a backend's decoder version: its replies
        key = f"{key}/{decoding}"
    if cache is not None and (hit := cache.get(llm.model_id, key)) is not None:
        return hit
    g = llm.generate(messages, schema, max_tokens=max_tokens)
    if cache is not None:
        cache.put(key, g)
    return g


@dataclass(frozen=True)
class OptionScores:
    """A class decision's raw material: the log-probability of each option as the whole
    reply (`LLM.score`), with what the read cost."""

    logprobs: dict[str, float]
    prompt_hash: str  # the messages' and options' hash (the cache key without the backend)
    tokens_in: int
    seconds: float
    cached: bool

    def probabilities(self) -> dict[str, float]:
        """The options' probabilities among themselves (a softmax of the log-probabilities)."""
        top = max(self.logprobs.values())
        weights = {k: math.exp(v - top) for k, v in self.logprobs.items()}
        total = sum(weights.values())
        return {k: w / total for k, w in weights.items()}


def score_options(
    llm: LLM,
    messages: list[Message],
    options: list[str],
    *,
    cache: OutputCache | None = None,
) -> OptionScores:
    """`llm.score(messages, options)`, cached like replies: by the model, the exact
    messages and options, and the backend's scoring version (`scoring`) where it has one.
    A hit is the answer a read would give, and is marked `cached` (never counted as a read)."""
    digest = messages_hash(messages, {"options": list(options)})
    key = f"{digest}/score"
    if scoring := getattr(llm, "scoring", ""):
        key = f"{key}/{scoring}"
    if cache is not None and (hit := cache.get(llm.model_id, key)) is not None:
        return OptionScores(json.loads(hit.text), digest, hit.tokens_in, hit.seconds, True)
    started = time.perf_counter()
    logprobs = llm.score(messages, options)
    seconds = time.perf_counter() - started
    counter = getattr(llm, "count_tokens", None)
    tokens = int(counter(messages)) if callable(counter) else 0
    if cache is not None:
        text = json.dumps(logprobs, sort_keys=True)
        cache.put(key, Generation(text, llm.model_id, tokens, 0, seconds))
    return OptionScores(dict(logprobs), digest, tokens, seconds, False)


def score_many(
    llm: LLM,
    requests: list[tuple[list[Message], list[str]]],
    *,
    cache: OutputCache | None = None,
) -> list[OptionScores]:
    """`score_options` for several prompts read together: a backend with `score_many`
    (the local reader) scores them in one batch after their shared opening, any other one
    prompt by prompt, up to its `concurrency` at once. Cached as one entry (the scores of a
    batch depend on its members' shared opening), so a hit is exactly what the read gave;
    the read's seconds are split evenly over the results, its prompt tokens (the first
    prompt's) go to the first."""
    digests = [messages_hash(m, {"options": list(o)}) for m, o in requests]
    key = hashlib.sha256("/".join(digests).encode()).hexdigest() + "/many"
    if scoring := getattr(llm, "scoring", ""):
        key = f"{key}/{scoring}"
    if cache is not None and (hit := cache.get(llm.model_id, key)) is not None:
        share = hit.seconds / max(len(requests), 1)
        return [
            OptionScores(scores, d, hit.tokens_in if i == 0 else 0, share, True)
            for i, (scores, d) in enumerate(zip(json.loads(hit.text), digests, strict=True))
        ]
    started = time.perf_counter()
    batch = getattr(llm, "score_many", None)
    if callable(batch):
        found = batch(requests)
    else:  # one request a prompt, up to the reader's concurrency at once
        found = map_ordered(lambda r: llm.score(*r), requests, concurrency=concurrency_of(llm))
    seconds = time.perf_counter() - started
    counter = getattr(llm, "count_tokens", None)
    tokens = int(counter(requests[0][0])) if callable(counter) and requests else 0
    if cache is not None:
        text = json.dumps([dict(sorted(f.items())) for f in found])
        cache.put(key, Generation(text, llm.model_id, tokens, 0, seconds))
    share = seconds / max(len(requests), 1)
    return [
        OptionScores(dict(f), d, tokens if i == 0 else 0, share, False)
        for i, (f, d) in enumerate(zip(found, digests, strict=True))
    ]


CITATION_FIELDS = frozenset({"ids", "citations", "citation", "evidence", "selected"})


def narrow_schema(schema: Mapping[str, Any], allowed: Collection[str]) -> dict[str, Any]:
    """`schema` with every citation field limited to the `allowed` ids, so that a
    grammar-constrained reader cannot even spell an id it was not given, and citation
    lists to at most as many entries as there are ids."""
    choices = sorted(allowed)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items()}
            for name, prop in out.get("properties", {}).items():
                if name not in CITATION_FIELDS or not isinstance(prop, dict):
                    continue
                if prop.get("type") == "array":
                    # bounded too: a looping model would otherwise cite one id forever; with
                    # no ids the list is empty and its item rule a placeholder (an empty
                    # enum is no grammar: llama.cpp crashed on it)
                    prop["items"] = {"type": "string", "enum": choices or [""]}
                    prop["maxItems"] = min(len(choices), prop.get("maxItems", len(choices)))
                elif prop.get("type") == "string":
                    prop["enum"] = choices or [""]
            return out
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    return walk(dict(schema))


def read(
    llm: LLM,
    template: Prompt,
    values: Mapping[str, object],
    model: type[BaseModel],
    *,
    allowed_ids: Collection[str] | None = None,
    cache: OutputCache | None = None,
    max_tokens: int = 768,
) -> ReadResult:
    """Render, generate, validate (repairing at most twice), check citations."""
    messages = template.render(values)
    schema = model.model_json_schema()
    if allowed_ids is not None:
        schema = narrow_schema(schema, allowed_ids)
    result = ReadResult(
        None,
        False,
        0,
        template.name,
        template.sha256,
        messages_hash(messages, schema),
        llm.model_id,
    )
    for attempt in range(1 + MAX_REPAIRS):
        try:
            g = _generate(llm, messages, schema, cache, max_tokens)
        except ContextOverflow as e:
            if attempt == 0:
                raise  # the caller built a prompt too long for this reader
            # a repair carries the failed reply and the complaint: past the window it ends
            # the read as failed, like a reply that never matched
            result.error = f"{result.error}; the repair does not fit the context window ({e})"
            break
        result.attempts = attempt + 1
        result.tokens_in += g.tokens_in
        result.tokens_out += g.tokens_out
        result.seconds += g.seconds
        result.cached = g.cached if attempt == 0 else result.cached and g.cached
        try:
            output = model.model_validate_json(g.text)
        except ValidationError as e:
            result.error = _short_error(e)
            messages = [
                *messages,
                {"role": "assistant", "content": g.text},
                {
                    "role": "user",
                    "content": "That reply does not match the required "
                    f"JSON schema: {result.error}. Reply again with only the corrected JSON.",
                },
            ]
            continue
        result.output, result.json_valid, result.error = output, True, None
        break
    if result.output is not None and allowed_ids is not None:
        result.output, result.cited, result.invalid_citations = check_citations(
            result.output, set(allowed_ids)
        )
    return result


def _short_error(e: ValidationError) -> str:
    parts = [
        f"{'.'.join(str(x) for x in err['loc']) or 'reply'}: {err['msg']}" for err in e.errors()[:5]
    ]
    return "; ".join(parts)


def check_citations(output: BaseModel, allowed: set[str]) -> tuple[BaseModel, list[str], list[str]]:
    """The output with citations outside `allowed` removed; (output, kept, dropped)."""
    kept: list[str] = []
    dropped: list[str] = []

    def keep(ids: list[str]) -> list[str]:
        good = [i for i in ids if i in allowed]
        kept.extend(good)
        dropped.extend(i for i in ids if i not in allowed)
        return list(dict.fromkeys(good))

    data = output.model_dump(by_alias=True)
    if isinstance(output, ImpactPrediction):
        for signal in data["signals"].values():
            signal["ids"] = keep(signal["ids"])
    elif isinstance(output, Answer):
        data["citations"] = keep(data["citations"])
        for item in (*data["insights"], *data["signals"]):
            item["citations"] = keep(item["citations"])
        for number in data["numbers"]:
            number["citation"] = (keep([number["citation"]]) or [""])[0]
    elif isinstance(output, Recommendation):
        for rec in data["recommendations"]:
            rec["evidence"] = keep(rec["evidence"])
    elif isinstance(output, EntitySelection):
        data["selected"] = keep(data["selected"])
    return type(output).model_validate(data), list(dict.fromkeys(kept)), dropped


def dumps(output: BaseModel) -> str:
    return json.dumps(output.model_dump(by_alias=True), ensure_ascii=False, sort_keys=True)
