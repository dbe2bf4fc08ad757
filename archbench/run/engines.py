"""The engines a run's targets use: connected once per host, and what they can give.

:func:`connect_engines` opens one client per host the targets name (every member of
a pool they name) and asks each engine its architecture; :func:`check_cpusets` and
:func:`check_quotas` refuse a cpuset or a CPU quota an engine cannot give before
anything is built. ``invoke bench``, ``invoke history`` and ``invoke bisect`` share
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import docker.errors

from archbench.errors import EngineError
from archbench.hosts import connect_host, engine_arch
from archbench.inputs import check_cpuset_fits
from archbench.matrix import Matrix, Target, check_cpus_fit
from archbench.platforms import Arch
from archbench.run.planning import TargetPlan


def connect_engines(
    m: Matrix, targets: Iterable[Target], say: Callable[[str], None] | None = None
) -> tuple[dict[str, Any], dict[str, Arch]]:
    """One client per host of ``targets`` (in first-named order) and each engine's architecture.

    A target naming a pool names every member. A member that does not answer is left
    out and said (``say``; None: not said) when every target that names it does so
    through a pool: the pool's other members take its targets (whether one of them
    fits each target is :func:`archbench.run.plan`'s to say).

    Returns:
        ``(clients, host_archs)``, both keyed by host name (``local`` or a key of
        the matrix's ``hosts``); a pool member that did not answer is in neither.

    Raises:
        EngineError: a host a target names itself does not answer, or no member of a
            pool does (each member's reason).
    """
    targets = list(targets)
    direct = {t.host for t in targets if t.host not in m.pools}
    clients: dict[str, Any] = {}
    host_archs: dict[str, Arch] = {}
    missed: dict[str, str] = {}
    for name in dict.fromkeys(n for t in targets for n in m.members(t.host)):
        try:
            clients[name] = connect_host(m.host(name), name)
            host_archs[name] = engine_arch(clients[name])
        except EngineError as exc:
            if name in direct:
                raise
            clients.pop(name, None)
            missed[name] = str(exc)
    for pool in dict.fromkeys(t.host for t in targets if t.host in m.pools):
        if not any(n in clients for n in m.pools[pool]):
            reasons = "\n  ".join(missed[n] for n in m.pools[pool])
            raise EngineError(f"no host of pool {pool} answers:\n  {reasons}")
    if say is not None:
        for reason in missed.values():
            say(f"{reason}\n(left out of this run: the other hosts of its pool take its targets)")
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
        for name in p.hosts:  # every member of a pool the target may go to
            if name not in ncpu:
                ncpu[name] = _ncpu(clients[name])
            where = "--cpuset" if cpuset else f"target {p.name} (matrix.yml)"
            check_cpuset_fits(p.cpuset, ncpu[name], f"{where} on host {name}")


def check_quotas(clients: dict[str, Any], plans: Sequence[TargetPlan], cpus: float | None) -> None:
    """Refuse a CPU quota (``--cpus`` or a target's ``cpus``) above its engine's CPU count.

    Raises:
        MatrixError: a quota above the engine's NCPU.
    """
    for p in plans:
        if p.cpus is None:
            continue
        where = "--cpus" if cpus is not None else f"target {p.name} (matrix.yml)"
        for name in p.hosts:  # every member of a pool the target may go to
            check_cpus_fit(p.cpus, _ncpu(clients[name]), f"{where} on host {name}")
