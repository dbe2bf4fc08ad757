"""Plan and drive the pipeline: matrix -> bases -> images -> run -> results.

:func:`plan` is pure: it turns the selected matrix targets into a list of
:class:`TargetPlan` (host, native or emulated, base, packages) from the
architectures the hosts' engines report, so it can be printed and tested.
:func:`execute` carries the plan out: targets on different hosts in
parallel, targets on one host in that host's ``max_parallel_runs`` slots
(1 by default, so benchmark runs on one CPU never overlap). A failure of one
target is recorded and the others go on; every finished result is on disk
the moment its container run ends. Ctrl-C removes the run's containers on
every host before it propagates.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
from pydantic import ValidationError

from archbench import (
    archiver,
    bases,
    count_stage,
    counting,
    cross,
    emulated_defaults,
    emulation,
    engine,
    image_stage,
    images,
    importer,
    messages,
    run,
    timings,
)
from archbench.archive import ArchivedImage
from archbench.engine import engine_version, host_cpu_model
from archbench.errors import (
    ArchbenchError,
    HarnessError,
    Interrupted,
    MatrixError,
    ResultsError,
)
from archbench.matrix import LOCAL_HOST, Base, BlindsigSuite, Host, Matrix, Recipe, Suites, Target
from archbench.platforms import Arch, needs_emulation
from archbench.progress import Reporter, SilentReporter
from archbench.results import Execution, Result, ResultStore, TargetInfo, load
from archbench.run_options import RunOptions
from archbench.suite_progress import SuiteTracker, blindsig_labels, format_seconds


@dataclass(frozen=True)
class TargetPlan:
    """What will be done for one target, decided before anything runs."""

    target: Target
    base: Base
    packages: tuple[str, ...]
    emulated: bool
    suites: Suites
    """The suites to run (only enabled ones), command-line overrides applied."""
    cpuset: str | None = None
    """CPUs to pin the container to; from the target, overridden by ``--cpuset``."""
    cpus: float | None = None
    """CPU quota of the container (Docker's ``--cpus``); from the target, overridden by
    ``--cpus``; None: no quota."""
    repeat: int = 1
    """Independent container runs (fresh process each) of the harness."""
    host_name: str = LOCAL_HOST
    host: Host | None = None
    """The matrix host (None: the environment's engine)."""
    recipe: Recipe | None = None
    """Build steps of the profile beyond its packages (``taler-helper``)."""
    archived: ArchivedImage | None = None
    """``--from-archive``: run this loaded image; nothing is bootstrapped or built."""
    emulated_settings: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """Suite -> setting -> value that ``emulated_defaults`` changed for this emulated target."""
    metrics: tuple[str, ...] = ("time",)
    """``time`` and/or ``instructions`` (``--metric``, else the matrix's ``metrics``)."""
    count_cpu: str = "max"
    """QEMU CPU model for instruction counts (target ``cpu`` or the arch's default)."""
    count_suites: Suites | None = None
    """Suites the counting stage runs (None: ``suites``). Counting always runs under
    QEMU, so for a native target these are ``suites`` with ``emulated_defaults``
    applied (keys the target or the command line set keep their values)."""

    @property
    def name(self) -> str:
        """The target's name."""
        return self.target.name

    @property
    def remote(self) -> bool:
        """True when the target runs on a host named in ``hosts``."""
        return self.host is not None


@dataclass
class TargetOutcome:
    """How one target ended; ``seconds`` maps stage name to wall time in s."""

    name: str
    ok: bool
    message: str
    result_path: Path | None = None
    result_paths: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    skipped: bool = False
    """True when ``--resume`` found the target's results complete and kept them."""
    run_windows: list[tuple[float, float]] = field(default_factory=list)
    """Wall-clock (epoch s) start and end of each harness container run."""
    stage: str = ""
    """The stage the target was in last (``base``, ``image``, ``run``...)."""


def plan(
    matrix: Matrix,
    targets: Sequence[Target],
    host_archs: Mapping[str, Arch],
    overrides: dict[str, object] | None = None,
    *,
    repeat: int = 1,
    cpuset: str | None = None,
    suites: Sequence[str] = (),
    metrics: Sequence[str] = (),
    cpus: float | None = None,
) -> list[TargetPlan]:
    """Plan ``targets`` given the native architecture of each host's engine.

    ``host_archs`` maps host names (``local`` and keys of ``hosts``) to what
    their engines report. On the local engine emulation is derived from the
    architectures (and can be forced); on a named host a target of another
    architecture must ask for emulation with ``emulate: true``: native means
    native, never a silent fall-back to QEMU. ``overrides`` replaces suite
    parameters for this invocation (``iterations``, ``repetitions``,
    ``rsa_bits``, ``warmup``, ``max_time``); ``repeat`` is the number of
    independent container runs per target; ``cpuset`` pins every container
    (else the target's own), ``cpus`` gives every container that CPU quota (else the
    target's own); ``suites`` runs only these suites (``--suite``),
    with the target's settings for them or the suite's defaults; ``metrics``
    (``--metric``) replaces the matrix's ``metrics``.

    Raises:
        MatrixError: a target cannot run natively where it is placed, a target
            has no suite, an override is invalid, or ``repeat`` < 1.
    """
    if repeat < 1:
        raise MatrixError(f"--repeat must be at least 1, got {repeat}")
    plans = []
    for t in targets:
        engine_arch = host_archs[t.host]
        host = matrix.host(t.host)
        if host is not None and t.arch is not engine_arch and t.emulate is not True:
            raise MatrixError(
                f"target {t.name}: host {t.host} runs {engine_arch.key}, not {t.arch.key}, so "
                f"{t.name} cannot run natively there. Move it to a {t.arch.key} host, or add "
                "'emulate: true' to measure it under QEMU on that host (labelled emulated)"
            )
        try:
            emulated = needs_emulation(t.arch, engine_arch, t.emulate)
        except ValueError as exc:
            raise MatrixError(f"target {t.name}: {exc}") from exc
        chosen = t.suites.only(suites) if suites else t.suites
        adjusted: dict[str, dict[str, object]] = {}
        if emulated:
            chosen, adjusted = emulated_defaults.apply(
                chosen, matrix.emulated_defaults, matrix.explicit_suite_keys(t.name)
            )
        enabled = chosen.enabled()
        if not enabled:
            raise MatrixError(
                f"target {t.name}: no suite enabled; add 'suites: {{blindsig: {{}}}}' "
                "or pass --suite"
            )
        blindsig = enabled.get("blindsig")
        if overrides and isinstance(blindsig, BlindsigSuite):
            try:
                blindsig = BlindsigSuite.model_validate({**blindsig.model_dump(), **overrides})
            except ValidationError as exc:
                raise MatrixError(f"command-line override: {messages.describe(exc)}") from exc
        elif overrides:
            raise MatrixError(
                "--iterations, --repetitions, --rsa-bits, --warmup and --max-time set the "
                f"blindsig suite, which this run of {t.name} does not include; set the other "
                "suites' budgets in matrix.yml"
            )
        chosen = Suites.model_validate(
            {name: settings.model_dump() for name, settings in enabled.items()}
            | ({"blindsig": blindsig.model_dump()} if blindsig is not None else {})
        )
        count_suites = None
        if not emulated and "instructions" in (metrics or matrix.metrics):
            keep = dict(matrix.explicit_suite_keys(t.name))
            keep["blindsig"] = keep.get("blindsig", frozenset()) | frozenset(overrides or {})
            count_suites, _ = emulated_defaults.apply(chosen, matrix.emulated_defaults, keep)
        plans.append(
            TargetPlan(
                target=t,
                base=matrix.bases[t.base],
                packages=matrix.profiles[t.profile].packages,
                recipe=matrix.profiles[t.profile].recipe,
                emulated=emulated,
                suites=chosen,
                cpuset=cpuset or t.cpuset,
                cpus=cpus if cpus is not None else t.cpus,
                repeat=repeat,
                host_name=t.host,
                host=host,
                emulated_settings=adjusted,
                metrics=tuple(metrics or matrix.metrics),
                count_cpu=counting.cpu_model(t.arch, t.cpu),
                count_suites=count_suites,
            )
        )
    return plans


@dataclass(frozen=True)
class Workspace:
    """Where the pipeline writes: results store, logs and scratch space."""

    store: ResultStore
    run_id: str
    work_dir: Path
    apt_proxy: str | None = None
    """Package cache for debootstrap and image builds (:func:`archbench.cross.check_apt_proxy`)."""

    @property
    def log_dir(self) -> Path:
        """``<results>/<run-id>/logs``: bootstrap, build and harness logs."""
        return self.store.root / self.run_id / "logs"


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


@dataclass
class _Host:
    """Per-host state shared by that host's worker threads."""

    name: str
    client: docker.DockerClient
    arch: Arch
    slots: int
    queue: deque[TargetPlan]
    lock: threading.Lock = field(default_factory=threading.Lock)
    smoked: set[Arch] = field(default_factory=set)
    display: str = LOCAL_HOST
    """The endpoint without user names (``ssh://box:22``), for messages."""


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

    ``options``: build only, rebuild, resume (:class:`archbench.run_options.RunOptions`;
    None: all off). ``slots`` replaces every host's ``max_parallel_runs`` (the build pass of
    :func:`archbench.schedule.build_then_measure` builds several targets side by side).

    ``clients`` and ``host_archs`` are keyed by host name. With ``resume``,
    targets whose results in this run are complete (:func:`is_complete`)
    are kept and not measured again. Returns one :class:`TargetOutcome` per
    plan, in plan order. A target's own failure is in its outcome, never
    raised; a remote target whose host stopped answering ends with a message
    saying so and how to resume (:func:`lost_connection`).
    ``KeyboardInterrupt`` propagates after every container of this run is
    removed on every host (no new one can be created from then on:
    :class:`archbench.run.ContainerGate`); finished results stay on disk.
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
                outcome.message = f"host {h.name}: {engine.redact(str(exc))}"
            except Exception as exc:
                # A worker that died would leave "not started". The SDK's ssh
                # transport can fail with bare OSError/ValueError
                # when its ssh process is gone; the target must say it failed.
                outcome.message = f"host {h.name}: {type(exc).__name__}: {engine.redact(str(exc))}"
            if cancel.is_set() and not outcome.ok:
                outcome.message = "interrupted"
            elif not outcome.ok and p.remote and not engine.answers(h.client):
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


def _execute_one(
    h: _Host,
    p: TargetPlan,
    ws: Workspace,
    local_cpu: str,
    reporter: Reporter,
    outcome: TargetOutcome,
    build_only: bool,
    rebuild: bool,
    gate: run.ContainerGate | None = None,
) -> None:
    name, arch, client = p.name, p.target.arch, h.client
    outcome.message = ""
    durations = timings.TimingStore(ws.work_dir)
    base_key = timings.stage_key("base", p.host_name, p.target.base, arch.key)
    image_key = timings.stage_key("image", p.host_name, p.target.profile, arch.key)

    def on_line(text: str) -> None:
        reporter.line(name, text)

    def timed(stage: str, eta_key: str | None = None) -> _Timer:
        if gate is not None and gate.closed:
            raise Interrupted("interrupted")
        outcome.stage = stage
        reporter.stage(name, stage)
        if eta_key is not None:
            last = durations.get(eta_key)
            said = f"last build took {format_seconds(last)}" if last is not None else "first build"
            reporter.progress(
                name, f"{stage}: reused if up to date, else built ({said})", last, stage
            )
        return _Timer(outcome.seconds, stage)

    qemu = qemu_cpu = None
    if p.emulated and not p.remote:
        # binfmt_misc of this machine matters only for the local engine; on a
        # remote host the smoke test below is the check.
        with timed("preflight"):
            qemu = emulation.check(arch).qemu_version
    if p.archived is not None:
        # The archived image, loaded and checked by id, is run by id: no base, no build.
        with timed("image"):
            image_id = run_image = archiver.check_image(client, p.archived.entry)
        image_tag, base_tag = p.archived.entry.tag, p.archived.entry.base_image
        base_built = p.archived.entry.base_built
        if p.emulated:
            with timed("smoke"):
                run.smoke_test(client, image_id, arch, run_id=ws.run_id, gate=gate)
                qemu_cpu = run.emulated_cpu(client, image_id, arch, run_id=ws.run_id, gate=gate)
    else:
        gnunet_perf = "gnunet-perf" in p.suites.enabled()
        proxy = None if p.remote else ws.apt_proxy  # the cache is this machine's
        with timed("base", base_key):
            base = bases.ensure_base(
                client,
                p.target.base,
                p.base,
                arch,
                work_dir=ws.work_dir,
                log_dir=ws.log_dir,
                on_line=on_line,
                rebuild=rebuild,
                apt_proxy=proxy,
            )
            # Emulated targets: the drivers are cross-compiled from the same release's
            # base for the engine's own architecture (archbench.cross).
            cross_plan, build_base_id = image_stage.prepare_cross(
                client,
                base_name=p.target.base,
                base=p.base,
                target_arch=arch,
                engine_arch=h.arch,
                packages=p.packages,
                emulated=p.emulated and not p.remote,
                has_recipe=p.recipe is not None,
                gnunet_perf=gnunet_perf,
                work_dir=ws.work_dir,
                log_dir=ws.log_dir,
                on_line=on_line,
                apt_proxy=proxy,
            )
        if not base.reused:
            durations.record(base_key, outcome.seconds["base"], ws.run_id)
        if p.emulated:
            with timed("smoke"):
                with h.lock:
                    first = arch not in h.smoked
                if first:
                    run.smoke_test(client, base.tag, arch, run_id=ws.run_id, gate=gate)
                    with h.lock:
                        h.smoked.add(arch)
                qemu_cpu = run.emulated_cpu(client, base.tag, arch, run_id=ws.run_id, gate=gate)

        def plan_spec(built: cross.CrossBuild | None) -> images.ImageSpec:
            return images.plan_image(
                arch,
                p.target.profile,
                p.packages,
                base.tag,
                base.image_id,
                recipe=p.recipe,
                gnunet_perf=gnunet_perf,
                cross=built,
            )

        with timed("image", image_key):
            spec, image_id, reused = image_stage.ensure_target_image(
                client,
                plan_spec,
                cross_plan,
                build_base_id,
                target_base=base.tag,
                work_dir=ws.work_dir,
                log_path=ws.log_dir / f"{name}.build.log",
                on_line=on_line,
                rebuild=rebuild,
                network_mode=p.host.build_network if p.host else None,
                apt_proxy=proxy,
            )
        if not reused:
            durations.record(image_key, outcome.seconds["image"], ws.run_id)
        if build_only:
            outcome.message = f"image {spec.tag} ({'up to date' if reused else 'built'})"
            return
        image_tag = run_image = spec.tag
        base_tag, base_built = base.tag, base.built or None
    info = client.info()
    execution = Execution(
        emulated=p.emulated,
        host_arch=h.arch.key,
        host_cpu=local_cpu if not p.remote else "",
        qemu_version=qemu,
        qemu_cpu=qemu_cpu,
        image_id=image_id,
        image_tag=image_tag,
        image_digest=next(iter(client.images.get(image_id).attrs.get("RepoDigests") or []), None),
        base_image=base_tag,
        base_built=base_built,
        docker_host=f"{h.name} ({p.host.display})" if p.host else LOCAL_HOST,
        engine_version=engine_version(client),
        host_kernel=str(info.get("KernelVersion") or "") or None,
        host_parallel_runs=h.slots,
        cpuset=p.cpuset,
        cpus=p.cpus,
        repeat_count=p.repeat,
        archive=p.archived.ref if p.archived else None,
    )
    target = TargetInfo(
        name=name,
        arch=arch.key,
        platform=arch.platform,
        base=p.target.base,
        profile=p.target.profile,
    )
    ws.log_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    failed: dict[str, str] = {}
    for index in range(1, p.repeat + 1 if "time" in p.metrics else 1):
        stage = "run" if p.repeat == 1 else f"run {index}/{p.repeat}"
        started = time.time()
        expected = durations.suite_estimates(p.host_name, name, p.suites)
        tracker = SuiteTracker(expected, blindsig_labels(p.suites))

        def on_run_line(text: str, tracker: SuiteTracker = tracker, stage: str = stage) -> None:
            event = tracker.feed(text)
            if event is None:
                reporter.line(name, text)
            else:
                step = f"{stage} {event.suite} {event.done}/{event.total}"
                reporter.progress(name, tracker.detail(), tracker.remaining_s(), step)

        with timed(stage):
            reporter.progress(name, "", tracker.remaining_s(), stage)
            doc, stderr = run.run_harness(
                client,
                run_image,
                arch,
                p.suites,
                run_id=ws.run_id,
                cpuset=p.cpuset,
                cpus=p.cpus,
                on_line=on_run_line,
                gate=gate,
            )
        outcome.run_windows.append((started, time.time()))
        for suite_name, suite_run in doc.suites.items():
            settings = p.suites.get(suite_name)
            if settings is not None and not suite_run.error and suite_run.duration_s is not None:
                key = timings.suite_key(p.host_name, name, suite_name, settings)
                durations.record(key, suite_run.duration_s, ws.run_id)
        # Taler's helper benchmarks and GNUnet's perf programs print text; one parser
        # (the importer's) reads it.
        doc = importer.add_gnunet_perf_rows(importer.add_taler_helper_rows(doc))
        failed.update({s: run.error for s, run in doc.suites.items() if run.error})
        suffix = "" if index == 1 else f".repeat-{index}"
        (ws.log_dir / f"{name}{suffix}.harness.log").write_text(stderr, encoding="utf-8")
        update: dict[str, object] = {"repeat_index": index}
        if p.remote:
            # Only the engine's own CPU can say what it is: inside the
            # container /proc/cpuinfo is the remote host's.
            update["host_cpu"] = doc.setup.cpu_model
        result = Result(
            run_id=ws.run_id,
            target=target,
            execution=execution.model_copy(update=update),
            harness=doc,
        )
        # Each container run is stored as soon as it ends: an interruption
        # later loses nothing already measured.
        paths.append(ws.store.save(result))
    if "instructions" in p.metrics:
        paths += count_stage.count_target(
            client, p, run_image, image_id, ws, execution, target, timed, on_line
        )
    outcome.result_path = paths[0]
    outcome.result_paths = paths
    outcome.message = ", ".join(str(p) for p in paths)
    if failed:
        # The rows of the suites that worked are saved; the target still fails
        # so that the exit status says something is missing.
        problems = "; ".join(f"suite {s} failed: {e}" for s, e in failed.items())
        raise HarnessError(f"{problems} (the other suites' rows are saved in {outcome.message})")


class _Timer:
    def __init__(self, sink: dict[str, float], stage: str) -> None:
        self.sink, self.stage = sink, stage

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.sink[self.stage] = time.monotonic() - self.start
