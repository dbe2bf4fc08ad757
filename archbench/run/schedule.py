"""Carry plans out across hosts: hosts in parallel, each host's targets in its run slots.

:func:`execute` runs the targets on different hosts in parallel, the targets on one
host in that host's ``max_parallel_runs`` slots (1 by default, so benchmark runs on
one CPU never overlap). A failure of one target is recorded and the others go on;
every finished result is on disk the moment its container run ends. Ctrl-C removes
the run's containers on every host before it propagates.

A pooled target (its ``host:`` names a pool) goes to whichever of its pool's members
has a free run slot and the fewest targets in flight (:class:`_Dispatch`, the run's
one queue). When its member stops answering during it, the target is moved: put
back at the head of the queue for the pool's other members, what the lost member
had stored of it set aside under ``<run>/lost/<host>/`` (its repeats never pool with
another machine's), and measured again from its start on another member; what the
lost member finished stays. With no member left, it ends as a lost host's target
does (``--resume``).

With :attr:`RunOptions.build_first` (issue 14, "Fast") it makes two passes: a
build pass (bases and images only, ``build_jobs`` targets side by side, emulated
targets first since they take longest) and then the measuring pass, which finds
every image up to date and runs the targets in each host's run slots. Nothing is
built while anything is timed, and the builds of different targets overlap. A pooled
target is measured on the member that built it, unless that member was lost since.

:func:`is_complete` decides what ``--resume`` keeps. One target's stages are
:mod:`archbench.run.target`.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import docker
import docker.errors
import requests.exceptions

from archbench.errors import ArchbenchError, ResultsError
from archbench.hosts import answers, host_cpu_model, redact
from archbench.matrix import LOCAL_HOST, Host
from archbench.platforms import Arch
from archbench.result import ResultStore, load
from archbench.run.containers import ContainerGate, remove_run_containers
from archbench.run.planning import Pool, TargetPlan
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
    message saying so and how to resume (:func:`lost_connection`), unless it is pooled
    and another member of its pool answers: then it is measured again there (the
    module docs; :attr:`TargetOutcome.moved_from` names the lost members).
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
    # A pooled target's image is on the member that built it: it is measured there.
    built_on = {p.name: by_name[p.name].host for p in ready if p.pool is not None}
    measured = {
        o.name: o
        for o in _pass(clients, ready, workspace, host_archs, measure, reporter, None, built_on)
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
            o.moved_from = [*first.moved_from, *o.moved_from]
        outcomes.append(o)
    return outcomes


class _Dispatch:
    """The run's one queue: which host's worker takes which target next.

    A target may go to the hosts of :attr:`TargetPlan.hosts` (its one host, or its
    pool's members) that are not lost; ``placed`` names the member a pooled target
    must go to while that member is not lost (where its image was built). Otherwise
    a pooled target goes to the member with the fewest targets in flight among those
    with a free worker, so that a pool's members share the targets from the start
    (ties: whoever asks first). A target whose hosts are all lost goes to the first of
    them to ask, and fails there as a lost host's target does. Every method takes
    the one lock; a worker waits in :meth:`take` while a target may still come to it
    (one queued for another member, or one in flight that a lost member may hand on).
    """

    def __init__(
        self, plans: Sequence[TargetPlan], workers: Mapping[str, int], placed: Mapping[str, str]
    ) -> None:
        self.pending: deque[TargetPlan] = deque(plans)
        self.running: dict[str, TargetPlan] = {}
        self.busy = dict.fromkeys(workers, 0)
        """Targets in flight per host."""
        self.free = dict(workers)
        """Workers per host that carry no target and have not ended."""
        self.lost: set[str] = set()
        self.placed = dict(placed)
        self.cond = threading.Condition()

    def _fits(self, p: TargetPlan, host: str) -> bool:
        live = [n for n in p.hosts if n not in self.lost]
        if not live:
            return host in p.hosts
        if host not in live:
            return False
        if self.placed.get(p.name) in live:
            return self.placed[p.name] == host
        return not any(
            self.free[n] > 0 and self.busy[n] < self.busy[host] for n in live if n != host
        )

    def _may_come(self, host: str) -> bool:
        if any(host in p.hosts for p in self.pending):
            return True
        return host not in self.lost and any(
            p.pool is not None and host in p.hosts for p in self.running.values()
        )

    def next(self, host: str) -> TargetPlan | Literal["wait", "end"]:
        """Without waiting: the next target for a worker of ``host`` (taken, placed there),
        ``"wait"`` while one may still come to it, or ``"end"`` (the worker has ended)."""
        with self.cond:
            for p in self.pending:
                if self._fits(p, host):
                    self.pending.remove(p)
                    self.running[p.name] = p
                    self.free[host] -= 1
                    self.busy[host] += 1
                    return p.on(host)
            if self._may_come(host):
                return "wait"
            self.free[host] -= 1
            self.cond.notify_all()
            return "end"

    def take(self, host: str, cancel: threading.Event) -> TargetPlan | None:
        """The next target for a worker of ``host``, placed there, waiting while one may
        come; None: the worker ends (nothing more for it, or ``cancel`` set)."""
        with self.cond:
            while not cancel.is_set():
                got = self.next(host)
                if got == "end":
                    return None
                if got != "wait":
                    return got
                self.cond.wait(timeout=0.5)
            self.free[host] -= 1
            self.cond.notify_all()
            return None

    def done(self, host: str, p: TargetPlan) -> None:
        """``p`` ended on ``host`` (ok or not); the worker asks again."""
        with self.cond:
            self.running.pop(p.name, None)
            self.busy[host] -= 1
            self.free[host] += 1
            self.cond.notify_all()

    def lose(self, host: str, p: TargetPlan) -> bool:
        """``host`` stopped answering during ``p``: no target goes there any more. True when
        ``p`` is back in the queue for another member of its pool (else it ends lost)."""
        with self.cond:
            self.lost.add(host)
            self.running.pop(p.name, None)
            self.busy[host] -= 1
            self.free[host] += 1
            moved = p.pool is not None and any(n not in self.lost for n in p.hosts)
            if moved:
                self.placed.pop(p.name, None)
                self.pending.appendleft(p)
            self.cond.notify_all()
            return moved


def _pass(
    clients: Mapping[str, docker.DockerClient],
    plans: Sequence[TargetPlan],
    workspace: Workspace,
    host_archs: Mapping[str, Arch],
    options: RunOptions,
    reporter: Reporter,
    slots: int | None,
    placed: Mapping[str, str] | None = None,
) -> list[TargetOutcome]:
    """One pass over ``plans`` (see :func:`execute`); ``slots`` replaces every host's
    ``max_parallel_runs`` (None: the hosts' own); ``placed``: target name -> the pool
    member it goes to unless that member is lost."""
    outcomes = {p.name: TargetOutcome(p.name, ok=False, message="not started") for p in plans}
    todo: list[TargetPlan] = []
    hosts: dict[str, HostState] = {}
    for p in plans:
        if options.resume and is_complete(workspace.store, workspace.run_id, p):
            _keep_complete(p, workspace, outcomes[p.name], reporter)
            continue
        todo.append(p)
        for name in p.hosts:
            if name not in hosts:
                hosts[name] = _host_state(name, p.host_of(name), clients, host_archs, slots)
    if options.resume:
        # A container of this run may still run on a host whose connection was
        # lost; it would share the CPU with the new measurement.
        for h in hosts.values():
            remove_run_containers(h.client, workspace.run_id)
    local_cpu = host_cpu_model()
    cancel = threading.Event()
    gate = ContainerGate()
    workers = {n: min(h.slots, sum(n in p.hosts for p in todo)) for n, h in hosts.items()}
    dispatch = _Dispatch(todo, workers, placed or {})

    def worker(h: HostState) -> None:
        while (p := dispatch.take(h.name, cancel)) is not None:
            outcome = outcomes[p.name]
            outcome.host = h.name
            started = time.time()
            _carry_out(h, p, workspace, local_cpu, reporter, outcome, options, gate)
            if not cancel.is_set() and not outcome.ok and not answers(h.client):
                if dispatch.lose(h.name, p):
                    outcomes[p.name] = _moved(p, h, outcome, workspace, started, reporter)
                    continue
                # An engine that went away (a stopped dockerd, a lost ssh host) ends this
                # target only, in our words with the next step.
                outcome.message = lost_connection(
                    h.name, h.display, outcome, workspace.run_id, remote=p.remote, pool=p.pool
                )
            else:
                dispatch.done(h.name, p)
                if cancel.is_set() and not outcome.ok:
                    outcome.message = "interrupted"
                elif not outcome.ok and disk_full(outcome.message):
                    outcome.message = full_disk(h.name, outcome, workspace.run_id)
            reporter.finish(p.name, outcome.ok, outcome.message)

    threads = [
        threading.Thread(target=worker, args=(h,), name=f"archbench-{h.name}-{slot}", daemon=True)
        for h in hosts.values()
        for slot in range(workers[h.name])
    ]
    _join(threads, cancel, gate, list(hosts.values()), workspace.run_id)
    return [outcomes[p.name] for p in plans]


def _host_state(
    name: str,
    host: Host | None,
    clients: Mapping[str, docker.DockerClient],
    host_archs: Mapping[str, Arch],
    slots: int | None,
) -> HostState:
    return HostState(
        name=name,
        client=clients[name],
        arch=host_archs[name],
        slots=slots or (host.max_parallel_runs if host else 1),
        display=host.display if host else LOCAL_HOST,
    )


def _moved(
    p: TargetPlan,
    h: HostState,
    lost: TargetOutcome,
    workspace: Workspace,
    started: float,
    reporter: Reporter,
) -> TargetOutcome:
    """The fresh outcome of a pooled target taken off lost host ``h``, after what ``h``
    stored of it since ``started`` (epoch s) is set aside under ``<run>/lost/<host>/``.

    The target is measured again from its start on another member; a repeat of the
    lost member left beside the new member's would pool two machines' samples.
    """
    aside = workspace.store.root / workspace.run_id / "lost" / h.name
    for path in _target_files(workspace, p):
        try:
            if path.stat().st_mtime >= started:
                aside.mkdir(parents=True, exist_ok=True)
                os.replace(path, aside / path.name)
        except FileNotFoundError:
            continue
    stage = lost.stage or "its start"
    assert p.pool is not None, "only pooled targets move"
    reporter.stage(
        p.name,
        f"moved: waiting for another host of pool {p.pool.name} (host {h.name} stopped "
        f"answering during {stage})",
    )
    return TargetOutcome(
        p.name, ok=False, message="not started", moved_from=[*lost.moved_from, h.name]
    )


def _target_files(workspace: Workspace, p: TargetPlan) -> list[Path]:
    """Where ``p``'s container runs (time and counts) in this run are stored."""
    store, run_id = workspace.store, workspace.run_id
    first = p.first_repeat
    times = [store.path_for(run_id, p.name, i) for i in range(first, first + p.repeat)]
    counts = [store.path_for(run_id, p.name, i, "instructions") for i in range(1, p.repeat + 1)]
    return times + counts


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
    host: str,
    display: str,
    outcome: TargetOutcome,
    run_id: str,
    remote: bool = True,
    pool: Pool | None = None,
) -> str:
    """The message of a target whose engine stopped answering during it: a remote host
    lost (ssh, tcp) or this machine's Docker engine stopped; what to do next. ``pool``:
    the target's pool, every member of which was lost."""
    stage = outcome.stage or "its start"
    if pool is not None:
        others = [n for n, _ in pool.members if n != host]
        lost = f" and no other host of pool {pool.name} answers ({', '.join(others)})"
        stage = f"{stage}{lost if others else ''}"
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
