"""Live progress: one line per target with its stage, latest output and elapsed time.

On a terminal this is a rich live display; elsewhere (CI, pipes) each stage
change is printed as one plain line, and build output stays in the logs.
"""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text


class Reporter(Protocol):
    """What the pipeline tells whoever watches it."""

    def stage(self, target: str, stage: str) -> None:
        """``target`` entered ``stage`` (base, preflight, image, run, store)."""

    def line(self, target: str, text: str) -> None:
        """A line of build or bootstrap output for ``target``."""

    def finish(self, target: str, ok: bool, message: str) -> None:
        """``target`` is done; ``message`` says where its result or error is."""

    def expect(self, target: str, seconds: float | None, where: str) -> None:
        """Announce ``target`` (on host ``where``) and its run's expected time in s (or None)."""

    def progress(self, target: str, text: str, seconds: float | None, step: str) -> None:
        """``target`` is at ``text`` (a suite's k of n, a build stage); ``seconds`` left in the
        current stage (None: unknown). ``step`` changes when a new step starts (plain
        output prints one line per step, not per update)."""


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "no ETA"
    minutes, secs = divmod(round(seconds), 60)
    return f"ETA {minutes}m{secs:02d}s" if minutes else f"ETA {secs}s"


class _EtaColumn(ProgressColumn):
    """Counts down to the task's ``deadline`` (monotonic s); else shows its ``eta`` text."""

    def render(self, task: Task) -> Text:
        deadline = task.fields.get("deadline")
        if deadline is None:
            return Text(f"{task.fields.get('eta', ''):<10}")
        left = deadline - time.monotonic()
        return Text(f"{_eta(left) if left >= 0 else 'ETA passed':<10}")


class RichReporter:
    """A :class:`Reporter` on a rich console; a context manager around the display."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.live = self.console.is_terminal
        self.display = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[target]:<18}"),
            TextColumn("{task.fields[stage]:<10}"),
            TimeElapsedColumn(),
            _EtaColumn(),
            TextColumn("[dim]{task.fields[detail]}", markup=False),
            console=self.console,
            disable=not self.live,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, float] = {}
        self.steps: dict[str, str] = {}

    def __enter__(self) -> RichReporter:
        self.display.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.display.stop()

    def _task(self, target: str) -> TaskID:
        if target not in self.tasks:
            self.tasks[target] = self.display.add_task(
                target, total=None, target=target, stage="", detail="", eta="", deadline=None
            )
            self.started[target] = time.monotonic()
        return self.tasks[target]

    def expect(self, target: str, seconds: float | None, where: str) -> None:
        self.display.update(self._task(target), eta=_eta(seconds))
        if not self.live:
            how = (
                " for the run, from the last run of the same suites and settings"
                if seconds is not None
                else " for the run (no earlier run of the same suites and settings)"
            )
            self.console.print(f"{target}: on {where}, {_eta(seconds)}{how}", soft_wrap=True)

    def progress(self, target: str, text: str, seconds: float | None, step: str) -> None:
        deadline = None if seconds is None else time.monotonic() + seconds
        task = self._task(target)
        self.display.update(task, deadline=deadline, eta=_eta(seconds))
        if text:
            self.display.update(task, detail=text)
        if not self.live and text and self.steps.get(target) != step:
            self.steps[target] = step
            elapsed = time.monotonic() - self.started[target]
            self.console.print(
                f"[{elapsed:7.1f}s] {target}: {text} ({_eta(seconds)})",
                markup=False,
                soft_wrap=True,
            )

    def stage(self, target: str, stage: str) -> None:
        self.display.update(self._task(target), stage=stage, detail="", deadline=None, eta="")
        if not self.live:
            elapsed = time.monotonic() - self.started[target]
            self.console.print(f"[{elapsed:7.1f}s] {target}: {stage}")

    def line(self, target: str, text: str) -> None:
        width = max(20, self.console.width - 50)
        self.display.update(self._task(target), detail=text.strip()[:width])

    def finish(self, target: str, ok: bool, message: str) -> None:
        task = self._task(target)
        self.display.update(
            task,
            stage="done" if ok else "FAILED",
            detail="",
            total=1,
            completed=1,
            deadline=None,
            eta="",
        )
        elapsed = time.monotonic() - self.started[target]
        mark = "ok" if ok else "FAILED"
        self.console.print(
            f"[{elapsed:7.1f}s] {target}: {mark}: {message}", markup=False, soft_wrap=True
        )


class SilentReporter:
    """A :class:`Reporter` that records stages and says nothing (tests, libraries)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def stage(self, target: str, stage: str) -> None:
        self.events.append((target, "stage", stage))

    def line(self, target: str, text: str) -> None:
        pass

    def finish(self, target: str, ok: bool, message: str) -> None:
        self.events.append((target, "ok" if ok else "failed", message))

    def expect(self, target: str, seconds: float | None, where: str) -> None:
        self.events.append((target, "expect", where))

    def progress(self, target: str, text: str, seconds: float | None, step: str) -> None:
        pass
