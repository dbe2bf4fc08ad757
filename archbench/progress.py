"""Live progress: one line per target with its stage, latest output and elapsed time.

On a terminal this is a rich live display; elsewhere (CI, pipes) each stage
change is printed as one plain line, and build output stays in the logs.
"""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn


class Reporter(Protocol):
    """What the pipeline tells whoever watches it."""

    def stage(self, target: str, stage: str) -> None:
        """``target`` entered ``stage`` (base, preflight, image, run, store)."""

    def line(self, target: str, text: str) -> None:
        """A line of build or bootstrap output for ``target``."""

    def finish(self, target: str, ok: bool, message: str) -> None:
        """``target`` is done; ``message`` says where its result or error is."""

    def expect(self, target: str, seconds: float | None, where: str) -> None:
        """Announce ``target`` (on host ``where``) and how long it took last time, in s."""


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "no ETA"
    minutes, secs = divmod(round(seconds), 60)
    return f"ETA {minutes}m{secs:02d}s" if minutes else f"ETA {secs}s"


class RichReporter:
    """A :class:`Reporter` on a rich console; a context manager around the display."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.live = self.console.is_terminal
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[target]:<18}"),
            TextColumn("{task.fields[stage]:<10}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]:<10}"),
            TextColumn("[dim]{task.fields[detail]}", markup=False),
            console=self.console,
            disable=not self.live,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, float] = {}

    def __enter__(self) -> RichReporter:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def _task(self, target: str) -> TaskID:
        if target not in self.tasks:
            self.tasks[target] = self.progress.add_task(
                target, total=None, target=target, stage="", detail="", eta=""
            )
            self.started[target] = time.monotonic()
        return self.tasks[target]

    def expect(self, target: str, seconds: float | None, where: str) -> None:
        self.progress.update(self._task(target), eta=_eta(seconds))
        if not self.live:
            how = " (from its last run)" if seconds is not None else " (no earlier run)"
            self.console.print(f"{target}: on {where}, {_eta(seconds)}{how}", soft_wrap=True)

    def stage(self, target: str, stage: str) -> None:
        self.progress.update(self._task(target), stage=stage, detail="")
        if not self.live:
            elapsed = time.monotonic() - self.started[target]
            self.console.print(f"[{elapsed:7.1f}s] {target}: {stage}")

    def line(self, target: str, text: str) -> None:
        width = max(20, self.console.width - 50)
        self.progress.update(self._task(target), detail=text.strip()[:width])

    def finish(self, target: str, ok: bool, message: str) -> None:
        task = self._task(target)
        self.progress.update(
            task, stage="done" if ok else "FAILED", detail="", total=1, completed=1
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
