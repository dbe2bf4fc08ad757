"""Follow the harness's progress lines and estimate the time left in a container run.

The harness writes on stderr, as each step starts (``harness/abh/suites/common.py``)::

    archbench-progress: <suite> <done>/<total> <elapsed>s <what>

and the blindsig driver, per repetition, ``blindsig: RSA-2048 repetition 2/3 done``.
With adaptive repetitions (``ci_target``) that ``/3`` is the cap (``max_repetitions``):
a scheme may stop as soon as its interval is narrow enough, so the display says
``repetition 2 (≤ 3)``, never "2 of 3".
:class:`SuiteTracker` reads these lines and says which suite runs, k of n, and the
seconds left: for the running suite its stored duration (same target, suite and
settings, :mod:`archbench.run.timings`) minus the time it has run, plus the stored
durations of the suites still to come. Pure: no Docker, no files.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from archbench.suites import Suites

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
    rsa = [f"RSA-{bits}" for bits in b.rsa_bits] if "rsa" in b.schemes else []
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
