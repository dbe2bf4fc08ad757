"""Plan and drive the pipeline: matrix -> bases -> images -> run -> results.

:func:`plan` (:mod:`archbench.run.plan`) is pure: it turns the selected matrix
targets into a list of :class:`TargetPlan` (host, native or emulated, base,
packages) from the architectures the hosts' engines report, so it can be
printed and tested.
:func:`execute` carries the plan out: targets on different hosts in
parallel, targets on one host in that host's ``max_parallel_runs`` slots
(1 by default, so benchmark runs on one CPU never overlap). A failure of one
target is recorded and the others go on; every finished result is on disk
the moment its container run ends. Ctrl-C removes the run's containers on
every host before it propagates.

This module keeps the public names it always had: the run's bookkeeping is
:mod:`archbench.run.bookkeeping` and one target's stages are
:mod:`archbench.run.target`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping, Sequence

import docker
import docker.errors
import requests.exceptions

from archbench.errors import ArchbenchError
from archbench.hosts import answers, host_cpu_model, redact
from archbench.matrix import LOCAL_HOST
from archbench.platforms import Arch
from archbench.run import containers as run
from archbench.run.bookkeeping import TargetOutcome, Workspace, is_complete
from archbench.run.options import RunOptions
from archbench.run.plan import TargetPlan, plan
from archbench.run.progress import Reporter, SilentReporter

# Under the names execute() has always used for them.
from archbench.run.target import HostState as _Host
from archbench.run.target import execute_target as _execute_one

__all__ = [
    "TargetOutcome",
    "TargetPlan",
    "Workspace",
    "execute",
    "is_complete",
    "lost_connection",
    "plan",
]


def execute(
    clients: Mapping[str, docker.DockerClient],
    plans: Sequence[TargetPlan],
    workspace: Workspace,
    host_archs: Mapping[str, Arch],
    options: RunOptions | None = None,
    *,
    reporter: Reporter | None = None,
    slots: int | None = None,
) -> list[TargetOutcome]:
    """Carry out ``plans``: hosts in parallel, each host's targets in its run slots.

    ``options``: build only, rebuild, resume (:class:`archbench.run.options.RunOptions`;
    None: all off). ``slots`` replaces every host's ``max_parallel_runs`` (the build pass of
    :func:`archbench.run.schedule.build_then_measure` builds several targets side by side).

    ``clients`` and ``host_archs`` are keyed by host name. With ``resume``,
    targets whose results in this run are complete (:func:`is_complete`)
    are kept and not measured again. Returns one :class:`TargetOutcome` per
    plan, in plan order. A target's own failure is in its outcome, never
    raised; a remote target whose host stopped answering ends with a message
    saying so and how to resume (:func:`lost_connection`).
    ``KeyboardInterrupt`` propagates after every container of this run is
    removed on every host (no new one can be created from then on:
    :class:`archbench.run.containers.ContainerGate`); finished results stay on disk.
    """
    reporter = reporter or SilentReporter()
    options = options or RunOptions()
    build_only, rebuild, resume = options.build_only, options.rebuild, options.resume
    outcomes = {p.name: TargetOutcome(p.name, ok=False, message="not started") for p in plans}
    hosts: dict[str, _Host] = {}
    for p in plans:
        if resume and is_complete(workspace.store, workspace.run_id, p):
            o = outcomes[p.name]
            o.ok, o.skipped, o.message = True, True, "complete in this run; kept (--resume)"
            o.result_paths = [
                workspace.store.path_for(workspace.run_id, p.name, i)
                for i in range(1, p.repeat + 1)
            ]
            o.result_path = o.result_paths[0]
            reporter.finish(p.name, True, o.message)
            continue
        if p.host_name not in hosts:
            hosts[p.host_name] = _Host(
                name=p.host_name,
                client=clients[p.host_name],
                arch=host_archs[p.host_name],
                slots=slots or (p.host.max_parallel_runs if p.host else 1),
                queue=deque(),
                display=p.host.display if p.host else LOCAL_HOST,
            )
        hosts[p.host_name].queue.append(p)
    if resume:
        # A container of this run may still run on a host whose connection was
        # lost; it would share the CPU with the new measurement.
        for h in hosts.values():
            run.remove_run_containers(h.client, workspace.run_id)
    local_cpu = host_cpu_model()
    cancel = threading.Event()
    gate = run.ContainerGate()

    def worker(h: _Host) -> None:
        while not cancel.is_set():
            with h.lock:
                if not h.queue:
                    return
                p = h.queue.popleft()
            outcome = outcomes[p.name]
            try:
                _execute_one(
                    h, p, workspace, local_cpu, reporter, outcome, build_only, rebuild, gate
                )
                outcome.ok = True
            except ArchbenchError as exc:
                outcome.message = str(exc)
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                outcome.message = f"host {h.name}: {redact(str(exc))}"
            except Exception as exc:
                # A worker that died would leave "not started". The SDK's ssh
                # transport can fail with bare OSError/ValueError
                # when its ssh process is gone; the target must say it failed.
                outcome.message = f"host {h.name}: {type(exc).__name__}: {redact(str(exc))}"
            if cancel.is_set() and not outcome.ok:
                outcome.message = "interrupted"
            elif not outcome.ok and p.remote and not answers(h.client):
                # A lost connection to a remote engine ends this target only.
                outcome.message = lost_connection(h.name, h.display, outcome, workspace.run_id)
            reporter.finish(p.name, outcome.ok, outcome.message)

    threads = [
        threading.Thread(target=worker, args=(h,), name=f"archbench-{h.name}-{slot}", daemon=True)
        for h in hosts.values()
        for slot in range(min(h.slots, len(h.queue)))
    ]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.2)
    except KeyboardInterrupt:
        cancel.set()
        # Once the gate is closed and no create is in flight, the run has every
        # container it will ever have, so one sweep per host removes them all.
        drained = gate.close(timeout=60)
        for h in hosts.values():
            run.remove_run_containers(h.client, workspace.run_id)
        for t in threads:
            t.join(timeout=10)
        if not drained:
            # A create hung on an engine that stopped answering; it may have
            # landed since.
            for h in hosts.values():
                run.remove_run_containers(h.client, workspace.run_id)
        raise
    return [outcomes[p.name] for p in plans]


def lost_connection(host: str, display: str, outcome: TargetOutcome, run_id: str) -> str:
    """The message of a target whose remote host stopped answering during it."""
    stage = outcome.stage or "its start"
    return (
        f"lost the connection to host {host} ({display}) during {stage}; the other "
        f"targets' results are kept. When the host answers again, finish this target with: "
        f"invoke bench --resume {run_id}"
    )
