"""Progress on long work: a bar on a terminal, plain lines in a log.

rich draws its bar only on a terminal. Written to a file or a pipe (a CI log, `nohup`,
`2> log`), a transient bar prints nothing at all, and forty minutes of training look hung.
`LoggedProgress` keeps the bar on a terminal. Elsewhere a task that has run for `every`
seconds writes a line, then at most one line every `every` seconds while it moves and one when
it finishes; quick work writes nothing.
"""

from __future__ import annotations

from typing import Any

from rich.progress import Progress, TaskID

EVERY_SECONDS = 30.0


class LoggedProgress(Progress):
    """A rich `Progress` that also reports in plain lines where it cannot draw (docstring)."""

    def __init__(self, *columns: Any, every: float = EVERY_SECONDS, **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        self.every = every
        self._said: dict[TaskID, tuple[float, float]] = {}  # time and count of the last line

    def add_task(
        self,
        description: str,
        start: bool = True,
        total: float | None = 100.0,
        completed: int = 0,
        visible: bool = True,
        **fields: Any,
    ) -> TaskID:
        task_id = super().add_task(description, start, total, completed, visible, **fields)
        self._say(task_id)
        return task_id

    def update(
        self,
        task_id: TaskID,
        *,
        total: float | None = None,
        completed: float | None = None,
        advance: float | None = None,
        description: str | None = None,
        visible: bool | None = None,
        refresh: bool = False,
        **fields: Any,
    ) -> None:
        super().update(
            task_id,
            total=total,
            completed=completed,
            advance=advance,
            description=description,
            visible=visible,
            refresh=refresh,
            **fields,
        )
        self._say(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._say(task_id)

    def _say(self, task_id: TaskID) -> None:
        if self.console.is_terminal or self.disable:
            return
        task = self._tasks[task_id]
        now = self.get_time()
        last = self._said.get(task_id)
        finished = task.total is not None and task.completed >= task.total
        if last is None:
            if (task.elapsed or 0) < self.every:  # quick work says nothing
                return
        elif task.completed == last[1] or (not finished and now - last[0] < self.every):
            return
        self._said[task_id] = (now, task.completed)
        count = f"{task.completed:g}" + (f"/{task.total:g}" if task.total is not None else "")
        self.console.print(f"{task.description}: {count} ({task.elapsed or 0:.0f} s)")
