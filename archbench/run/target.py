"""One target's stages on its host, from preflight to stored results.

:func:`execute_target` runs the stages of one :class:`archbench.run.planning.TargetPlan`
(emulation preflight, base, image, smoke test, harness runs, instruction counts)
on a host whose state (:class:`HostState`) its worker threads share, timing each
stage and filling in the target's :class:`TargetOutcome`. :class:`Workspace` names
where a run writes: the results store, its run id, logs and scratch space.
:func:`archbench.run.schedule.execute` schedules the targets and their hosts.

The counting stage (``--metric instructions``, :func:`count_target`) builds (or
reuses) the counting layer over the target's benchmark image
(:mod:`archbench.build.counter`), runs the harness in it with ``--count-with`` so
that the drivers run under the counting QEMU, and stores each container run as
``<target>.instructions[.repeat-<i>].json`` (``Result.metric`` ``instructions``).
The suites whose drivers archbench owns are counted (:data:`archbench.suites.COUNTED_SUITES`:
blindsig, rsa-large, sodium); suites that run foreign programs (openssl speed,
gpg, GNUnet's perf programs, Taler's helpers) are not.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import docker

from archbench import upstream as importer
from archbench.build import (
    COUNTER_IN_IMAGE,
    Builder,
    CounterTools,
    CrossBuild,
    CrossPlan,
    GnunetBuild,
    ImageSpec,
    TalerBuild,
    ensure_base,
    ensure_counter_tools,
    ensure_counting_image,
    ensure_target_image,
    pack_build_tree,
    plan_image,
    prepare_build_tree,
    prepare_cross,
    prepare_taler_tree,
    resolve_gnunet,
    resolve_taler,
    warm_cross_stage,
)
from archbench.errors import HarnessError, ImageBuildError, Interrupted
from archbench.hosts import check_emulation, check_image, engine_version
from archbench.matrix import LOCAL_HOST
from archbench.platforms import Arch
from archbench.result import Execution, Result, ResultStore, TargetInfo
from archbench.run.containers import ContainerGate, emulated_cpu, run_harness, smoke_test
from archbench.run.planning import TargetPlan
from archbench.run.progress import (
    Reporter,
    SuiteTracker,
    TimingStore,
    blindsig_adaptive,
    blindsig_labels,
    format_seconds,
    stage_key,
    suite_key,
)
from archbench.suites import COUNTED_SUITES, GNUNET_PERF


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


@dataclass(frozen=True)
class Workspace:
    """Where the pipeline writes: results store, logs and scratch space."""

    store: ResultStore
    run_id: str
    work_dir: Path
    apt_proxy: str | None = None
    """Package cache for debootstrap and image builds.

    Checked by :func:`archbench.build.cross.check_apt_proxy`.
    """
    gnunet_builds: dict[str, GnunetBuild] = field(default_factory=dict, compare=False)
    taler_builds: dict[str, TalerBuild] = field(default_factory=dict, compare=False)
    """Target name -> its prepared GNUnet source (:func:`gnunet_build`): the build pass
    and the measuring pass of one run use the same bytes, resolved once."""

    @property
    def log_dir(self) -> Path:
        """``<results>/<run-id>/logs``: bootstrap, build and harness logs."""
        return self.store.root / self.run_id / "logs"


@dataclass
class HostState:
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


def execute_target(
    h: HostState,
    p: TargetPlan,
    ws: Workspace,
    local_cpu: str,
    reporter: Reporter,
    outcome: TargetOutcome,
    build_only: bool,
    rebuild: bool,
    gate: ContainerGate | None = None,
) -> None:
    """Carry out one target on its host: preflight, base, image, smoke test, harness runs.

    Each harness container run is stored the moment it ends; with ``instructions``
    in ``p.metrics`` the counting stage follows (:func:`count_target`).
    ``outcome`` is filled in as the target goes (stage, seconds per stage, result
    paths, message); ``gate`` closed means Ctrl-C: no new stage starts.

    Raises:
        ArchbenchError: the target failed (a failed suite is a :class:`HarnessError`
            after the other suites' rows are saved); ``Interrupted`` when the gate closed.
        docker.errors.DockerException, requests.exceptions.RequestException: the
            engine failed or stopped answering (the caller names the host).
    """
    name, arch, client = p.name, p.target.arch, h.client
    outcome.message = ""
    durations = TimingStore(ws.work_dir)
    base_key = stage_key("base", p.host_name, p.target.base, arch.key)
    image_key = stage_key("image", p.host_name, p.target.profile, arch.key)

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

    builder = Builder(
        client,
        ws.work_dir,
        ws.log_dir,
        on_line,
        rebuild=rebuild,
        apt_proxy=None if p.remote else ws.apt_proxy,  # the cache is this machine's
        network_mode=p.host.build_network if p.host else None,
    )
    tools: Future[CounterTools] | None = None
    if "instructions" in p.metrics:
        # The counter tools need nothing of the target: built beside its base and image.
        tools = side_by_side(
            reporter,
            name,
            "count tools",
            builder,
            ensure_counter_tools,
            (durations, stage_key("image", p.host_name, "count-tools", "amd64"), ws.run_id),
        )
    qemu = qemu_cpu = None
    if p.emulated and not p.remote:
        # binfmt_misc of this machine matters only for the local engine; on a
        # remote host the smoke test below is the check.
        with timed("preflight"):
            qemu = check_emulation(arch).qemu_version
    gnunet_build: GnunetBuild | None = None
    taler_build: TalerBuild | None = None
    if p.archived is not None:
        # The archived image, loaded and checked by id, is run by id: no base, no build.
        with timed("image"):
            image_id = run_image = check_image(client, p.archived.entry)
        image_tag, base_tag = p.archived.entry.tag, p.archived.entry.base_image
        base_built = p.archived.entry.base_built
        if p.emulated:
            with timed("smoke"):
                smoke_test(client, image_id, arch, run_id=ws.run_id, gate=gate)
                qemu_cpu = emulated_cpu(client, image_id, arch, run_id=ws.run_id, gate=gate)
    else:
        gnunet_perf = GNUNET_PERF.name in p.suites.enabled()
        if p.gnunet.kind != "debian":
            # First: a sha256 that differs or a ref that names nothing ends the target
            # before a base is bootstrapped.
            with timed("source"):
                gnunet_build = source_build(p, ws)
            # A source build takes minutes more than the packaged library: its own estimate.
            image_key = stage_key(
                "image", p.host_name, f"{p.target.profile}+gnunet-source", arch.key
            )
        if p.taler is not None:
            with timed("taler source"):
                taler_build = taler_source_build(p, ws)
            image_key = stage_key("image", p.host_name, f"{p.target.profile}+taler", arch.key)

        def cross_base(b: Builder) -> tuple[CrossPlan | None, str]:
            # Emulated targets: the drivers are cross-compiled from the same release's
            # base for the engine's own architecture (archbench.build.cross).
            return prepare_cross(
                b,
                base_name=p.target.base,
                base=p.base,
                target_arch=arch,
                engine_arch=h.arch,
                packages=p.packages,
                emulated=p.emulated and not p.remote,
                has_recipe=p.recipe is not None,
                gnunet_perf=gnunet_perf,
                gnunet=gnunet_build,
                taler=taler_build is not None,
            )

        def cross_prefix(b: Builder, crossing: Future[tuple[CrossPlan | None, str]]) -> bool:
            # While the target's base bootstraps: the cross stage's toolchain and compile,
            # which need nothing of that base (the engine's layer cache keeps them).
            plan, build_base_id = crossing.result()
            if plan is None:
                return False
            return warm_cross_stage(
                b, plan, build_base_id, f"{name}.cross-prefix.log", gnunet_build, taler_build
            )

        with timed("base", base_key):
            # The engine's own base bootstraps beside the target's: one is mostly QEMU
            # on one core, the other downloads and unpacks natively.
            emulated_here = p.emulated and not p.remote
            crossing = warming = None
            if emulated_here:
                crossing = side_by_side(
                    reporter,
                    name,
                    "build base",
                    builder,
                    cross_base,
                    (
                        durations,
                        stage_key("base", p.host_name, p.target.base, h.arch.key),
                        ws.run_id,
                    ),
                )
                warming = side_by_side(
                    reporter,
                    name,
                    "cross prefix",
                    builder,
                    functools.partial(cross_prefix, crossing=crossing),
                    (
                        durations,
                        stage_key("image", p.host_name, "cross-prefix", arch.key),
                        ws.run_id,
                    ),
                )
            base = ensure_base(builder, p.target.base, p.base, arch)
            cross_plan, build_base_id = (
                crossing.result() if crossing is not None else cross_base(builder)
            )
        if not base.reused:
            durations.record(base_key, outcome.seconds["base"], ws.run_id)
        if p.emulated:
            with timed("smoke"):
                with h.lock:
                    first = arch not in h.smoked
                if first:
                    smoke_test(client, base.tag, arch, run_id=ws.run_id, gate=gate)
                    with h.lock:
                        h.smoked.add(arch)
                qemu_cpu = emulated_cpu(client, base.tag, arch, run_id=ws.run_id, gate=gate)

        def plan_spec(built: CrossBuild | None) -> ImageSpec:
            return plan_image(
                arch,
                p.target.profile,
                p.packages,
                base.tag,
                base.image_id,
                recipe=p.recipe,
                gnunet_perf=gnunet_perf,
                cross=built,
                gnunet=gnunet_build,
                taler=taler_build,
            )

        if taler_build is not None and p.emulated and cross_plan is None:
            # Nothing is compiled under QEMU: without a cross stage the exchange would be.
            raise ImageBuildError(
                f"{name}: the exchange (taler: source) of an emulated target is cross-compiled "
                "on an amd64 engine; this engine or profile has no cross stage (a profile with "
                "build-essential or a recipe, or an engine that is not amd64)"
            )
        with timed("image", image_key):
            if warming is not None:
                # The cross stage would build the same steps again beside the warm-up.
                with contextlib.suppress(Exception):
                    warming.result()
            spec, image_id, reused = ensure_target_image(
                builder,
                plan_spec,
                cross_plan,
                build_base_id,
                target_base=base.tag,
                name=name,
                gnunet=gnunet_build,
                taler=taler_build,
            )
        if not reused:
            durations.record(image_key, outcome.seconds["image"], ws.run_id)
        if build_only:
            outcome.message = f"image {spec.tag} ({'up to date' if reused else 'built'})"
            if tools is not None:
                # Built before anything is measured; a failure is the count stage's to
                # report (after the times are stored), not the build pass's.
                with contextlib.suppress(Exception):
                    tools.result()
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
        repeat_count=p.total_repeats or p.repeat,
        interleaved=p.interleaved,
        archive=p.archived.ref if p.archived else None,
        gnunet_source=(
            gnunet_build.provenance()
            if gnunet_build is not None
            else p.archived.entry.gnunet_source
            if p.archived is not None
            else None
        ),
        taler_source=taler_build.provenance() if taler_build is not None else None,
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
    start = p.first_repeat
    for index in range(start, start + p.repeat if "time" in p.metrics else start):
        if p.interleaved is not None:
            stage = f"round {index}"
        else:
            stage = "run" if p.repeat == 1 else f"run {index}/{p.repeat}"
        started = time.time()
        expected = durations.suite_estimates(p.host_name, name, p.suites)
        tracker = SuiteTracker(
            expected, blindsig_labels(p.suites), adaptive=blindsig_adaptive(p.suites)
        )

        def on_run_line(text: str, tracker: SuiteTracker = tracker, stage: str = stage) -> None:
            event = tracker.feed(text)
            if event is None:
                reporter.line(name, text)
            else:
                step = f"{stage} {event.suite} {event.done}/{event.total}"
                reporter.progress(name, tracker.detail(), tracker.remaining_s(), step)

        with timed(stage):
            reporter.progress(name, "", tracker.remaining_s(), stage)
            doc, stderr = run_harness(
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
                key = suite_key(p.host_name, name, suite_name, settings)
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
        paths += count_target(builder, p, run_image, image_id, ws, execution, target, timed, tools)
    outcome.result_path = paths[0]
    outcome.result_paths = paths
    outcome.message = ", ".join(str(p) for p in paths)
    if failed:
        # The rows of the suites that worked are saved; the target still fails
        # so that the exit status says something is missing.
        problems = "; ".join(f"suite {s} failed: {e}" for s, e in failed.items())
        raise HarnessError(f"{problems} (the other suites' rows are saved in {outcome.message})")


def source_build(p: TargetPlan, ws: Workspace) -> GnunetBuild:
    """``p``'s prepared GNUnet source, made once per run (:func:`prepare_gnunet`): a
    working tree edited between the build pass and the measuring pass must not make the
    measuring pass build another image.

    Raises:
        SourceError: as :func:`prepare_gnunet`.
    """
    found = ws.gnunet_builds.get(p.name)
    if found is None:
        found = ws.gnunet_builds[p.name] = prepare_gnunet(p, ws.work_dir)
    return found


def prepare_gnunet(p: TargetPlan, work_dir: Path) -> GnunetBuild:
    """Resolve ``p``'s GNUnet source and pack its build tree for the image's context.

    Downloads and git mirrors stay in ``<work>/gnunet-src``; the prepared tree is made
    in a scratch folder there and removed once packed into ``<work>/gnunet-src/packed``
    (the image's context reads it from there, streaming).

    Raises:
        SourceError: the source cannot be resolved or prepared (a sha256 that differs,
            a ref that names no commit, a tree that is not GNUnet's).
    """
    resolved = resolve_gnunet(p.gnunet, work_dir)
    scratch_root = work_dir / "gnunet-src" / "trees"
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{p.name}-", dir=scratch_root))
    try:
        tree = prepare_build_tree(resolved, scratch / "src")
        return GnunetBuild(
            resolved,
            pack_build_tree(tree, work_dir / "gnunet-src" / "packed"),
            tree.build_system,
            tree.changes,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def taler_source_build(p: TargetPlan, ws: Workspace) -> TalerBuild:
    """``p``'s prepared exchange source, made once per run (as :func:`source_build`):
    resolved (:func:`~archbench.build.resolve_taler`: sha256, ref or tree hash checked
    first), copied into a scratch folder under ``<work>/gnunet-src/trees`` and packed.

    Raises:
        SourceError: the source cannot be resolved or is not an exchange tree.
    """
    found = ws.taler_builds.get(p.name)
    if found is None:
        assert p.taler is not None
        resolved = resolve_taler(p.taler, ws.work_dir)
        scratch_root = ws.work_dir / "gnunet-src" / "trees"
        scratch_root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"{p.name}-taler-", dir=scratch_root))
        try:
            tree = prepare_taler_tree(resolved, scratch / "src")
            packed = pack_build_tree(tree, ws.work_dir / "gnunet-src" / "packed")
            found = ws.taler_builds[p.name] = TalerBuild(resolved, packed)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return found


def count_target(
    builder: Builder,
    p: TargetPlan,
    bench_tag: str,
    bench_id: str,
    ws: Workspace,
    execution: Execution,
    target: TargetInfo,
    timed: Callable[[str], AbstractContextManager[None]],
    tools: Future[CounterTools] | None = None,
) -> list[Path]:
    """Count ``p``'s rows of the counted suites ``p.repeat`` times; return the result paths.

    ``timed(stage)`` reports the stages ``count image`` and ``count`` to the
    progress display; ``builder.on_line`` gets notes and the harness's lines;
    ``execution`` is the timing run's, with the counting layer's image put in.
    ``tools``: the counter tools being built beside the target (:func:`side_by_side`);
    None: built here.

    Raises:
        BaseImageError, ImageBuildError: the counting layer cannot be built.
        HarnessError: the harness fails in the counting layer (calibration
            not exact, the driver failing under QEMU, counts that do not pair).
    """
    client = builder.client
    planned = p.suites if p.count_suites is None else p.count_suites
    enabled = list(planned.enabled())
    chosen = [name for name in enabled if name in COUNTED_SUITES]
    skipped = [name for name in enabled if name not in COUNTED_SUITES]
    if skipped:
        builder.say(
            f"instructions: {', '.join(skipped)} not counted (they run programs archbench "
            "does not own)"
        )
    if not chosen:
        builder.say(
            f"instructions: none of the counted suites ({', '.join(COUNTED_SUITES)}) is enabled"
        )
        return []
    suites = planned.only(chosen)
    with timed("count image"):
        made = tools.result() if tools is not None else None
        layer = ensure_counting_image(builder, bench_tag, bench_id, p.target.arch, made)
    paths = []
    for index in range(1, p.repeat + 1):
        with timed("count" if p.repeat == 1 else f"count {index}/{p.repeat}"):
            doc, stderr = run_harness(
                client,
                layer.tag,
                p.target.arch,
                suites,
                run_id=ws.run_id,
                cpuset=p.cpuset,
                on_line=builder.on_line,
                extra_args=[
                    "--count-with",
                    COUNTER_IN_IMAGE,
                    "--count-cpu",
                    p.count_cpu,
                ],
            )
        suffix = "" if index == 1 else f".repeat-{index}"
        log = ws.log_dir / f"{p.name}.instructions{suffix}.harness.log"
        log.write_text(stderr, encoding="utf-8")
        update: dict[str, object] = {
            "repeat_index": index,
            "image_id": layer.image_id,
            "image_tag": layer.tag,
        }
        result = Result(
            run_id=ws.run_id,
            target=target,
            execution=execution.model_copy(update=update),
            harness=doc,
            metric="instructions",
        )
        paths.append(ws.store.save(result))
    return paths


T = TypeVar("T")


SIDE_REUSED_S = 5.0
"""Side work shorter than this (s) found its images up to date: its time is no ETA."""
SIDE_QUIET_S = 2.0
"""Side work done within this (s) shows no row at all (it found everything up to date)."""


def side_by_side(
    reporter: Reporter,
    name: str,
    what: str,
    builder: Builder,
    work: Callable[[Builder], T],
    timing: tuple[TimingStore, str, str] | None = None,
) -> Future[T]:
    """Start ``work(builder)`` on a thread of its own; its result or error is the future's.

    The work shows as a row of its own, ``<name> · <what>``, with its own build lines
    (its stage, heartbeats and an ok or FAILED line), so that it does not mix with the
    target's; work done within :data:`SIDE_QUIET_S` (everything up to date) shows no row,
    unless it failed. ``timing``: (store, key, run id) of its stored duration, the ETA of
    the next build (a run that found everything up to date, under :data:`SIDE_REUSED_S`,
    keeps the last one). The thread is a daemon: Ctrl-C does not wait for a bootstrap
    to end. A failure surfaces where the target waits for the result, as if made there.
    """
    row = f"{name} · {what}"
    side = dataclasses.replace(builder, on_line=lambda text: reporter.line(row, text))
    future: Future[T] = Future()

    shown = threading.Lock()
    announced: list[bool] = []

    def announce() -> None:
        # Only work that takes a while gets a row: a warm rerun's checks say nothing.
        with shown:
            if future.done():
                return
            announced.append(True)
            reporter.stage(row, "build")
            if timing is not None:
                reporter.progress(row, "", timing[0].get(timing[1]), "build")

    def run() -> None:
        timer = threading.Timer(SIDE_QUIET_S, announce)
        timer.daemon = True
        timer.start()
        started = time.monotonic()
        try:
            value = work(side)
        except BaseException as exc:  # handed to whoever waits for it
            with shown:
                timer.cancel()
                if not announced:
                    reporter.stage(row, "build")  # a failure always shows
                reporter.finish(row, False, str(exc).splitlines()[0] if str(exc) else repr(exc))
                future.set_exception(exc)
        else:
            took = time.monotonic() - started
            if timing is not None and took >= SIDE_REUSED_S:
                timing[0].record(timing[1], took, timing[2])
            with shown:
                timer.cancel()
                if announced:
                    reporter.finish(row, True, f"ready after {format_seconds(took)}")
                future.set_result(value)

    threading.Thread(target=run, name=row, daemon=True).start()
    return future


class _Timer:
    def __init__(self, sink: dict[str, float], stage: str) -> None:
        self.sink, self.stage = sink, stage

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.sink[self.stage] = time.monotonic() - self.start
