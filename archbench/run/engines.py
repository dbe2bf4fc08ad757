"""The engines a run's targets use: connected once per host, and what they can give.

:func:`connect_engines` opens one client per host the targets name and asks each
engine its architecture; :func:`check_cpusets` and :func:`check_quotas` refuse a
cpuset or a CPU quota an engine cannot give before anything is built. ``invoke
bench``, ``invoke history`` and ``invoke bisect`` share them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import docker.errors

from archbench.hosts import connect_host, engine_arch
from archbench.inputs import check_cpuset_fits
from archbench.matrix import Matrix, Target, check_cpus_fit
from archbench.platforms import Arch
from archbench.run.planning import TargetPlan


def connect_engines(m: Matrix, targets: Iterable[Target]) -> tuple[dict[str, Any], dict[str, Arch]]:
    """One client per host of ``targets`` (in first-named order) and each engine's architecture.

    Returns:
        ``(clients, host_archs)``, both keyed by host name (``local`` or a key of
        the matrix's ``hosts``).

    Raises:
        EngineError: a host's engine cannot be reached.
    """
    clients: dict[str, Any] = {}
    host_archs: dict[str, Arch] = {}
    for name in dict.fromkeys(t.host for t in targets):
        clients[name] = connect_host(m.host(name), name)
        host_archs[name] = engine_arch(clients[name])
    return clients, host_archs


def _ncpu(client: Any) -> int:
    """The engine's CPU count (``docker info`` NCPU); 0 when unknown."""
    try:
        return int(client.info().get("NCPU") or 0)
    except (docker.errors.DockerException, OSError, ValueError, TypeError):
        return 0  # unknown: the engine itself refuses at run time


def check_cpusets(clients: dict[str, Any], plans: Sequence[TargetPlan], cpuset: str | None) -> None:
    """Refuse a cpuset (``--cpuset`` or a target's) naming CPUs its engine lacks.

    Raises:
        MatrixError: a cpuset names a CPU number the engine's NCPU does not reach.
    """
    ncpu: dict[str, int] = {}
    for p in plans:
        if not p.cpuset:
            continue
        if p.host_name not in ncpu:
            ncpu[p.host_name] = _ncpu(clients[p.host_name])
        where = "--cpuset" if cpuset else f"target {p.name} (matrix.yml)"
        check_cpuset_fits(p.cpuset, ncpu[p.host_name], f"{where} on host {p.host_name}")


def check_quotas(clients: dict[str, Any], plans: Sequence[TargetPlan], cpus: float | None) -> None:
    """Refuse a CPU quota (``--cpus`` or a target's ``cpus``) above its engine's CPU count.

    Raises:
        MatrixError: a quota above the engine's NCPU.
    """
    for p in plans:
        if p.cpus is None:
            continue
        where = "--cpus" if cpus is not None else f"target {p.name} (matrix.yml)"
        check_cpus_fit(p.cpus, _ncpu(clients[p.host_name]), f"{where} on host {p.host_name}")
