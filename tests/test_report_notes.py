"""A benchmark report ends with what a person wrote about its run (`NAME.notes.md`, which
`benchmarks.harness.notes` appends when the report is written). A reading added to the
report alone is lost the next time the report is written; one added to the notes alone is
missing from the report until then. Both happened (`scale.md`, `scale_recall.md`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.harness import notes, write_report

REPORT_WRITE = re.compile(r"(report|\.md\"\))\S*\.write_text\(")  # a Markdown report written bare
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


def test_a_report_written_again_keeps_its_notes(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "example.md"
    write_report(report, "# Example\n\n| a |\n|---|\n| 1 |\n\n")
    assert report.read_text() == "# Example\n\n| a |\n|---|\n| 1 |\n"
    report.with_suffix(".notes.md").write_text("## Reading it\n\nOne.\n")
    write_report(report, "# Example\n\n| a |\n|---|\n| 2 |\n")
    assert report.read_text() == "# Example\n\n| a |\n|---|\n| 2 |\n\n## Reading it\n\nOne.\n"


def test_every_benchmark_writes_its_markdown_through_write_report() -> None:
    """A report written with a bare `write_text` would drop its notes on the next run."""
    root = Path(__file__).resolve().parents[1] / "benchmarks"
    bare = [
        f"{path.name}:{n}"
        for path in sorted(root.glob("*.py"))
        if path.name != "harness.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if REPORT_WRITE.search(line) and "json" not in line
    ]
    assert bare == [], f"write these through benchmarks.harness.write_report: {bare}"
