"""One target's run on its host as a list of steps, from preflight to stored results.

:func:`execute_target` runs one :class:`archbench.run.planning.TargetPlan` on a host
whose state (:class:`HostState`) its worker threads share. Its work is planned first
as a list of :class:`Step` (:func:`plan_steps`: preflight, source, base, smoke,
image, the harness runs, the counting stages), each a function of one
:class:`TargetContext`; :func:`run_steps` runs them, announcing each stage to the
progress display and timing it into the target's :class:`TargetOutcome`, so that
the steps themselves never touch the stage bookkeeping. What differs between a
native, an emulated and a remote target is the target's
:class:`archbench.run.kinds.TargetKind`. :class:`Workspace` names where a run
writes: the results store, its run id, logs and scratch space.
:func:`archbench.run.schedule.execute` schedules the targets and their hosts.

The counting stages (``--metric instructions``) build (or reuse) the counting layer
over the target's benchmark image (:func:`build_counting_layer`,
:mod:`archbench.images.counter`), run the harness in it with ``--count-with`` so that
the drivers run under the counting QEMU (:func:`count_once`), and store each container
run as ``<target>.instructions[.repeat-<i>].json`` (``Result.metric`` ``instructions``).
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
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import docker

from archbench import upstream as importer
from archbench.errors import HarnessError, ImageBuildError, Interrupted
from archbench.hosts import check_emulation, check_image, engine_version
from archbench.images import (
    COUNTER_IN_IMAGE,
    BaseImage,
    Builder,
    CounterTools,
    CountingImage,
    CrossBuild,
    CrossPlan,
    GnunetBuild,
    ImageSpec,
    TalerBuild,
    build_incremental,
    ensure_base,
    ensure_counter_tools,
    ensure_counting_image,
    ensure_image,
    ensure_target_image,
    harness_sha256,
    incremental_applies,
    plan_image,
    plan_toolchain,
    prepare_cross,
    warm_cross_stage,
)
from archbench.matrix import LOCAL_HOST
from archbench.platforms import Arch
from archbench.result import Execution, Result, ResultStore, TargetInfo
from archbench.run.containers import ContainerGate, emulated_cpu, run_harness, smoke_test
from archbench.run.kinds import TargetKind, kind_of
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
from archbench.run.reuse import count_definition
from archbench.sources import (
    pack_build_tree,
    prepare_build_tree,
    prepare_taler_tree,
    resolve_gnunet,
    resolve_taler,
)
from archbench.suites import COUNTED_SUITES, GNUNET_PERF, Suites


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
    host: str = ""
    """The host the target ran on last (a pool's member, for a pooled target)."""
    moved_from: list[str] = field(default_factory=list)
    """Pool members that stopped answering during the target, in order; it was measured
    again from its start on another member (:mod:`archbench.run.schedule`)."""


@dataclass(frozen=True)
class Workspace:
    """Where the pipeline writes: results store, logs and scratch space."""

    store: ResultStore
    run_id: str
    work_dir: Path
    apt_proxy: str | None = None
    """Package cache for debootstrap and image builds.

    Checked by :func:`archbench.images.cross.check_apt_proxy`.
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
    lock: threading.Lock = field(default_factory=threading.Lock)
    smoked: set[Arch] = field(default_factory=set)
    display: str = LOCAL_HOST
    """The endpoint without user names (``ssh://box:22``), for messages."""


@dataclass
class TargetContext:
    """What one target's steps share: the target's givens, then what the steps make.

    The first block is set by :func:`execute_target`; the rest starts empty and is
    filled in by the steps in their order (a step reads only what an earlier step of
    the same list wrote: :func:`plan_steps` decides that order).
    """

    host: HostState
    plan: TargetPlan
    ws: Workspace
    reporter: Reporter
    outcome: TargetOutcome
    kind: TargetKind
    builder: Builder
    durations: TimingStore
    local_cpu: str
    gate: ContainerGate | None
    image_key: str
    """The stored-duration key of the image stage; a source build names its own."""

    reused: bool = False
    """Set by a stage with an estimate: it found its image up to date (no time stored)."""
    tools: Future[CounterTools] | None = None
    qemu: str | None = None
    qemu_cpu: str | None = None
    gnunet_build: GnunetBuild | None = None
    taler_build: TalerBuild | None = None
    base: BaseImage | None = None
    warming: Future[bool] | None = None
    cross_plan: CrossPlan | None = None
    build_base_id: str = ""
    spec: ImageSpec | None = None
    image_id: str = ""
    image_tag: str = ""
    run_image: str = ""
    """What the harness runs: the image's tag, or an archived image's id."""
    base_tag: str | None = None
    base_built: str | None = None
    execution: Execution | None = None
    target: TargetInfo | None = None
    count_suites: Suites | None = None
    layer: CountingImage | None = None
    paths: list[Path] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    """Suite -> its error, of the suites that failed in a run."""

    @property
    def name(self) -> str:
        """The target's name, the row of the progress display."""
        return self.plan.name

    @property
    def arch(self) -> Arch:
        """The target's architecture."""
        return self.plan.target.arch


@dataclass(frozen=True)
class Step:
    """One step of a target's run: ``do(ctx)`` under a stage of the progress display.

    ``stage`` None: bookkeeping between stages (nothing shown, no time taken, no
    Ctrl-C check). ``estimate``: the key of the stage's stored duration, read when the
    stage starts (its last time is the ETA shown) and written when the stage built
    something (``ctx.reused`` false).
    """

    stage: str | None
    do: Callable[[TargetContext], None]
    estimate: Callable[[TargetContext], str] | None = None


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

    The steps are planned first (:func:`plan_steps`), then run in order by
    :func:`run_steps`. Each harness container run is stored the moment it ends; with
    ``instructions`` in ``p.metrics`` the counting stages follow. ``outcome`` is filled
    in as the target goes (stage, seconds per stage, result paths, message); ``gate``
    closed means Ctrl-C: no new stage starts.

    Raises:
        ArchbenchError: the target failed (a failed suite is a :class:`HarnessError`
            after the other suites' rows are saved); ``Interrupted`` when the gate closed.
        docker.errors.DockerException, requests.exceptions.RequestException: the
            engine failed or stopped answering (the caller names the host).
    """
    outcome.message = ""
    kind = kind_of(p)
    builder = Builder(
        h.client,
        ws.work_dir,
        ws.log_dir,
        lambda text: reporter.line(p.name, text),
        rebuild=rebuild,
        apt_proxy=kind.apt_proxy(ws.apt_proxy),
        network_mode=p.host.build_network if p.host else None,
    )
    ctx = TargetContext(
        host=h,
        plan=p,
        ws=ws,
        reporter=reporter,
        outcome=outcome,
        kind=kind,
        builder=builder,
        durations=TimingStore(ws.work_dir),
        local_cpu=local_cpu,
        gate=gate,
        image_key=stage_key("image", p.host_name, p.target.profile, p.target.arch.key),
    )
    run_steps(plan_steps(p, kind, build_only), ctx)


def plan_steps(p: TargetPlan, kind: TargetKind, build_only: bool) -> list[Step]:
    """The steps of ``p``'s run, in order, decided from the plan before anything runs.

    An archived image (``--from-archive``) is loaded and run by id: no source, base or
    build; otherwise the image is built (``build_only``: the steps end there). Then the
    harness runs (``time`` in ``p.metrics``: one per repeat, or per round when
    interleaved), the counting stages (``instructions``) and the results' summary.
    """
    steps: list[Step] = []
    if "instructions" in p.metrics:
        steps.append(Step(None, start_counter_tools))
    if kind.checks_binfmt:
        steps.append(Step("preflight", check_binfmt))
    if p.archived is not None:
        steps.append(Step("image", load_archived))
        if kind.emulated:
            steps.append(Step("smoke", smoke_archived))
    else:
        steps += _build_steps(p, kind)
        if build_only:
            return [*steps, Step(None, end_build_only)]
    steps.append(Step(None, describe))
    start = p.first_repeat
    for index in range(start, start + p.repeat if "time" in p.metrics else start):
        if p.interleaved is not None:
            stage = f"round {index}"
        else:
            stage = "run" if p.repeat == 1 else f"run {index}/{p.repeat}"
        steps.append(Step(stage, functools.partial(run_once, index=index, stage=stage)))
    if "instructions" in p.metrics:
        steps += _count_steps(p)
    steps.append(Step(None, summarise))
    return steps


def _build_steps(p: TargetPlan, kind: TargetKind) -> list[Step]:
    steps: list[Step] = []
    if p.gnunet.kind != "debian":
        # First: a sha256 that differs or a ref that names nothing ends the target
        # before a base is bootstrapped.
        steps.append(Step("source", gnunet_source))
    if p.taler is not None:
        steps.append(Step("taler source", taler_source))
    base_key = stage_key("base", p.host_name, p.target.base, p.target.arch.key)
    base = bootstrap_bases if kind.cross_compiles else bootstrap_base
    steps.append(Step("base", base, lambda _: base_key))
    if kind.emulated:
        steps.append(Step("smoke", smoke_base))
    if p.taler is not None and kind.emulated:
        steps.append(Step(None, check_taler_cross))
    steps.append(Step("image", build_image, lambda ctx: ctx.image_key))
    return steps


def _count_steps(p: TargetPlan) -> list[Step]:
    planned = p.suites if p.count_suites is None else p.count_suites
    if not any(name in COUNTED_SUITES for name in planned.enabled()):
        return [Step(None, choose_counted)]
    counts = [
        Step(
            "count" if p.repeat == 1 else f"count {index}/{p.repeat}",
            functools.partial(count_once, index=index),
        )
        for index in range(1, p.repeat + 1)
    ]
    return [Step(None, choose_counted), Step("count image", build_counting_layer), *counts]


def run_steps(steps: Sequence[Step], ctx: TargetContext) -> None:
    """Run ``steps`` in order; announce each stage to the progress display and time it.

    A stage starts only while the gate is open; its wall time (s) goes to
    ``ctx.outcome.seconds`` even when it fails; a stage with an estimate announces its
    last time and stores its own when it built something.

    Raises:
        Interrupted: the gate closed before a stage started.
        ArchbenchError, docker.errors.DockerException: as the failing step.
    """
    for step in steps:
        if step.stage is None:
            step.do(ctx)
            continue
        key = step.estimate(ctx) if step.estimate is not None else None
        _announce(ctx, step.stage, key)
        ctx.reused = False
        started = time.monotonic()
        try:
            step.do(ctx)
        finally:
            ctx.outcome.seconds[step.stage] = time.monotonic() - started
        if key is not None and not ctx.reused:
            ctx.durations.record(key, ctx.outcome.seconds[step.stage], ctx.ws.run_id)


def _announce(ctx: TargetContext, stage: str, key: str | None) -> None:
    if ctx.gate is not None and ctx.gate.closed:
        raise Interrupted("interrupted")
    ctx.outcome.stage = stage
    ctx.reporter.stage(ctx.name, stage)
    if key is not None:
        last = ctx.durations.get(key)
        said = f"last build took {format_seconds(last)}" if last is not None else "first build"
        ctx.reporter.progress(
            ctx.name, f"{stage}: reused if up to date, else built ({said})", last, stage
        )


def start_counter_tools(ctx: TargetContext) -> None:
    """Start building the counter tools beside the target: they need nothing of it."""
    key = stage_key("image", ctx.plan.host_name, "count-tools", "amd64")
    ctx.tools = side_by_side(
        ctx.reporter,
        ctx.name,
        "count tools",
        ctx.builder,
        ensure_counter_tools,
        (ctx.durations, key, ctx.ws.run_id),
    )


def check_binfmt(ctx: TargetContext) -> None:
    """``preflight``: this machine's binfmt_misc runs the target's architecture."""
    ctx.qemu = check_emulation(ctx.arch).qemu_version


def load_archived(ctx: TargetContext) -> None:
    """``image``: the archived image, loaded and checked by id, is run by id."""
    archived = ctx.plan.archived
    assert archived is not None, "planned for archived targets only"
    entry = archived.entry
    ctx.image_id = ctx.run_image = check_image(ctx.host.client, entry)
    ctx.image_tag, ctx.base_tag, ctx.base_built = entry.tag, entry.base_image, entry.base_built


def smoke_archived(ctx: TargetContext) -> None:
    """``smoke``: the archived image runs under QEMU; QEMU's CPU model is noted."""
    client, run_id = ctx.host.client, ctx.ws.run_id
    smoke_test(client, ctx.image_id, ctx.arch, run_id=run_id, gate=ctx.gate)
    ctx.qemu_cpu = emulated_cpu(client, ctx.image_id, ctx.arch, run_id=run_id, gate=ctx.gate)


def gnunet_source(ctx: TargetContext) -> None:
    """``source``: the GNUnet source resolved and packed (:func:`source_build`)."""
    p = ctx.plan
    ctx.gnunet_build = source_build(p, ctx.ws)
    # A source build takes minutes more than the packaged library: its own estimate.
    profile = f"{p.target.profile}+gnunet-source"
    ctx.image_key = stage_key("image", p.host_name, profile, ctx.arch.key)


def taler_source(ctx: TargetContext) -> None:
    """``taler source``: the exchange's source resolved and packed."""
    p = ctx.plan
    ctx.taler_build = taler_source_build(p, ctx.ws)
    ctx.image_key = stage_key("image", p.host_name, f"{p.target.profile}+taler", ctx.arch.key)


def bootstrap_base(ctx: TargetContext) -> None:
    """``base``: the target's base, bootstrapped or reused, and the cross plan (for a
    kind that does not cross-compile: none, unless the profile builds drivers natively)."""
    p = ctx.plan
    ctx.base = ensure_base(ctx.builder, p.target.base, p.base, ctx.arch)
    ctx.cross_plan, ctx.build_base_id = _cross_base(ctx, ctx.builder)
    ctx.reused = ctx.base.reused


def bootstrap_bases(ctx: TargetContext) -> None:
    """``base`` of a kind that cross-compiles: the target's base, and the engine's own
    base bootstrapped beside it (one is mostly QEMU on one core, the other downloads and
    unpacks natively), with the cross stage's toolchain warming up beside both."""
    p, h = ctx.plan, ctx.host
    engine_base = stage_key("base", p.host_name, p.target.base, h.arch.key)
    crossing = side_by_side(
        ctx.reporter,
        ctx.name,
        "build base",
        ctx.builder,
        functools.partial(_cross_base, ctx),
        (ctx.durations, engine_base, ctx.ws.run_id),
    )
    prefix = stage_key("image", p.host_name, "cross-prefix", ctx.arch.key)
    ctx.warming = side_by_side(
        ctx.reporter,
        ctx.name,
        "cross prefix",
        ctx.builder,
        functools.partial(_cross_prefix, ctx, crossing=crossing),
        (ctx.durations, prefix, ctx.ws.run_id),
    )
    ctx.base = ensure_base(ctx.builder, p.target.base, p.base, ctx.arch)
    ctx.cross_plan, ctx.build_base_id = crossing.result()
    ctx.reused = ctx.base.reused


def _cross_base(ctx: TargetContext, b: Builder) -> tuple[CrossPlan | None, str]:
    # Emulated targets: the drivers are cross-compiled from the same release's
    # base for the engine's own architecture (archbench.images.cross).
    p = ctx.plan
    return prepare_cross(
        b,
        base_name=p.target.base,
        base=p.base,
        target_arch=ctx.arch,
        engine_arch=ctx.host.arch,
        packages=p.packages,
        emulated=ctx.kind.cross_compiles,
        gnunet_perf=GNUNET_PERF.name in p.suites.enabled(),
        gnunet=ctx.gnunet_build,
        taler=ctx.taler_build is not None,
    )


def _cross_prefix(
    ctx: TargetContext, b: Builder, crossing: Future[tuple[CrossPlan | None, str]]
) -> bool:
    # While the target's base bootstraps: the cross stage's toolchain and compile,
    # which need nothing of that base (the engine's layer cache keeps them).
    plan, build_base_id = crossing.result()
    if plan is None:
        return False
    gnunet = ctx.gnunet_build
    if gnunet is not None and incremental_applies(
        gnunet, emulated=ctx.plan.emulated, cross=plan, taler=ctx.taler_build is not None
    ):
        # The stage will unpack a prefix built in a persistent tree: warming it with the
        # source build would compile what that tree keeps; the toolchain image instead.
        toolchain = plan_toolchain(
            ctx.arch,
            plan.build_base,
            build_base_id,
            plan,
            perf=GNUNET_PERF.name in ctx.plan.suites.enabled(),
            packages=ctx.plan.packages,
        )
        try:
            ensure_image(b, toolchain.spec, f"{ctx.name}.gnunet.toolchain.log")
        except ImageBuildError:
            return False
        return True
    log = f"{ctx.name}.cross-prefix.log"
    return warm_cross_stage(b, plan, build_base_id, log, ctx.gnunet_build, ctx.taler_build)


def smoke_base(ctx: TargetContext) -> None:
    """``smoke``: the base runs under QEMU (once per host and architecture); QEMU's CPU
    model is noted for every target."""
    h, arch, run_id = ctx.host, ctx.arch, ctx.ws.run_id
    assert ctx.base is not None, "planned after the base"
    with h.lock:
        first = arch not in h.smoked
    if first:
        smoke_test(h.client, ctx.base.tag, arch, run_id=run_id, gate=ctx.gate)
        with h.lock:
            h.smoked.add(arch)
    ctx.qemu_cpu = emulated_cpu(h.client, ctx.base.tag, arch, run_id=run_id, gate=ctx.gate)


def check_taler_cross(ctx: TargetContext) -> None:
    """Nothing is compiled under QEMU: without a cross stage the exchange would be.

    Raises:
        ImageBuildError: an emulated target builds the exchange from source but this
            engine or profile has no cross stage.
    """
    if ctx.cross_plan is None:
        raise ImageBuildError(
            f"{ctx.name}: the exchange (taler: source) of an emulated target is "
            "cross-compiled on an amd64 engine; this engine or profile has no cross stage "
            "(a profile with build-essential, or an engine that is not amd64)"
        )


def build_image(ctx: TargetContext) -> None:
    """``image``: the target's benchmark image, built or reused."""
    base = ctx.base
    assert base is not None, "planned after the base"
    if ctx.warming is not None:
        # The cross stage would build the same steps again beside the warm-up.
        with contextlib.suppress(Exception):
            ctx.warming.result()
    if ctx.gnunet_build is not None and incremental_applies(
        ctx.gnunet_build,
        emulated=ctx.plan.emulated,
        cross=ctx.cross_plan,
        taler=ctx.taler_build is not None,
    ):
        # Kept for the measuring pass, which then finds the prefix built.
        ctx.gnunet_build = ctx.ws.gnunet_builds[ctx.name] = _build_incremental(ctx, base)
    ctx.spec, ctx.image_id, ctx.reused = ensure_target_image(
        ctx.builder,
        functools.partial(_plan_spec, ctx, base),
        ctx.cross_plan,
        ctx.build_base_id,
        target_base=base.tag,
        name=ctx.name,
        gnunet=ctx.gnunet_build,
        taler=ctx.taler_build,
    )
    ctx.image_tag = ctx.run_image = ctx.spec.tag
    ctx.base_tag, ctx.base_built = base.tag, base.built or None


def _build_incremental(ctx: TargetContext, base: BaseImage) -> GnunetBuild:
    """libgnunetutil built in its persistent tree (:mod:`archbench.images.incremental`):
    natively from the target's base, cross from the cross plan's build base."""
    assert ctx.gnunet_build is not None
    plan = ctx.cross_plan
    toolchain = plan_toolchain(
        ctx.arch,
        base.tag if plan is None else plan.build_base,
        base.image_id if plan is None else ctx.build_base_id,
        plan,
        perf=GNUNET_PERF.name in ctx.plan.suites.enabled(),
        packages=ctx.plan.packages,
    )
    return build_incremental(ctx.builder, ctx.gnunet_build, toolchain, f"{ctx.name}.gnunet.log")


def _plan_spec(ctx: TargetContext, base: BaseImage, built: CrossBuild | None) -> ImageSpec:
    p = ctx.plan
    return plan_image(
        ctx.arch,
        p.target.profile,
        p.packages,
        base.tag,
        base.image_id,
        gnunet_perf=GNUNET_PERF.name in p.suites.enabled(),
        cross=built,
        gnunet=ctx.gnunet_build,
        taler=ctx.taler_build,
    )


def end_build_only(ctx: TargetContext) -> None:
    """``--build-only``: the image is the target's outcome (right after the image step,
    whose ``reused`` it reads)."""
    assert ctx.spec is not None, "planned after the image"
    ctx.outcome.message = f"image {ctx.spec.tag} ({'up to date' if ctx.reused else 'built'})"
    if ctx.tools is not None:
        # Built before anything is measured; a failure is the count stage's to
        # report (after the times are stored), not the build pass's.
        with contextlib.suppress(Exception):
            ctx.tools.result()


def describe(ctx: TargetContext) -> None:
    """The facts every result of the target carries: how it was executed, what it is."""
    p, h, client = ctx.plan, ctx.host, ctx.host.client
    info = client.info()
    digests = client.images.get(ctx.image_id).attrs.get("RepoDigests") or []
    ctx.execution = Execution(
        emulated=p.emulated,
        host_arch=h.arch.key,
        host_cpu=ctx.kind.host_cpu(ctx.local_cpu),
        qemu_version=ctx.qemu,
        qemu_cpu=ctx.qemu_cpu,
        image_id=ctx.image_id,
        image_tag=ctx.image_tag,
        image_digest=next(iter(digests), None),
        base_image=ctx.base_tag,
        base_built=ctx.base_built,
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
            ctx.gnunet_build.provenance()
            if ctx.gnunet_build is not None
            else p.archived.entry.gnunet_source
            if p.archived is not None
            else None
        ),
        taler_source=ctx.taler_build.provenance() if ctx.taler_build is not None else None,
        # An archived image carries its own harness, which these sources need not be.
        harness_sha256=harness_sha256() if p.archived is None else None,
        count_definition=count_definition(p),
    )
    ctx.target = TargetInfo(
        name=p.name,
        arch=ctx.arch.key,
        platform=ctx.arch.platform,
        base=p.target.base,
        profile=p.target.profile,
    )
    ctx.ws.log_dir.mkdir(parents=True, exist_ok=True)


def run_once(ctx: TargetContext, index: int, stage: str) -> None:
    """``run``/``run i/n``/``round i``: one harness container run, stored as it ends.

    The suites' progress lines feed the progress display's estimate; each suite's
    duration is stored for the next run's; a failed suite is noted in ``ctx.failed``
    (its rows missing) and the other suites' rows are kept.
    """
    p, ws = ctx.plan, ctx.ws
    assert ctx.execution is not None and ctx.target is not None, "planned after describe"
    started = time.time()
    doc, stderr = run_harness(
        ctx.host.client,
        ctx.run_image,
        ctx.arch,
        p.suites,
        run_id=ws.run_id,
        cpuset=p.cpuset,
        cpus=p.cpus,
        on_line=_suite_progress(ctx, stage),
        gate=ctx.gate,
    )
    ctx.outcome.run_windows.append((started, time.time()))
    for suite_name, suite_run in doc.suites.items():
        settings = p.suites.get(suite_name)
        if settings is not None and not suite_run.error and suite_run.duration_s is not None:
            key = suite_key(p.host_name, p.name, suite_name, settings)
            ctx.durations.record(key, suite_run.duration_s, ws.run_id)
    # Taler's helper benchmarks and GNUnet's perf programs print text; one parser
    # (the importer's) reads it.
    doc = importer.add_gnunet_perf_rows(importer.add_taler_helper_rows(doc))
    ctx.failed.update({s: run.error for s, run in doc.suites.items() if run.error})
    suffix = "" if index == 1 else f".repeat-{index}"
    (ws.log_dir / f"{p.name}{suffix}.harness.log").write_text(stderr, encoding="utf-8")
    update: dict[str, object] = {"repeat_index": index, **ctx.kind.run_update(doc)}
    result = Result(
        run_id=ws.run_id,
        target=ctx.target,
        execution=ctx.execution.model_copy(update=update),
        harness=doc,
    )
    # Each container run is stored as soon as it ends: an interruption
    # later loses nothing already measured.
    ctx.paths.append(ws.store.save(result))


def _suite_progress(ctx: TargetContext, stage: str) -> Callable[[str], None]:
    # The harness's suite lines move the stage's estimate (the step runner has
    # announced the stage); its other lines are the target's log.
    p, reporter = ctx.plan, ctx.reporter
    expected = ctx.durations.suite_estimates(p.host_name, p.name, p.suites)
    tracker = SuiteTracker(
        expected, blindsig_labels(p.suites), adaptive=blindsig_adaptive(p.suites)
    )
    reporter.progress(p.name, "", tracker.remaining_s(), stage)

    def on_line(text: str) -> None:
        event = tracker.feed(text)
        if event is None:
            reporter.line(p.name, text)
        else:
            step = f"{stage} {event.suite} {event.done}/{event.total}"
            reporter.progress(p.name, tracker.detail(), tracker.remaining_s(), step)

    return on_line


def choose_counted(ctx: TargetContext) -> None:
    """The suites the counting stages count: those archbench owns the drivers of
    (:data:`archbench.suites.COUNTED_SUITES`); the others are named as not counted."""
    p, builder = ctx.plan, ctx.builder
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
        return
    ctx.count_suites = planned.only(chosen)


def build_counting_layer(ctx: TargetContext) -> None:
    """``count image``: the counting layer over the benchmark image, built or reused
    (with the counter tools built beside the target, or here)."""
    made = ctx.tools.result() if ctx.tools is not None else None
    p = ctx.plan
    symbols = (p.target.base, p.base) if p.target.symbol_files else None
    ctx.layer = ensure_counting_image(
        ctx.builder, ctx.run_image, ctx.image_id, ctx.arch, made, symbols
    )


def count_once(ctx: TargetContext, index: int) -> None:
    """``count``/``count i/n``: the counted suites run under the counting QEMU, stored
    as ``<target>.instructions[.repeat-<i>].json`` (``Result.metric`` ``instructions``).

    Raises:
        HarnessError: the harness fails in the counting layer (calibration not exact,
            the driver failing under QEMU, counts that do not pair).
    """
    p, ws, layer = ctx.plan, ctx.ws, ctx.layer
    assert layer is not None and ctx.count_suites is not None, "planned after the layer"
    assert ctx.execution is not None and ctx.target is not None, "planned after describe"
    doc, stderr = run_harness(
        ctx.host.client,
        layer.tag,
        ctx.arch,
        ctx.count_suites,
        run_id=ws.run_id,
        cpuset=p.cpuset,
        on_line=ctx.builder.on_line,
        extra_args=["--count-with", COUNTER_IN_IMAGE, "--count-cpu", p.count_cpu],
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
        target=ctx.target,
        execution=ctx.execution.model_copy(update=update),
        harness=doc,
        metric="instructions",
    )
    ctx.paths.append(ws.store.save(result))


def summarise(ctx: TargetContext) -> None:
    """The target's outcome: its result paths; a failed suite fails the target.

    Raises:
        HarnessError: a suite failed in a run (its rows are missing; the other suites'
            rows are saved), or nothing was stored at all.
    """
    outcome, paths = ctx.outcome, ctx.paths
    if not paths:
        # Nothing was measured (e.g. --metric instructions where no enabled suite is
        # counted): a target with no result is a failure that says why, not an IndexError.
        problems = "; ".join(f"suite {s} failed: {e}" for s, e in ctx.failed.items())
        raise HarnessError(
            problems
            or "no result was stored: no enabled suite ran under the selected metrics "
            "(docs/counting.md, 'Which suites are counted')"
        )
    outcome.result_path = paths[0]
    outcome.result_paths = paths
    outcome.message = ", ".join(str(p) for p in paths)
    if ctx.failed:
        # The rows of the suites that worked are saved; the target still fails
        # so that the exit status says something is missing.
        problems = "; ".join(f"suite {s} failed: {e}" for s, e in ctx.failed.items())
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
    resolved (:func:`~archbench.images.resolve_taler`: sha256, ref or tree hash checked
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
