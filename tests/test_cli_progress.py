"""Progress where no bar can be drawn: plain lines in a log, only for work that takes time."""

from __future__ import annotations

import io

from rich.console import Console

from finkg.cli.progress import LoggedProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def logged(every: float, *, terminal: bool = False) -> tuple[LoggedProgress, io.StringIO, Clock]:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=terminal, width=100)
    clock = Clock()
    bar = LoggedProgress(console=console, every=every, get_time=clock, transient=True)
    return bar, sink, clock


def test_a_log_gets_a_line_every_period_and_one_at_the_end() -> None:
    bar, sink, clock = logged(30)
    with bar:
        task = bar.add_task("training steps", total=8)
        clock.now = 10
        bar.update(task, completed=1)
        assert sink.getvalue().strip() == ""  # quick so far: nothing
        clock.now = 31
        bar.update(task, completed=2)
        clock.now = 40
        bar.update(task, completed=3)  # inside the period: no line
        clock.now = 62
        bar.advance(task)
        bar.update(task, completed=4)  # the count did not move: no second line
        clock.now = 70
        bar.update(task, completed=8)  # finished: a line at once
    lines = sink.getvalue().split("\n")
    said = [line for line in lines if line.strip()]
    assert said == [
        "training steps: 2/8 (31 s)",
        "training steps: 4/8 (62 s)",
        "training steps: 8/8 (70 s)",
    ]


def test_quick_work_and_unknown_totals() -> None:
    bar, sink, clock = logged(30)
    with bar:
        quick = bar.add_task("checking the question", total=None)
        clock.now = 5
        bar.update(quick, completed=1)
    assert sink.getvalue().strip() == ""
    bar, sink, clock = logged(0)
    with bar:
        rows = bar.add_task("ingest news", total=None)
        bar.update(rows, advance=500)
    assert [line for line in sink.getvalue().split("\n") if line.strip()] == [
        "ingest news: 0 (0 s)",
        "ingest news: 500 (0 s)",
    ]


def test_a_terminal_gets_the_bar_not_the_lines() -> None:
    bar, sink, clock = logged(0, terminal=True)
    with bar:
        task = bar.add_task("training steps", total=8)
        clock.now = 60
        bar.update(task, completed=8)
    assert "training steps: 8/8 (" not in sink.getvalue()
