"""Live progress and its ETAs: reporters, the harness's progress lines, stored durations.

The pipeline tells a :class:`Reporter` what each target does. On a terminal
:class:`RichReporter` is a rich live display, one line per target with its stage,
latest output, elapsed time and ETA; elsewhere (CI, pipes) each stage change is
printed as one plain line, build output stays in the logs, and a stage quiet for
15 s gets a line saying what it does (:class:`Heartbeat`: downloading, unpacking or
configuring k of n packages, under QEMU or not, read by :class:`BuildTracker`) and its
ETA.
:class:`SilentReporter` records stages for tests.

The harness writes on stderr, as each step starts (``harness/abh/suites/common.py``)::

    archbench-progress: <suite> <done>/<total> <elapsed>s <what>

and the blindsig driver, per repetition, ``blindsig: RSA-2048 repetition 2/3 done``.
With adaptive repetitions (``ci_target``) that ``/3`` is the cap (``max_repetitions``):
a scheme may stop as soon as its interval is narrow enough, so the display says
``repetition 2 (≤ 3)``, never "2 of 3".
:class:`SuiteTracker` reads these lines and says which suite runs, k of n, and the
seconds left: for the running suite its stored duration (same target, suite and
settings) minus the time it has run, plus the stored durations of the suites still
to come. Pure: no Docker, no files.

Stored durations (:class:`TimingStore`): suites by target and settings, builds by
stage and architecture. One JSON file in the work directory (``invoke.yaml``'s
``work``, scratch space of this machine: durations say nothing about other machines,
so they stay out of the results), ``<work>/timings.json``
(``{"version": 1, "entries": {key: {"seconds", "run_id", "at"}}}``), written
atomically after each finished suite, bootstrap and image build. Keys:

* ``suite/<host>/<target>/<suite>/<settings hash>``: a suite's ``duration_s`` as the
  harness recorded it; the hash covers the suite's settings (:func:`settings_hash`),
  so a run with other settings has no ETA rather than a wrong one.
* ``base/<host>/<base>/<arch>`` and ``image/<host>/<profile>/<arch>``: wall time of the
  last bootstrap (or pull) and image build that did work (reused ones are not recorded).

An unreadable file counts as empty (ETAs are a convenience; nothing is measured from
them) and is replaced at the next write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel
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

from archbench.errors import HarnessError
from archbench.inputs import load_json, read_text
from archbench.result import scheme_id
from archbench.suites import Suites


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
        self.heartbeat = Heartbeat()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RichReporter:
        self.display.start()
        if not self.live:
            # Without a terminal nothing redraws: a line per quiet interval shows work.
            self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.display.stop()

    def _beat(self) -> None:
        while not self._stop.wait(1.0):
            for target, text in self.heartbeat.due(time.monotonic()):
                elapsed = time.monotonic() - self.started.get(target, time.monotonic())
                self.console.print(
                    f"[{elapsed:7.1f}s] {target}: {text}", markup=False, soft_wrap=True
                )

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
        self.heartbeat.expect(target, deadline, step)
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
            self.heartbeat.printed(target, time.monotonic())

    def stage(self, target: str, stage: str) -> None:
        self.display.update(self._task(target), stage=stage, detail="", deadline=None, eta="")
        self.heartbeat.stage(target, stage, time.monotonic())
        if not self.live:
            elapsed = time.monotonic() - self.started[target]
            self.console.print(f"[{elapsed:7.1f}s] {target}: {stage}")

    def line(self, target: str, text: str) -> None:
        width = max(20, self.console.width - 50)
        self.heartbeat.feed(target, text)
        self.display.update(self._task(target), detail=text.strip()[:width])

    def finish(self, target: str, ok: bool, message: str) -> None:
        self.heartbeat.done(target)
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


# ---------------------------------------------------------------- harness progress lines

PROGRESS_PREFIX = "archbench-progress:"

_LINE = re.compile(
    r"^archbench-progress: (?P<suite>[a-z][a-z0-9-]*) (?P<done>\d{1,9})/(?P<total>\d{1,9}) "
    r"(?P<elapsed>\d{1,9}(?:\.\d+)?)s (?P<what>\S.*)$"
)
_BLINDSIG = re.compile(
    r"^blindsig: (?P<label>CS|RSA-\d{1,5}) (?P<what>calibration round|warmup repetition|"
    r"repetition) (?P<k>\d{1,9})(?:/(?P<n>\d{1,9}))? done"
)


@dataclass(frozen=True)
class ProgressEvent:
    """One parsed progress line.

    ``done`` of ``total`` steps have started in ``suite`` (0: it just began);
    ``elapsed_s`` is the suite's own elapsed time in s when the harness says it
    (None for the driver's lines); ``what`` names the step.
    """

    suite: str
    done: int
    total: int
    elapsed_s: float | None
    what: str


def parse_line(
    text: str, blindsig_labels: Sequence[str] = (), adaptive: bool = False
) -> ProgressEvent | None:
    """Parse one stderr line of the harness; None when it is not a progress line.

    ``blindsig_labels`` are the driver's scheme labels in run order (``CS``,
    ``RSA-1024``, ...): a driver line about label i is step i+1 of them. A
    driver line about a label not in the list counts as step 0 of 1.
    ``adaptive``: blindsig runs with a ``ci_target``, so a timed repetition's
    ``k/n`` is k of at most n, and ``what`` says ``repetition k (≤ n)``.
    """
    text = text.strip()
    m = _LINE.match(text)
    if m is not None:
        total = max(1, int(m["total"]))
        return ProgressEvent(
            suite=m["suite"],
            done=min(int(m["done"]), total),
            total=total,
            elapsed_s=float(m["elapsed"]),
            what=m["what"],
        )
    b = _BLINDSIG.match(text)
    if b is None:
        return None
    label = b["label"]
    if not b["n"]:
        count = b["k"]
    elif adaptive and b["what"] == "repetition":
        count = f"{b['k']} (≤ {b['n']})"  # the cap; the interval may stop it sooner
    else:
        count = f"{b['k']}/{b['n']}"
    what = f"{label} {b['what']} {count}"
    if label in blindsig_labels:
        return ProgressEvent(
            "blindsig", blindsig_labels.index(label) + 1, len(blindsig_labels), None, what
        )
    return ProgressEvent("blindsig", 0, 1, None, what)


def blindsig_labels(suites: Suites) -> list[str]:
    """The blindsig driver's scheme labels in run order (``CS``, ``RSA-1024``, ...)."""
    b = suites.blindsig
    if b is None or not b.enabled:
        return []
    rsa = [scheme_id("RSA", bits) for bits in b.rsa_bits] if "rsa" in b.schemes else []
    return (["CS"] if "cs" in b.schemes else []) + rsa


def blindsig_adaptive(suites: Suites) -> bool:
    """True when blindsig runs and stops each scheme/size at its ``ci_target`` (adaptive)."""
    b = suites.blindsig
    return b is not None and b.enabled and b.ci_target is not None


def format_seconds(seconds: float) -> str:
    """``"1m05s"`` / ``"42s"`` for a duration in s (rounded to whole seconds)."""
    minutes, secs = divmod(round(max(0.0, seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class SuiteTracker:
    """The state of one harness run, fed its stderr lines.

    Args:
        expected: suite name -> stored duration in s of its last run with the same
            settings (None: never run so), in the order the harness runs them.
        blindsig_labels: see :func:`parse_line`.
        clock: monotonic clock in s (injectable for tests).
        adaptive: blindsig stops at a ``ci_target`` (:func:`blindsig_adaptive`);
            see :func:`parse_line`.
    """

    def __init__(
        self,
        expected: Mapping[str, float | None],
        blindsig_labels: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
        *,
        adaptive: bool = False,
    ) -> None:
        self.expected = dict(expected)
        self.labels = list(blindsig_labels)
        self.adaptive = adaptive
        self.clock = clock
        self.started: dict[str, float] = {}
        self.current: ProgressEvent | None = None

    def feed(self, text: str) -> ProgressEvent | None:
        """Take one stderr line; returns its event, or None for any other line."""
        event = parse_line(text, self.labels, self.adaptive)
        if event is None:
            return None
        if event.suite not in self.started:
            # The harness's own elapsed time, when it says it, places the start exactly.
            self.started[event.suite] = self.clock() - (event.elapsed_s or 0.0)
        self.current = event
        return event

    def remaining_s(self) -> float | None:
        """Seconds left in this run, or None when a suite still to finish has no stored time.

        The running suite counts as its stored duration minus its elapsed time
        (never below 0: a suite slower than last time shows 0 until it ends).
        """
        left = 0.0
        now = self.clock()
        for suite, seconds in self.expected.items():
            if suite in self.started and self.current is not None:
                if suite != self.current.suite:
                    continue  # finished: a later suite has started
                if seconds is None:
                    return None
                left += max(0.0, seconds - (now - self.started[suite]))
            elif seconds is None:
                return None
            else:
                left += seconds
        return left

    def detail(self) -> str:
        """``"openssl-speed 3/12 ecdsap521, 41s in"`` for the running suite ('' before any)."""
        e = self.current
        if e is None:
            return ""
        ran = self.clock() - self.started[e.suite]
        return f"{e.suite} {e.done}/{e.total} {e.what}, {format_seconds(ran)} in"


# ---------------------------------------------------------------- build and bootstrap lines

HEARTBEAT_S = 15.0
"""Longest silence of plain output (no terminal) while a stage runs, in s."""

BUILD_MARK = "archbench:"
"""Prefix of the lines archbench's builders add to build output: ``archbench: bootstrapping
<suite> for <platform>[, second stage under QEMU]`` and ``archbench: building <tag> for
<platform>[ under QEMU]`` (:mod:`archbench.images.bases`, :mod:`archbench.images.builder`)."""

_MARK = re.compile(r"^archbench: (?P<kind>bootstrapping|building) (?P<what>\S+) for (?P<plat>\S+)")
_STEP = re.compile(r"^Step (?P<k>\d{1,4})/(?P<n>\d{1,4}) : (?P<cmd>[A-Z]+)")
_DEB = re.compile(
    r"^I: (?P<verb>Retrieving|Extracting|Unpacking|Configuring) (?P<pkg>[a-z0-9][a-z0-9+.-]*)"
    r"(?:\.\.\.| )"
)
_DEB_SECOND = re.compile(r"^I: Installing (?:core|base) packages")
_APT_TOTAL = re.compile(r"^\d+ upgraded, (?P<n>\d+) newly installed")
_APT = re.compile(r"^(?P<verb>Get:\d+|Unpacking|Setting up) (?P<pkg>\S+)")
_MMDEB = re.compile(
    r"^I: (?P<what>downloading packages|extracting archives|installing \S+ packages)"
)
# Not packages: debootstrap's index downloads.
_INDEXES = frozenset({"Release", "InRelease", "Packages"})


class BuildTracker:
    """What one bootstrap or image build is doing, read from its output lines.

    Understands debootstrap's ``I:`` lines (``Retrieving``, ``Extracting``, then in the
    second stage ``Unpacking`` and ``Configuring``), apt's (``N newly installed``,
    ``Get:k``, ``Unpacking``, ``Setting up``), mmdebstrap's phases, the engine's
    ``Step k/n`` and archbench's own :data:`BUILD_MARK` lines, which say what is built
    for which platform and whether it runs under QEMU. Pure: no clock, no I/O.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything: a new stage starts."""
        self.what = ""
        self.qemu = False
        self.qemu_later = False
        self.step = ""
        self.phase = ""
        self.done = 0
        self.total: int | None = None
        self.retrieved = 0

    def feed(self, text: str) -> None:
        """Take one line of build or bootstrap output; other lines change nothing."""
        line = text.strip()
        if m := _MARK.match(line):
            self.reset()
            self.what = m["what"]
            emulated = "under QEMU" in line
            bootstrap = m["kind"] == "bootstrapping"
            self.qemu, self.qemu_later = (False, emulated) if bootstrap else (emulated, False)
        elif m := _STEP.match(line):
            self.step = f"step {m['k']}/{m['n']} {m['cmd']}"
            self.phase, self.done, self.total = "", 0, None
        elif _DEB_SECOND.match(line):
            # debootstrap's second stage: the chroot runs the target's own dpkg.
            self.qemu = self.qemu or self.qemu_later
            self.total = self.retrieved or self.total
        elif m := _DEB.match(line):
            verb = m["verb"]
            if verb == "Retrieving":
                if m["pkg"] in _INDEXES:
                    return
                self.retrieved += 1
                self._count("downloading", self.retrieved, None)
            else:
                phase = {"Extracting": "extracting", "Unpacking": "unpacking"}.get(
                    verb, "configuring"
                )
                if m["pkg"] in ("required", "base", "the"):
                    return  # "Unpacking required packages...": a heading, not a package
                self._count(phase, None, self.retrieved or None)
        elif m := _APT_TOTAL.match(line):
            self.total = int(m["n"])
        elif m := _APT.match(line):
            verb = m["verb"]
            phase = (
                "downloading"
                if verb.startswith("Get:")
                else "unpacking"
                if verb == "Unpacking"
                else "configuring"
            )
            self._count(phase, int(verb[4:]) if verb.startswith("Get:") else None, self.total)
        elif (event := parse_line(line)) is not None:
            # A harness inside a stage that has no SuiteTracker (the counting run).
            self.phase, self.done = f"{event.suite} {event.done}/{event.total} {event.what}", 0
        elif m := _MMDEB.match(line):
            self.phase, self.done = m["what"], 0
            if self.phase.startswith("installing"):
                # mmdebstrap's dpkg runs inside the chroot from here on.
                self.qemu = self.qemu or self.qemu_later

    def _count(self, phase: str, done: int | None, total: int | None) -> None:
        if phase != self.phase:
            self.phase, self.done = phase, 0
        self.done = done if done is not None else self.done + 1
        if total is not None:
            self.total = total

    def detail(self) -> str:
        """``"step 5/9 RUN: configuring 41 of 88 packages under QEMU"`` ('' before any line)."""
        parts = []
        if self.phase:
            count = f" {self.done}" if self.done else ""
            if self.done and self.total and self.done <= self.total:
                count += f" of {self.total}"
            one = self.done == 1 and count == " 1"
            noun = "" if not self.done else " package" if one else " packages"
            parts.append(f"{self.phase}{count}{noun}")
        text = ": ".join(p for p in (self.step, *parts) if p)
        # A build's COPY, ADD and LABEL steps run nothing, emulated or not.
        if text and self.qemu and (not self.step or self.step.endswith(" RUN")):
            text += " under QEMU"
        return text


class Heartbeat:
    """Which targets are due a line of plain output, and what it says.

    A target is due when its stage has printed nothing for :data:`HEARTBEAT_S`; its line
    names the stage, what the build is doing (:class:`BuildTracker`) and the time left
    against the stage's stored duration (``ETA 1m10s``; ``ETA passed`` once it ran
    longer than last time; ``no ETA`` for a first build). Safe to share between threads;
    the clock is the caller's (monotonic s).
    """

    def __init__(self, interval: float = HEARTBEAT_S) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._stages: dict[str, tuple[str, float]] = {}
        self._last: dict[str, float] = {}
        self._deadline: dict[str, float | None] = {}
        self._builds: dict[str, BuildTracker] = {}

    def stage(self, target: str, stage: str, now: float) -> None:
        """``target`` entered ``stage`` at ``now`` (that line was just printed)."""
        with self._lock:
            self._stages[target] = (stage, now)
            self._last[target] = now
            self._deadline[target] = None
            self._builds.setdefault(target, BuildTracker()).reset()

    def expect(self, target: str, deadline: float | None, step: str) -> None:
        """The running stage's end is expected at ``deadline`` (None: unknown)."""
        with self._lock:
            if target in self._stages:
                self._deadline[target] = deadline

    def printed(self, target: str, now: float) -> None:
        """A line about ``target`` was printed at ``now``."""
        with self._lock:
            self._last[target] = now

    def feed(self, target: str, text: str) -> None:
        """A line of ``target``'s build output (see :class:`BuildTracker`)."""
        with self._lock:
            self._builds.setdefault(target, BuildTracker()).feed(text)

    def done(self, target: str) -> None:
        """``target`` finished: no more lines for it."""
        with self._lock:
            self._stages.pop(target, None)

    def due(self, now: float) -> list[tuple[str, str]]:
        """``(target, line)`` for each target quiet for :attr:`interval` s; marks them printed."""
        out = []
        with self._lock:
            for target, (stage, since) in self._stages.items():
                if now - self._last.get(target, since) < self.interval:
                    continue
                self._last[target] = now
                build = self._builds.get(target)
                detail = build.detail() if build is not None else ""
                deadline = self._deadline.get(target)
                eta = (
                    "no ETA"
                    if deadline is None
                    else _eta(deadline - now)
                    if deadline >= now
                    else "ETA passed"
                )
                ran = format_seconds(now - since)
                out.append((target, f"{stage}: {detail or 'working'}, {ran} in ({eta})"))
        return out


# ---------------------------------------------------------------- stored durations

TIMINGS_FILE = "timings.json"
_LOCK = threading.Lock()
"""One lock for every store: the pipeline's worker threads read, change and write the file."""


def settings_hash(settings: BaseModel) -> str:
    """sha256 (16 hex digits) of a suite's settings without ``enabled``, keys sorted."""
    doc = settings.model_dump(mode="json", exclude={"enabled"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def suite_key(host: str, target: str, suite: str, settings: BaseModel) -> str:
    """Key of a suite's duration: ``suite/<host>/<target>/<suite>/<settings hash>``."""
    return f"suite/{host}/{target}/{suite}/{settings_hash(settings)}"


def stage_key(stage: str, host: str, name: str, arch: str) -> str:
    """Key of a build stage: ``base/<host>/<base>/<arch>`` or ``image/<host>/<profile>/<arch>``."""
    return f"{stage}/{host}/{name}/{arch}"


class TimingStore:
    """The durations file in ``work_dir``; safe to share between threads."""

    def __init__(self, work_dir: Path) -> None:
        self.path = work_dir / TIMINGS_FILE

    def _read(self) -> dict[str, Any]:
        # Through the bounded reader like every JSON archbench reads (one BOM rule, no
        # FIFO read); a broken file only loses the ETAs.
        try:
            text = read_text(self.path, HarnessError, "the timings file", 16 * 1024 * 1024)
            doc = load_json(text, str(self.path), HarnessError)
        except HarnessError:
            return {}
        entries = doc.get("entries") if isinstance(doc, dict) else None
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> float | None:
        """The stored duration in s for ``key``, or None when there is none."""
        with _LOCK:
            entry = self._read().get(key)
        seconds = entry.get("seconds") if isinstance(entry, dict) else None
        return float(seconds) if isinstance(seconds, int | float) and seconds >= 0 else None

    def record(self, key: str, seconds: float, run_id: str) -> None:
        """Store ``seconds`` (>= 0) for ``key``, replacing the previous value.

        Errors writing the file are ignored: the durations only feed ETAs.
        """
        if seconds < 0:
            return
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with _LOCK:
            entries = self._read()
            entries[key] = {"seconds": round(seconds, 3), "run_id": run_id, "at": at}
            text = json.dumps({"version": 1, "entries": entries}, indent=1, sort_keys=True)
            with contextlib.suppress(OSError):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".timings-")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as f:
                        f.write(text + "\n")
                    os.replace(tmp, self.path)
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)

    def suite_estimates(self, host: str, target: str, suites: Suites) -> dict[str, float | None]:
        """Suite -> stored duration in s of its last run on ``host`` by ``target`` with the
        same settings (None: none recorded), for the enabled ``suites`` in the order the
        harness runs them."""
        return {
            name: self.get(suite_key(host, target, name, settings))
            for name, settings in suites.enabled().items()
        }

    def run_estimate(self, host: str, target: str, suites: Suites, repeat: int = 1) -> float | None:
        """ETA in s of a run stage (``repeat`` container runs), or None when a suite has no
        stored duration for its settings."""
        per_run = list(self.suite_estimates(host, target, suites).values())
        if any(s is None for s in per_run):
            return None
        return sum(s for s in per_run if s is not None) * repeat
