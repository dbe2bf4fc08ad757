"""Carry plans out across hosts: hosts in parallel, each host's targets in its run slots.

:func:`execute` runs the targets on different hosts in parallel, the targets on one
host in that host's ``max_parallel_runs`` slots (1 by default, so benchmark runs on
one CPU never overlap). A failure of one target is recorded and the others go on;
every finished result is on disk the moment its container run ends. Ctrl-C removes
the run's containers on every host before it propagates.

With :attr:`RunOptions.build_first` (issue 14, "Fast") it makes two passes: a
build pass (bases and images only, ``build_jobs`` targets side by side, emulated
targets first since they take longest) and then the measuring pass, which finds
every image up to date and runs the targets in each host's run slots. Nothing is
built while anything is timed, and the builds of different targets overlap.

:func:`is_complete` decides what ``--resume`` keeps. One target's stages are
:mod:`archbench.run.target`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import docker
import docker.errors
import requests.exceptions

from archbench.errors import ArchbenchError, ResultsError
from archbench.hosts import answers, host_cpu_model, redact
from archbench.matrix import LOCAL_HOST
from archbench.platforms import Arch
from archbench.result import ResultStore, load
from archbench.run.containers import ContainerGate, remove_run_containers
from archbench.run.planning import TargetPlan
from archbench.run.progress import Reporter, SilentReporter
from archbench.run.target import HostState, TargetOutcome, Workspace, execute_target


@dataclass(frozen=True)
class RunOptions:
    """The options of one ``invoke bench`` that are not part of the plan.

    ``build_only``: bases and images only, nothing measured (``invoke images``);
    ``rebuild``: rebuild bases and images even when up to date (``--rebuild``);
    ``resume``: keep targets whose results in this run are complete
    (``--resume RUN_ID``); ``build_first``: build every target before measuring
    any (see the module docs); ``build_jobs``: targets built side by side when
    building first (invoke.yaml ``build_jobs``, 1-16).
    """

    build_only: bool = False
    rebuild: bool = False
    resume: bool = False
    build_first: bool = False
    build_jobs: int = 2


def is_complete(store: ResultStore, run_id: str, p: TargetPlan) -> bool:
    """True when every container run of ``p`` in ``run_id`` is stored and loads.

    What ``--resume`` keeps: a target with a missing or unreadable repeat, or
    without its instruction counts when the run counts (``metrics``), is
    measured again, every metric and repeat.
    """
    paths = [store.path_for(run_id, p.name, i) for i in range(1, p.repeat + 1)]
    if "time" not in p.metrics:
        paths = []
    if "instructions" in p.metrics:
        paths.append(store.path_for(run_id, p.name, 1, "instructions"))
    for path in paths:
        try:
            load(path)
        except ResultsError:
            return False
    return True


def execute(
    clients: Mapping[str, docker.DockerClient],
    plans: Sequence[TargetPlan],
    workspace: Workspace,
    host_archs: Mapping[str, Arch],
    options: RunOptions | None = None,
    *,
    reporter: Reporter | None = None,
) -> list[TargetOutcome]:
    """Carry out ``plans``: hosts in parallel, each host's targets in its run slots.

    ``clients`` and ``host_archs`` are keyed by host name. ``options``: build only,
    rebuild, resume, build first (:class:`RunOptions`; None: all off). With
    ``build_first``, every target's image is built first, ``build_jobs`` side by
    side, and the measuring pass runs only after the last build has ended, one
    target at a time per host: a target whose build failed is not measured (its
    outcome is the build's), and the base and image seconds of the build pass are
    the targets' stage times. A single target and an archive rerun have nothing to
    build first; ``build_only`` then builds ``build_jobs`` targets side by side.

    With ``resume``, targets whose results in this run are complete
    (:func:`is_complete`) are kept and not measured again. Returns one
    :class:`TargetOutcome` per plan, in plan order. A target's own failure is in its
    outcome, never raised; a remote target whose host stopped answering ends with a
    message saying so and how to resume (:func:`lost_connection`).
    ``KeyboardInterrupt`` propagates after every container of this run is
    removed on every host (no new one can be created from then on:
    :class:`archbench.run.containers.ContainerGate`); finished results stay on disk.
    """
    reporter = reporter or SilentReporter()
    options = options or RunOptions()
    if not options.build_first:
        return _pass(clients, plans, workspace, host_archs, options, reporter, None)
    if len(plans) < 2 or any(p.archived is not None for p in plans):
        slots = options.build_jobs if options.build_only else None
        return _pass(clients, plans, workspace, host_archs, options, reporter, slots)
    # Emulated targets take longest to build: they start first.
    order = sorted(plans, key=lambda p: not p.emulated)
    build = dataclasses.replace(options, build_only=True)
    built = _pass(clients, order, workspace, host_archs, build, reporter, options.build_jobs)
    by_name = {o.name: o for o in built}
    if options.build_only:
        return [by_name[p.name] for p in plans]
    ready = [p for p in plans if by_name[p.name].ok and not by_name[p.name].skipped]
    measure = dataclasses.replace(options, rebuild=False)
    measured = {
        o.name: o for o in _pass(clients, ready, workspace, host_archs, measure, reporter, None)
    }
    outcomes = []
    for p in plans:
        first = by_name[p.name]
        o = measured.get(p.name, first)
        if o is not first:
            # Stage times of the build pass; the measuring pass's up-to-date checks
            # are not builds. Smoke tests ran in both passes: both count.
            for stage, seconds in first.seconds.items():
                extra = o.seconds.get(stage, 0.0) if stage == "smoke" else 0.0
                o.seconds[stage] = seconds + extra
        outcomes.append(o)
    return outcomes


def _pass(
    clients: Mapping[str, docker.DockerClient],
    plans: Sequence[TargetPlan],
    workspace: Workspace,
    host_archs: Mapping[str, Arch],
    options: RunOptions,
    reporter: Reporter,
    slots: int | None,
) -> list[TargetOutcome]:
    """One pass over ``plans`` (see :func:`execute`); ``slots`` replaces every host's
    ``max_parallel_runs`` (None: the hosts' own)."""
    outcomes = {p.name: TargetOutcome(p.name, ok=False, message="not started") for p in plans}
    hosts: dict[str, HostState] = {}
    for p in plans:
        if options.resume and is_complete(workspace.store, workspace.run_id, p):
            _keep_complete(p, workspace, outcomes[p.name], reporter)
            continue
        if p.host_name not in hosts:
            hosts[p.host_name] = HostState(
                name=p.host_name,
                client=clients[p.host_name],
                arch=host_archs[p.host_name],
                slots=slots or (p.host.max_parallel_runs if p.host else 1),
                queue=deque(),
                display=p.host.display if p.host else LOCAL_HOST,
            )
        hosts[p.host_name].queue.append(p)
    if options.resume:
        # A container of this run may still run on a host whose connection was
        # lost; it would share the CPU with the new measurement.
        for h in hosts.values():
            remove_run_containers(h.client, workspace.run_id)
    local_cpu = host_cpu_model()
    cancel = threading.Event()
    gate = ContainerGate()

    def worker(h: HostState) -> None:
        while not cancel.is_set():
            with h.lock:
                if not h.queue:
                    return
                p = h.queue.popleft()
            outcome = outcomes[p.name]
            _carry_out(h, p, workspace, local_cpu, reporter, outcome, options, gate)
            if cancel.is_set() and not outcome.ok:
                outcome.message = "interrupted"
            elif not outcome.ok and not answers(h.client):
                # An engine that went away (a stopped dockerd, a lost ssh host) ends this
                # target only, in our words with the next step.
                outcome.message = lost_connection(
                    h.name, h.display, outcome, workspace.run_id, remote=p.remote
                )
            elif not outcome.ok and disk_full(outcome.message):
                outcome.message = full_disk(h.name, outcome, workspace.run_id)
            reporter.finish(p.name, outcome.ok, outcome.message)

    threads = [
        threading.Thread(target=worker, args=(h,), name=f"archbench-{h.name}-{slot}", daemon=True)
        for h in hosts.values()
        for slot in range(min(h.slots, len(h.queue)))
    ]
    _join(threads, cancel, gate, list(hosts.values()), workspace.run_id)
    return [outcomes[p.name] for p in plans]


def _keep_complete(
    p: TargetPlan, workspace: Workspace, o: TargetOutcome, reporter: Reporter
) -> None:
    # --resume: the target's results in this run are complete; they are its outcome.
    o.ok, o.skipped, o.message = True, True, "complete in this run; kept (--resume)"
    o.result_paths = [
        workspace.store.path_for(workspace.run_id, p.name, i) for i in range(1, p.repeat + 1)
    ]
    o.result_path = o.result_paths[0]
    reporter.finish(p.name, True, o.message)


def _carry_out(
    h: HostState,
    p: TargetPlan,
    workspace: Workspace,
    local_cpu: str,
    reporter: Reporter,
    outcome: TargetOutcome,
    options: RunOptions,
    gate: ContainerGate,
) -> None:
    # A target's own failure is its outcome's message, never raised to the worker.
    try:
        execute_target(
            h,
            p,
            workspace,
            local_cpu,
            reporter,
            outcome,
            options.build_only,
            options.rebuild,
            gate,
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


def _join(
    threads: Sequence[threading.Thread],
    cancel: threading.Event,
    gate: ContainerGate,
    hosts: Sequence[HostState],
    run_id: str,
) -> None:
    # Start the workers and wait for them; on Ctrl-C, remove every container of the
    # run on every host before KeyboardInterrupt propagates.
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
        for h in hosts:
            remove_run_containers(h.client, run_id)
        for t in threads:
            t.join(timeout=10)
        if not drained:
            # A create hung on an engine that stopped answering; it may have
            # landed since.
            for h in hosts:
                remove_run_containers(h.client, run_id)
        raise


def lost_connection(
    host: str, display: str, outcome: TargetOutcome, run_id: str, remote: bool = True
) -> str:
    """The message of a target whose engine stopped answering during it: a remote host
    lost (ssh, tcp) or this machine's Docker engine stopped; what to do next."""
    stage = outcome.stage or "its start"
    if not remote:
        return (
            f"the Docker engine on this machine ({display}) stopped answering during {stage}; "
            "the other targets' results are kept. Start it again (systemctl start docker, "
            "or dockerd as root; 'docker info' answers when it is up), then finish this "
            f"target with: invoke bench --resume {run_id}"
        )
    return (
        f"lost the connection to host {host} ({display}) during {stage}; the other "
        f"targets' results are kept. When the host answers again (ssh to it; "
        f"'docker info' there), finish this target with: invoke bench --resume {run_id}"
    )


def disk_full(message: str) -> bool:
    """True when an engine's or a build's message says its disk is full."""
    return "no space left on device" in message.lower()


def full_disk(host: str, outcome: TargetOutcome, run_id: str) -> str:
    """The message of a target whose engine ran out of disk during it, and what to do."""
    stage = outcome.stage or "its start"
    return (
        f"the disk of host {host}'s Docker engine is full (no space left on device during "
        f"{stage}); the other targets' results are kept. Free space there ('docker system "
        "df' shows what takes it; 'docker builder prune' and 'docker image prune' remove "
        f"caches and unused images), then finish this target with: invoke bench --resume "
        f"{run_id}"
    )
