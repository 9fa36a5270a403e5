"""`finkg bank`: the memory bank of paper 002 §3.2 on the CLI.

`finkg bank add FILE.jsonl` stores expert-verified answers, one JSON object per line:

    {"company": "ACME", "question": "What was the total revenue?", "period": "FY2020",
     "answer": "$274.5 billion", "available_at": "2020-10-30T16:30:00-04:00",
     "evidence": ["https://w3id.org/finkg/id/chunk/..."]}

(`company` a ticker the store holds; `available_at` zoned, when the answer became knowable,
never before its evidence). The whole file is checked first: a bad line stops it with the
line number and field, and nothing is written. `finkg bank list` prints the entries as of an
instant. `finkg ask` answers from them when a question matches one.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click

from finkg.cli_support import _open, out, parse_instant, store_option
from finkg.errors import InputError


@click.group("bank")
def bank() -> None:
    """The memory bank: verified answers to canonical questions, per company and period."""


@bank.command("add")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@store_option
@click.pass_context
def add(ctx: click.Context, path: Path, store: str | None) -> None:
    """Store the verified entries of a JSON Lines file (see `finkg bank --help`)."""
    from finkg.retrieval.bank import BankEntry, add_entries
    from finkg.tasks.qa.setup import resolve_company

    with _open(ctx, store) as s:
        entries = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise InputError("each line is a JSON object", field="line", value=line[:60])
                missing = [
                    k
                    for k in ("company", "question", "period", "answer", "available_at", "evidence")
                    if k not in row
                ]
                if missing:
                    raise InputError("missing field", field=missing[0])
                company = resolve_company(s, str(row["company"]))
                assert company is not None
                available = dt.datetime.fromisoformat(str(row["available_at"]))
                entries.append(
                    BankEntry(
                        company=company.value,
                        question=str(row["question"]),
                        period=str(row["period"]),
                        answer=str(row["answer"]),
                        available_at=available,
                        evidence=tuple(row["evidence"]),
                    )
                )
            except json.JSONDecodeError as e:
                raise InputError(f"not JSON: {e.msg}", source=path, line=number) from None
            except InputError as e:
                raise InputError(
                    e.message,
                    source=path,
                    line=number,
                    field=e.field,
                    value=e.value,
                    hint=e.hint,
                ) from None
            except (ValueError, TypeError) as e:  # a date fromisoformat cannot read
                raise InputError(str(e), source=path, line=number) from None
        added = add_entries(s, entries)
    out.print(f"memory bank: {len(entries)} entries read, {added} added", highlight=False)


@bank.command("list")
@click.option("--company", help="Only this company's entries (its ticker).")
@click.option("--as-of", "as_of", help="Only entries knowable before this date or instant.")
@click.option("--tz", default="America/New_York", show_default=True, help="Zone of a date alone.")
@store_option
@click.pass_context
def list_entries(
    ctx: click.Context, company: str | None, as_of: str | None, tz: str, store: str | None
) -> None:
    """Print the bank's entries, latest answer per question and period last."""
    from finkg.retrieval.bank import entries
    from finkg.tasks.qa.setup import resolve_company

    before = parse_instant(as_of, tz, field="--as-of") if as_of else None
    with _open(ctx, store, read_only=True) as s:
        found = entries(s, company=resolve_company(s, company), before=before)
    for e in found:
        out.print(
            f"{e.period}  {e.question}  {e.answer}  (available {e.available_at.isoformat()}, "
            f"{len(e.evidence)} evidence)",
            highlight=False,
        )
    out.print(f"{len(found)} entries", highlight=False)
