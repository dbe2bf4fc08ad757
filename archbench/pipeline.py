"""Plan and drive the pipeline: matrix -> bases -> images -> run -> results.

:func:`plan` is pure: it turns the selected matrix targets into a list of
:class:`TargetPlan` (native or emulated, which base, which packages) without
touching an engine, so it can be printed and tested. :func:`execute` carries
the plan out against one Docker client. A failure of one target is recorded
and the others go on; every finished result is already on disk when the
next target starts.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docker

from archbench import bases, emulation, images, run
from archbench.engine import engine_version, host_cpu_model
from archbench.errors import ArchbenchError, MatrixError
from archbench.matrix import Base, BlindsigSuite, Matrix, Target
from archbench.platforms import Arch, needs_emulation
from archbench.progress import Reporter, SilentReporter
from archbench.results import Execution, Result, ResultStore, TargetInfo


@dataclass(frozen=True)
class TargetPlan:
    """What will be done for one target, decided before anything runs."""

    target: Target
    base: Base
    packages: tuple[str, ...]
    emulated: bool
    suite: BlindsigSuite
    cpuset: str | None = None
    """CPUs to pin the container to; from the target, overridden by ``--cpuset``."""
    repeat: int = 1
    """Independent container runs (fresh process each) of the harness."""

    @property
    def name(self) -> str:
        """The target's name."""
        return self.target.name


@dataclass
class TargetOutcome:
    """How one target ended; ``seconds`` maps stage name to wall time in s."""

    name: str
    ok: bool
    message: str
    result_path: Path | None = None
    result_paths: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def plan(
    matrix: Matrix,
    targets: Sequence[Target],
    host: Arch,
    overrides: dict[str, object] | None = None,
    *,
    repeat: int = 1,
    cpuset: str | None = None,
) -> list[TargetPlan]:
    """Plan ``targets`` for an engine whose native architecture is ``host``.

    ``overrides`` replaces blindsig suite parameters for this invocation
    (``iterations``, ``repetitions``, ``rsa_bits``, ``warmup``, ``max_time``),
    e.g. for a quick run. ``repeat`` is the number of independent container
    runs per target; ``cpuset`` pins every container (else the target's own).

    Raises:
        MatrixError: a target demands native execution (``emulate: false``)
            on a host of another architecture, a target has no suite to run,
            or an override is invalid.
    """
    if repeat < 1:
        raise MatrixError(f"--repeat must be at least 1, got {repeat}")
    plans = []
    for t in targets:
        try:
            emulated = needs_emulation(t.arch, host, t.emulate)
        except ValueError as exc:
            raise MatrixError(f"target {t.name}: {exc}") from exc
        suite = t.suites.blindsig
        if suite is None:
            raise MatrixError(
                f"target {t.name}: no suite enabled; add 'suites: {{blindsig: {{}}}}'"
            )
        if overrides:
            try:
                suite = BlindsigSuite.model_validate({**suite.model_dump(), **overrides})
            except ValueError as exc:
                raise MatrixError(f"command-line override: {exc}") from exc
        plans.append(
            TargetPlan(
                target=t,
                base=matrix.bases[t.base],
                packages=matrix.profiles[t.profile].packages,
                emulated=emulated,
                suite=suite,
                cpuset=cpuset or t.cpuset,
                repeat=repeat,
            )
        )
    return plans


@dataclass(frozen=True)
class Workspace:
    """Where the pipeline writes: results store, logs and scratch space."""

    store: ResultStore
    run_id: str
    work_dir: Path

    @property
    def log_dir(self) -> Path:
        """``<results>/<run-id>/logs``: bootstrap, build and harness logs."""
        return self.store.root / self.run_id / "logs"


def execute(
    client: docker.DockerClient,
    plans: Sequence[TargetPlan],
    workspace: Workspace,
    host: Arch,
    *,
    reporter: Reporter | None = None,
    build_only: bool = False,
    rebuild: bool = False,
) -> list[TargetOutcome]:
    """Carry out ``plans`` one target after another; never stops at a failure.

    Returns one :class:`TargetOutcome` per plan, in order. Raises nothing
    for a target's own failure (it is in the outcome); ``KeyboardInterrupt``
    propagates after the running container is removed, and finished results
    stay on disk.
    """
    reporter = reporter or SilentReporter()
    outcomes = []
    checked: set[Arch] = set()
    host_cpu = host_cpu_model()
    for p in plans:
        outcome = TargetOutcome(p.name, ok=False, message="")
        try:
            _execute_one(
                client,
                p,
                workspace,
                host,
                host_cpu,
                reporter,
                outcome,
                checked,
                build_only=build_only,
                rebuild=rebuild,
            )
            outcome.ok = True
        except ArchbenchError as exc:
            outcome.message = str(exc)
        reporter.finish(p.name, outcome.ok, outcome.message)
        outcomes.append(outcome)
    return outcomes


def _execute_one(
    client: docker.DockerClient,
    p: TargetPlan,
    ws: Workspace,
    host: Arch,
    host_cpu: str,
    reporter: Reporter,
    outcome: TargetOutcome,
    checked: set[Arch],
    *,
    build_only: bool,
    rebuild: bool,
) -> None:
    name, arch = p.name, p.target.arch

    def on_line(text: str) -> None:
        reporter.line(name, text)

    def timed(stage: str) -> _Timer:
        reporter.stage(name, stage)
        return _Timer(outcome.seconds, stage)

    qemu = qemu_cpu = None
    if p.emulated:
        with timed("preflight"):
            qemu = emulation.check(arch).qemu_version
    with timed("base"):
        base = bases.ensure_base(
            client,
            p.target.base,
            p.base,
            arch,
            work_dir=ws.work_dir,
            log_dir=ws.log_dir,
            on_line=on_line,
            rebuild=rebuild,
        )
    if p.emulated:
        with timed("smoke"):
            if arch not in checked:
                run.smoke_test(client, base.tag, arch, run_id=ws.run_id)
                checked.add(arch)
            qemu_cpu = run.emulated_cpu(client, base.tag, arch)
    spec = images.plan_image(arch, p.target.profile, p.packages, base.tag, base.image_id)
    with timed("image"):
        image_id, reused = images.ensure_image(
            client,
            spec,
            log_path=ws.log_dir / f"{name}.build.log",
            on_line=on_line,
            rebuild=rebuild,
        )
    if build_only:
        outcome.message = f"image {spec.tag} ({'up to date' if reused else 'built'})"
        return
    execution = Execution(
        emulated=p.emulated,
        host_arch=host.key,
        host_cpu=host_cpu,
        qemu_version=qemu,
        qemu_cpu=qemu_cpu,
        image_id=image_id,
        image_tag=spec.tag,
        image_digest=next(iter(client.images.get(image_id).attrs.get("RepoDigests") or []), None),
        base_image=base.tag,
        base_built=base.built or None,
        engine_version=engine_version(client),
        host_kernel=platform.release(),
        cpuset=p.cpuset,
        repeat_count=p.repeat,
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
    for index in range(1, p.repeat + 1):
        stage = "run" if p.repeat == 1 else f"run {index}/{p.repeat}"
        with timed(stage):
            doc, stderr = run.run_harness(
                client,
                spec.tag,
                arch,
                p.suite,
                run_id=ws.run_id,
                cpuset=p.cpuset,
                on_line=on_line,
            )
        suffix = "" if index == 1 else f".repeat-{index}"
        (ws.log_dir / f"{name}{suffix}.harness.log").write_text(stderr, encoding="utf-8")
        result = Result(
            run_id=ws.run_id,
            target=target,
            execution=execution.model_copy(update={"repeat_index": index}),
            harness=doc,
        )
        # Each container run is stored as soon as it ends: an interruption
        # later loses nothing already measured.
        paths.append(ws.store.save(result))
    outcome.result_path = paths[0]
    outcome.result_paths = paths
    outcome.message = ", ".join(str(p) for p in paths)


class _Timer:
    def __init__(self, sink: dict[str, float], stage: str) -> None:
        self.sink, self.stage = sink, stage

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.sink[self.stage] = time.monotonic() - self.start
