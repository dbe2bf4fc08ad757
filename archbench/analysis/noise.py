"""Why a row was noisy: name the cause from the harness's noise readings.

Pure: no Docker, no files. Input is a row's :class:`archbench.result.RowNoise`
(steal and iowait fractions from ``/proc/stat``, the driver's involuntary
context switches, the largest load average, cpufreq governor and frequency
range over its timed repetitions; ``harness/CONTRACT.md``). The thresholds
say when a reading is large enough to explain a coefficient of variation of
several percent; a row flagged noisy without any of them gets "cause unknown".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from archbench.result import RowNoise

STEAL_THRESHOLD: Final = 0.02
"""Steal above 2 % of CPU time: the hypervisor ran other guests on our CPUs."""
IOWAIT_THRESHOLD: Final = 0.05
"""iowait above 5 %: something else kept the disks (and often the CPUs) busy."""
SWITCHES_PER_REPETITION: Final = 1.0
"""More than one involuntary context switch per repetition: the driver was preempted
within its timed blocks (a time slice is milliseconds, a block about one)."""
FREQ_SPREAD: Final = 1.05
"""Highest over lowest observed frequency above 5 %: the clock speed moved."""
STEADY_GOVERNORS: Final = frozenset({"performance"})

UNKNOWN: Final = "cause unknown"


def _readings(noise: RowNoise | None) -> list[tuple[str, float | None, str]]:
    """``(kind, value, phrase)`` per reading over its threshold, worst kinds first."""
    if noise is None:
        return []
    found: list[tuple[str, float | None, str]] = []
    if noise.steal is not None and noise.steal > STEAL_THRESHOLD:
        found.append(("steal", noise.steal, f"steal {noise.steal:.0%}".replace("%", " %")))
    if noise.load_max is not None and noise.load_max > noise.cpus:
        plural = "CPU" if noise.cpus == 1 else "CPUs"
        found.append(
            ("load", noise.load_max, f"load {noise.load_max:.1f} on {noise.cpus} {plural}")
        )
    if (
        noise.involuntary_switches is not None
        and noise.repetitions > 0
        and noise.involuntary_switches > SWITCHES_PER_REPETITION * noise.repetitions
    ):
        found.append(
            (
                "switches",
                float(noise.involuntary_switches),
                f"{noise.involuntary_switches} involuntary context switches"
                f" in {noise.repetitions} repetitions",
            )
        )
    if noise.iowait is not None and noise.iowait > IOWAIT_THRESHOLD:
        found.append(("iowait", noise.iowait, f"iowait {noise.iowait:.0%}".replace("%", " %")))
    unsteady = [g for g in noise.governors if g not in STEADY_GOVERNORS]
    if unsteady:
        found.append(("governor", None, "governor " + ", ".join(unsteady)))
    if (
        noise.freq_mhz_min is not None
        and noise.freq_mhz_max is not None
        and noise.freq_mhz_max > FREQ_SPREAD * noise.freq_mhz_min
    ):
        found.append(
            (
                "frequency",
                None,
                f"frequency {noise.freq_mhz_min:.0f}-{noise.freq_mhz_max:.0f} MHz",
            )
        )
    return found


def noise_causes(noise: RowNoise | None) -> list[str]:
    """Readable causes of noise, worst kinds first (``["steal 12 %", "load 3.1 on 2 CPUs"]``).

    An empty list means no reading crossed its threshold (or nothing was read).
    """
    return [phrase for _, _, phrase in _readings(noise)]


KEYGEN_CAUSE: Final = "key generation (its time varies from key to key)"
"""Cause named first for a key generation row that left the adaptive loop (``keygen_cap``)."""


def noise_cause_text(
    flags: tuple[str, ...] | list[str], noise: RowNoise | None, stop: str | None = None
) -> str | None:
    """The ``noise_cause`` export column: causes joined by ``; `` for a noisy row, else None.

    A noisy row whose readings name nothing (or that has none, older files)
    gets :data:`UNKNOWN`. ``stop`` is the row's stop reason: a ``keygen_cap``
    row names :data:`KEYGEN_CAUSE` first, the spread of key generation itself.
    """
    if "noisy" not in flags:
        return None
    causes = noise_causes(noise)
    if stop == "keygen_cap":
        causes.insert(0, KEYGEN_CAUSE)
    return "; ".join(causes) if causes else UNKNOWN


EMULATION_CAUSE: Final = (
    "emulation (QEMU user mode on the {host} host: its times, not the target CPU's)"
)
"""The cause every noisy row of an emulated target shares, named first (``{host}``: the
host's architecture)."""


def noise_summary(
    rows: Sequence[tuple[RowNoise | None, str | None]],
    *,
    emulated_on: str | None = None,
) -> str | None:
    """What a table's noisy rows recorded, one phrase per kind of cause and the rows it covers.

    ``rows`` are the ``(noise readings, stop reason)`` of the rows flagged noisy;
    ``emulated_on`` names the host of an emulated target (``"amd64"``), whose every
    row then names emulation first. Load and steal give their largest reading, the
    others how many rows crossed their threshold (the thresholds of
    :func:`noise_causes`). Returns e.g. ``"emulation (QEMU user mode on the amd64
    host: …) in all 14 rows; load up to 5.2 on 2 CPUs in 12 of 14"``; None without
    noisy rows.
    """
    if not rows:
        return None
    total = len(rows)
    seen: dict[str, list[float | None]] = {}
    cpus = 1
    for noise, stop in rows:
        found = [(kind, value) for kind, value, _ in _readings(noise)]
        if stop == "keygen_cap":
            found.insert(0, ("keygen", None))
        if emulated_on is not None:
            found.insert(0, ("emulation", None))
        if not found:
            found = [("unknown", None)]
        if noise is not None:
            cpus = max(cpus, noise.cpus)
        for kind, value in found:
            seen.setdefault(kind, []).append(value)

    def rows_of(kind: str) -> str:
        k = len(seen[kind])
        if k == total:
            return f"in all {total} rows" if total > 1 else "in the one noisy row"
        return f"in {k} of {total}"

    def largest(kind: str) -> float:
        return max(v for v in seen[kind] if v is not None)

    plural = "CPU" if cpus == 1 else "CPUs"
    phrases = {
        "emulation": EMULATION_CAUSE.format(host=emulated_on),
        "keygen": KEYGEN_CAUSE,
        "steal": f"steal up to {largest('steal'):.0%}".replace("%", " %")
        if "steal" in seen
        else "",
        "load": f"load up to {largest('load'):.1f} on {cpus} {plural}" if "load" in seen else "",
        "switches": "more than one involuntary context switch per repetition",
        "iowait": f"iowait up to {largest('iowait'):.0%}".replace("%", " %")
        if "iowait" in seen
        else "",
        "governor": "a cpufreq governor other than performance",
        "frequency": "a clock frequency that moved by more than 5 %",
        "unknown": UNKNOWN,
    }
    # Worst kinds first, as noise_causes orders them.
    return "; ".join(f"{phrases[k]} {rows_of(k)}" for k in phrases if k in seen)
