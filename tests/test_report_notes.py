"""A benchmark report ends with what a person wrote about its run (`NAME.notes.md`, which
`benchmarks.harness.notes` appends when the report is written). A reading added to the
report alone is lost the next time the report is written; one added to the notes alone is
missing from the report until then. Both happened (`scale.md`, `scale_recall.md`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.harness import notes

REPORTS = Path(__file__).resolve().parents[1] / "benchmarks" / "reports"
NOTED = sorted(
    p.with_name(p.name.removesuffix(".notes.md") + ".md") for p in REPORTS.glob("*.notes.md")
)


def test_there_are_noted_reports() -> None:
    assert len(NOTED) >= 3


@pytest.mark.parametrize("report", NOTED, ids=lambda p: p.stem)
def test_a_report_ends_with_its_notes(report: Path) -> None:
    assert report.is_file(), f"{report.name}.notes.md has no report beside it"
    ending = "\n".join(notes(report)).rstrip("\n")
    assert report.read_text().rstrip("\n").endswith(ending), (
        f"{report.name} does not end with {report.stem}.notes.md: copy the reading into both"
    )
