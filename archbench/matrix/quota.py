"""A CPU quota for benchmark containers: ``cpus: 0.5`` / ``invoke bench --cpus 0.5``.

The quota is Docker's ``--cpus``, given to the engine as ``NanoCpus`` (the docker SDK's
``nano_cpus``): the container's cgroup may use ``cpus`` CPU-seconds per second of wall
time, enforced by the CFS bandwidth controller (cgroup v2 ``cpu.max`` reads
``<cpus × 100000> 100000``). It is what the A/B test of issue 12 halves: the same image
under half the quota must come out slower on every row that allows a verdict
(``benchmarks/compare_aa_ab.py``).

Pure: no docker. Every value is checked here before it reaches the engine.
"""

from __future__ import annotations

import math
from typing import Final

from archbench.errors import MatrixError
from archbench.inputs import quote

MIN_CPUS: Final = 0.01
"""Docker's smallest quota (``NanoCpus`` 10^7)."""
MAX_CPUS: Final = 1024.0
"""More than any engine here has; the engine's own CPU count is checked at run time."""
NANO: Final = 1_000_000_000


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


def nano_cpus(cpus: float) -> int:
    """Docker's ``NanoCpus`` for a quota of ``cpus`` CPUs (10^9 per CPU, rounded)."""
    return round(cpus * NANO)


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
