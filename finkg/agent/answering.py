"""`ask` for agents: the QA job (papers 002 + 003) over the graphs a server shows, writing
nothing.

A question the statement facts answer is computed from them (a tenth of a second, no
model). Any other needs the reader: it is opened on the first such question (the indexes
and the model, tens of seconds) and kept; a server started without one (`finkg mcp`
without `--reader`) refuses those questions, saying what the facts route made of the
question and how to start it with a reader. Answers run one at a time.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from finkg.agent.calls import instant
from finkg.agent.models import AskResult, Citation
from finkg.errors import InputError
from finkg.kg.scoped import ScopedStore, without_users
from finkg.kg.store import BaseStore, open_store

if TYPE_CHECKING:
    from finkg.agent.calls import Scope
    from finkg.tasks.qa.ask import QA
    from finkg.tasks.qa.types import Asked


class Answerer:
    """The `ask` tool's state: the store (opened on first use) and the reader's QA."""

    def __init__(self, scope: Scope, reader: str | None) -> None:
        self.scope, self.reader = scope, reader
        self._store: BaseStore | None = None
        self._qa: QA | None = None
        self._lock = threading.Lock()

    def _scoped(self) -> ScopedStore:
        if self._store is None:
            self._store = open_store(
                self.scope.location, settings=self.scope.settings, read_only=True
            )
        return without_users(self._store, self.scope.user)

    def ask(self, question: str, *, as_of: str, company: str | None) -> AskResult:
        from finkg.tasks.qa.ask import QA
        from finkg.tasks.qa.facts_route import route
        from finkg.tasks.qa.setup import open_qa, resolve_company

        if not question.strip():
            raise InputError("the question is empty", field="question")
        at = instant(as_of, "as_of")
        with self._lock:
            store = self._scoped()
            node = resolve_company(store, company)
            facts_only = QA.facts_only(store)
            asked = facts_only.answer_from_facts(question, as_of=at, company=node, write=False)
            if asked is None:
                if self.reader is None:
                    why = route(store, question, as_of=at, company=node, documents=()).note
                    raise InputError(
                        "this question needs the reader, and this server has none"
                        + (f" (statement facts: {why})" if why else ""),
                        field="question",
                        value=question,
                        hint="start the server with a reader (`finkg mcp --reader NAME`, a "
                        "packaged model or a .gguf file), or ask for a line item or metric "
                        "finkg computes from statement facts",
                    )
                if self._qa is None:
                    settings = self.scope.settings.with_(reader=self.reader)
                    self._qa = open_qa(store, settings)
                asked = self._qa.ask(question, as_of=at, company=node, write=False)
        return result(asked)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def result(asked: Asked) -> AskResult:
    """The `ask` tool's result from the QA job's answer."""
    explanation = [i.text for i in asked.output.insights] if asked.output else []
    return AskResult(
        question=asked.question,
        as_of=asked.as_of.isoformat(),
        answer=asked.summary,
        status=asked.status,
        scores={k: round(v, 4) for k, v in asked.scores.items()},
        how="facts" if asked.facts is not None else "reader",
        explanation=explanation,
        note=asked.note,
        routes=[{"question": p.question.text, "route": p.route} for p in asked.parts],
        citations=[Citation(id=b.id, node=b.node.value) for b in asked.blocks],
        seconds={k: round(v, 3) for k, v in asked.seconds.items()},
    )


__all__ = ["Answerer", "result"]
