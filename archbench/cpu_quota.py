"""A CPU quota for benchmark containers: ``cpus: 0.5`` / ``invoke bench --cpus 0.5``.

The container's cgroup may use ``cpus`` CPU-seconds per second of wall time, enforced by
the CFS bandwidth controller as a quota of CPU time per period (cgroup v2 ``cpu.max``
reads ``<quota> <period>`` in µs). Docker's ``--cpus`` uses a 100 ms period, which is
far longer than a timed block (blindsig's calibration floor is 1 ms): a block then
usually runs entirely inside one period's budget at full speed, and a median over
blocks does not see the quota at all. archbench therefore gives the engine the same
share with the *shortest period the kernel allows* (:func:`cfs_period_us`: quota and
period each at least 1 ms, ``kernel/sched/core.c`` ``tg_set_cfs_bandwidth``), so that a
block of a millisecond or more waits out throttling in proportion to the quota. It is
what the A/B test of issue 12 halves: the same image under half the quota must come
out slower on every row that allows a verdict (``benchmarks/compare_aa_ab.py``).

Pure: no docker. Every value is checked here before it reaches the engine.
"""

from __future__ import annotations

import math
from typing import Final

from archbench.errors import MatrixError
from archbench.safe_load import quote

MIN_CPUS: Final = 0.01
"""Docker's smallest ``--cpus`` (a 1 ms quota per 100 ms period)."""
MAX_CPUS: Final = 1024.0
"""More than any engine here has; the engine's own CPU count is checked at run time."""


def check_cpus(where: str, value: object) -> float:
    """``value`` (text, int or float) as a CPU quota from :data:`MIN_CPUS` to :data:`MAX_CPUS`.

    Args:
        where: the flag or matrix key, for the message (``--cpus``, ``targets[0].cpus``).

    Raises:
        MatrixError: a bool, not a number, not finite, or out of range.
    """
    if isinstance(value, bool):
        raise MatrixError(f"{where}: expected a number of CPUs such as 0.5, got {value!r}")
    try:
        cpus = float(value) if isinstance(value, int | float) else float(str(value).strip())
    except (ValueError, OverflowError):
        cpus = math.nan
    if not math.isfinite(cpus):
        raise MatrixError(
            f"{where}: {quote(str(value))} is not a number of CPUs; give one such as 0.5 or 1"
        )
    if not MIN_CPUS <= cpus <= MAX_CPUS:
        raise MatrixError(
            f"{where}: {cpus:g} CPUs is out of range; give {MIN_CPUS:g} to {MAX_CPUS:g} "
            "(Docker's --cpus)"
        )
    return cpus


def parse_cpus(flag: str, value: object | None) -> float | None:
    """The ``--cpus`` flag: None when absent, else :func:`check_cpus`.

    Raises:
        MatrixError: see :func:`check_cpus`.
    """
    return None if value is None else check_cpus(flag, value)


CFS_MIN_US: Final = 1000
"""The kernel's (and Docker's) smallest CFS quota and period: 1 ms."""
CFS_MAX_PERIOD_US: Final = 100_000
"""Docker's default period (100 ms); the longest archbench uses (reached at 0.01 CPUs)."""


def cfs_period_us(cpus: float) -> int:
    """The shortest CFS period in µs whose quota for ``cpus`` CPUs is at least 1 ms.

    ``max(1000, ceil(1000 / cpus))`` capped at 100 000: 1 ms for 1 CPU or more,
    2 ms for 0.5, 10 ms for 0.1, 100 ms for 0.01 (Docker's own period). A shorter
    period spreads the throttling evenly over time, so every timed block of about a
    period or longer runs at the quota's speed (module docstring).
    """
    return min(CFS_MAX_PERIOD_US, max(CFS_MIN_US, math.ceil(CFS_MIN_US / cpus - 1e-9)))


def cfs_quota_us(cpus: float) -> int:
    """The CFS quota in µs per :func:`cfs_period_us` period for ``cpus`` CPUs (>= 1 ms)."""
    return max(CFS_MIN_US, round(cpus * cfs_period_us(cpus)))


def check_cpus_fit(cpus: float, ncpu: int, where: str) -> None:
    """Refuse a quota above the engine's CPU count (``ncpu``: Docker's NCPU; <= 0 unknown).

    The engine refuses it too, but only when the container is created, after building.

    Raises:
        MatrixError: ``cpus`` > ``ncpu``.
    """
    if ncpu > 0 and cpus > ncpu:
        raise MatrixError(
            f"{where}: a quota of {cpus:g} CPUs is more than the engine's {ncpu} CPU(s); "
            f"give at most {ncpu}"
        )
