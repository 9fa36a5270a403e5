"""What every benchmark shares: where the repository, the real data and the reports are, the
options each one takes in the same words (`--data`, `--report`, `--bootstrap`, `--threads`),
and how an interval is written in a report.

Each benchmark still builds its own parser (its options are its interface), adding the shared
ones through these functions so a data folder or a report path means the same everywhere:

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> data_option(parser); report_option(parser, "example.md"); bootstrap_option(parser)
>>> args = parser.parse_args(["--bootstrap", "200"])
>>> args.data == DATA, args.report.name, args.bootstrap
(True, 'example.md', 200)
>>> ci(Interval(0.3114, 0.295, 0.3271, 2002))
'0.311 [0.295, 0.327]'
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from finkg.evaluation.stats import Interval

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"  # ../shared/data: the real data's layout
REPORTS = ROOT / "benchmarks" / "reports"


def notes(report: Path) -> list[str]:
    """What a person wrote about a report's run (`NAME.notes.md` beside it), as lines to end
    the report with, after a blank one; none where there is no such file. A report that is
    written again keeps them."""
    path = Path(report).with_suffix(".notes.md")
    return ["", path.read_text().rstrip("\n")] if path.exists() else []


def write_report(report: Path, text: str) -> None:
    """Write a report's Markdown `text`, ending with its notes (`notes`), into a folder made
    if need be: every benchmark writes its report through here, so a reading kept in
    `NAME.notes.md` survives the next run."""
    report = Path(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join([text.rstrip("\n"), *notes(report)]) + "\n", encoding="utf-8")


def data_option(parser: argparse.ArgumentParser, default: Path = DATA) -> None:
    parser.add_argument(
        "--data",
        type=Path,
        default=default,
        help=f"a folder laid out like ../shared/data [default: {default}]",
    )


def report_option(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument(
        "--report",
        type=Path,
        default=REPORTS / name,
        help=f"where the report goes [default: benchmarks/reports/{name}]",
    )


def bootstrap_option(parser: argparse.ArgumentParser, default: int = 1000) -> None:
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=default,
        help=f"bootstrap resamples of each 95 %% interval [default: {default}]",
    )


def threads_option(parser: argparse.ArgumentParser, default: int | None = 2) -> None:
    parser.add_argument(
        "--threads",
        type=int,
        default=default,
        help=f"reader and embedder threads [default: {default or 'the free cores'}]",
    )


def ci(interval: Interval, digits: int = 3) -> str:
    """An estimate with its interval, as every report writes it ("n/a" for none)."""
    if math.isnan(interval.value):
        return "n/a"
    return f"{interval.value:.{digits}f} [{interval.low:.{digits}f}, {interval.high:.{digits}f}]"
