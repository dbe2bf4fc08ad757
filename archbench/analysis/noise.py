"""Why a row was noisy: name the cause from the harness's noise readings.

Pure: no Docker, no files. Input is a row's :class:`archbench.result.RowNoise`
(steal and iowait fractions from ``/proc/stat``, the driver's involuntary
context switches, the largest load average, cpufreq governor and frequency
range over its timed repetitions; ``harness/CONTRACT.md``). The thresholds
say when a reading is large enough to explain a coefficient of variation of
several percent; a row flagged noisy without any of them gets "cause unknown".
"""

from __future__ import annotations

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


def noise_causes(noise: RowNoise | None) -> list[str]:
    """Readable causes of noise, worst kinds first (``["steal 12 %", "load 3.1 on 2 CPUs"]``).

    An empty list means no reading crossed its threshold (or nothing was read).
    """
    if noise is None:
        return []
    causes: list[str] = []
    if noise.steal is not None and noise.steal > STEAL_THRESHOLD:
        causes.append(f"steal {noise.steal:.0%}".replace("%", " %"))
    if noise.load_max is not None and noise.load_max > noise.cpus:
        plural = "CPU" if noise.cpus == 1 else "CPUs"
        causes.append(f"load {noise.load_max:.1f} on {noise.cpus} {plural}")
    if (
        noise.involuntary_switches is not None
        and noise.repetitions > 0
        and noise.involuntary_switches > SWITCHES_PER_REPETITION * noise.repetitions
    ):
        causes.append(
            f"{noise.involuntary_switches} involuntary context switches"
            f" in {noise.repetitions} repetitions"
        )
    if noise.iowait is not None and noise.iowait > IOWAIT_THRESHOLD:
        causes.append(f"iowait {noise.iowait:.0%}".replace("%", " %"))
    unsteady = [g for g in noise.governors if g not in STEADY_GOVERNORS]
    if unsteady:
        causes.append("governor " + ", ".join(unsteady))
    if (
        noise.freq_mhz_min is not None
        and noise.freq_mhz_max is not None
        and noise.freq_mhz_max > FREQ_SPREAD * noise.freq_mhz_min
    ):
        causes.append(f"frequency {noise.freq_mhz_min:.0f}-{noise.freq_mhz_max:.0f} MHz")
    return causes


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
