"""``invoke bench`` and ``invoke images``: from flags to stored results (or built images).

:func:`bench` checks every flag (:mod:`archbench.cli.flags`) into one frozen
:class:`BenchOptions` before the matrix is read or an engine is called, then
:func:`run_bench` carries the run out: where it comes from (:func:`new_run`, a
resumed run's ``run.json``: :func:`resumed_run`, or an archive's rerun:
:func:`archive_rerun`, each giving one :class:`Origin`), its engines, plans,
cpuset and quota checks, the run manifest, and the targets' execution
(:func:`archbench.run.execute`, building every target first) under a progress
display. Printed: the run id, each target's progress and end (stage seconds) and,
for ``bench``, each stored result's Markdown table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archbench.analysis import metric_names, parse_metrics
from archbench.archive import VerifiedArchive
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    BENCH,
    BUILD_JOBS,
    CPUS,
    CPUSET,
    FROM_ARCHIVE,
    GNUNET,
    IMAGES,
    MATRIX,
    METRIC,
    REBUILD,
    REPEAT,
    RESUME,
    SUITE,
    TALER,
    TARGET,
    Given,
    archs,
    blindsig_overrides,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import Interrupted, MatrixError, ResultsError, TargetsFailed
from archbench.hosts import (
    load_for_targets,
    local_targets,
    open_archive,
    resume_targets,
    run_manifest,
)
from archbench.images import resolve_apt_proxy
from archbench.inputs import cpuset, path_flag
from archbench.matrix import (
    LOCAL_HOST,
    GnunetSource,
    Matrix,
    Target,
    describe_emulated_changes,
    gnunet_flag,
    parse,
    parse_cpus,
    parse_gnunet,
    parse_taler,
    read_matrix_text,
)
from archbench.platforms import Arch
from archbench.result import (
    ResultStore,
    RunManifest,
    check_run_id,
    folder_lock,
    load,
    merge_repeats,
    new_run_id,
)
from archbench.run import (
    RichReporter,
    RunOptions,
    TargetOutcome,
    TargetPlan,
    TimingStore,
    Workspace,
    check_cpusets,
    check_overrides,
    check_quotas,
    connect_engines,
    execute,
    plan,
)
from archbench.sources import check_local_source


@dataclass(frozen=True)
class BenchOptions:
    """What one ``invoke bench`` or ``invoke images`` asks for, every flag already checked.

    ``matrix``, ``results`` and ``work`` are paths (the matrix of a new run, the
    results store, scratch space). ``targets`` and ``archs`` select targets (empty:
    all); ``overrides`` are blindsig settings for this run (``--iterations`` ...,
    checked by :func:`archbench.run.check_overrides`); ``repeat`` container runs
    per target; ``cpuset``, ``cpus``: every container's CPUs and CPU quota (None:
    the targets' own); ``suites`` (empty: the matrix's enabled ones); ``metrics``
    (empty: the matrix's). ``resume``: the run id to finish (its ``run.json`` gives
    matrix, targets and parameters); ``from_archive``: an archive directory or tar
    to rerun. ``apt_proxy`` is ``invoke.yaml``'s value as written (resolved once the
    local engine is known); ``build_jobs`` its checked ``build_jobs`` (1-16).
    ``gnunet`` (``--gnunet``): every selected target's GNUnet source (None: the
    matrix's); ``taler`` (``--taler``): every selected target's exchange source.
    """

    matrix: Path
    results: Path
    work: Path
    targets: tuple[str, ...] = ()
    archs: tuple[Arch, ...] = ()
    build_only: bool = False
    rebuild: bool = False
    overrides: Mapping[str, object] = field(default_factory=dict)
    repeat: int = 1
    cpuset: str | None = None
    cpus: float | None = None
    resume: str = ""
    suites: tuple[str, ...] = ()
    from_archive: Path | None = None
    metrics: tuple[str, ...] = ()
    apt_proxy: str = ""
    build_jobs: int = 2
    gnunet: GnunetSource | None = None
    taler: GnunetSource | None = None
    on_wait: Callable[[str], None] = print
    """Where the line goes that says this run waits for another writer of the results folder."""


@dataclass(frozen=True)
class BenchRun:
    """What :func:`run_bench` did: where the results are and how each target ended."""

    store: ResultStore
    run_id: str
    outcomes: tuple[TargetOutcome, ...]


@dataclass(frozen=True)
class Origin:
    """Where a run comes from: its matrix, targets and manifest, and the run parameters
    (from the flags of a new run, a resumed run's ``run.json``, or an archive's)."""

    m: Matrix
    chosen: list[Target]
    manifest: RunManifest
    overrides: Mapping[str, object]
    repeat: int
    cpuset: str | None
    cpus: float | None
    suites: tuple[str, ...]
    metrics: tuple[str, ...]
    gnunet: GnunetSource | None
    taler: GnunetSource | None


def path_or_setting(flag: str, value: str, default: str) -> Path:
    """The path ``--flag`` names (checked by :func:`archbench.inputs.path_flag`), or the
    setting ``default`` when the flag was not given.

    Raises:
        MatrixError: a path no file system takes (a NUL byte, a name over 255 bytes).
    """
    return path_flag(flag, value) if value else Path(default)


def build_jobs(s: Settings) -> int:
    """``invoke.yaml``'s ``build_jobs``, checked (:data:`archbench.cli.flags.BUILD_JOBS`).

    Raises:
        MatrixError: not a whole number from 1 to 16.
    """
    return BUILD_JOBS.integer(s.build_jobs, "invoke.yaml archbench.build_jobs")


def bench_options(s: Settings, g: Given) -> BenchOptions:
    """``invoke bench``'s flags and settings, every flag checked, as one options object.

    Raises:
        MatrixError: a flag value is not allowed (nothing read or called yet).
    """
    chosen = blindsig_overrides(g)
    check_overrides(chosen)
    targets, selected = split(g.optional(TARGET), TARGET.option), archs(g.optional(ARCH))
    quota = parse_cpus(CPUS.option, g.optional(CPUS))
    repeat, source = g.optional(REPEAT), g.text(FROM_ARCHIVE)
    metric, gnunet, taler = g.optional(METRIC), g.optional(GNUNET), g.optional(TALER)
    return BenchOptions(
        matrix=path_or_setting(MATRIX.option, g.text(MATRIX), s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        targets=tuple(targets),
        archs=tuple(selected),
        rebuild=g.switch(REBUILD),
        overrides=chosen,
        repeat=REPEAT.integer_or_absent(repeat),
        cpuset=cpuset(CPUSET.option, g.optional(CPUSET)),
        cpus=quota,
        resume=g.text(RESUME),
        suites=tuple(split(g.optional(SUITE), SUITE.option)),
        from_archive=path_flag(FROM_ARCHIVE.option, source) if source else None,
        metrics=parse_metrics(metric) if metric is not None else (),
        apt_proxy=s.apt_proxy,
        build_jobs=build_jobs(s),
        gnunet=parse_gnunet(gnunet) if gnunet is not None else None,
        taler=parse_taler(taler) if taler is not None else None,
    )


def images_options(s: Settings, g: Given) -> BenchOptions:
    """``invoke images``'s flags and settings as one options object (``build_only``).

    Raises:
        MatrixError: an empty selection, an unknown architecture or a bad ``build_jobs``.
    """
    return BenchOptions(
        matrix=path_or_setting(MATRIX.option, g.text(MATRIX), s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        targets=tuple(split(g.optional(TARGET), TARGET.option)),
        archs=tuple(archs(g.optional(ARCH))),
        build_only=True,
        rebuild=g.switch(REBUILD),
        apt_proxy=s.apt_proxy,
        build_jobs=build_jobs(s),
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run(options: BenchOptions) -> Origin:
    """A new run: the matrix file, the selected targets, the flags' parameters.

    Raises:
        MatrixError: an unreadable or invalid matrix, or a selection of no target.
    """
    path = options.matrix
    matrix_text = read_matrix_text(path)
    m = parse(matrix_text, str(path))
    chosen = m.select(list(options.targets), list(options.archs))
    manifest = RunManifest(
        run_id=new_run_id(),
        started_at=_now(),
        matrix_file=str(path),
        matrix_text=matrix_text,
        targets=tuple(t.name for t in chosen),
        overrides=dict(options.overrides),
        repeat=options.repeat,
        cpuset=options.cpuset,
        cpus=options.cpus,
        suites=tuple(options.suites),
        metrics=metric_names(options.metrics),
        gnunet=gnunet_flag(options.gnunet),
        taler=gnunet_flag(options.taler),
    )
    return Origin(m, chosen, manifest, options.overrides, options.repeat, options.cpuset,
                  options.cpus, options.suites, options.metrics, options.gnunet,
                  options.taler)  # fmt: skip


def resumed_run(options: BenchOptions, store: ResultStore, arc: VerifiedArchive | None) -> Origin:
    """``--resume RUN_ID``: the matrix, targets and parameters of its ``run.json``, checked
    as the flags are (the GNUnet and exchange sources are stored as text and parsed again).

    Raises:
        MatrixError: not a run id, or a ``run.json`` value a flag would refuse.
        ResultsError: the run or its manifest cannot be read.
        ArchiveError: the run reran an archive and ``arc`` is not that archive.
    """
    resume = options.resume
    check_run_id(resume, RESUME.option, MatrixError)
    manifest = store.load_manifest(resume)
    # Relative paths in the matrix (gnunet: {path: ../src}) mean what they meant
    # when the run started: relative to its matrix file's folder.
    m = parse(
        manifest.matrix_text,
        f"{manifest.matrix_file} (as of run {resume})",
        base_dir=Path(manifest.matrix_file).parent,
    )
    chosen = m.select(manifest.targets)
    if manifest.archive is not None or arc is not None:
        chosen = resume_targets(manifest, arc, m)
    # run.json is a file like any other: its values are checked as the flags were.
    where = f"{store.root / resume / 'run.json'}:"
    overrides = dict(manifest.overrides)
    check_overrides(overrides)
    repeat = REPEAT.integer(manifest.repeat, f"{where} repeat")
    cpuset_value = cpuset(f"{where} cpuset", manifest.cpuset)
    cpus = parse_cpus(f"{where} cpus", manifest.cpus)
    gnunet, taler = options.gnunet, options.taler
    if manifest.gnunet is not None:
        gnunet = parse_gnunet(manifest.gnunet, f"{where} gnunet")
    if manifest.taler is not None:
        taler = parse_taler(manifest.taler, f"{where} taler")
    return Origin(m, chosen, manifest, overrides, repeat, cpuset_value, cpus, manifest.suites,
                  manifest.metrics, gnunet, taler)  # fmt: skip


def archive_rerun(options: BenchOptions, arc: VerifiedArchive) -> Origin:
    """``--from-archive``: the archived run's matrix and parameters, its targets on this
    engine; the flags' blindsig overrides and ``--cpus`` apply over the archived ones.

    Raises:
        ArchiveError: the archive's run manifest cannot be read.
        MatrixError: the selection names none of the archived targets.
    """
    archived = run_manifest(arc)
    m = parse(archived.matrix_text, f"matrix.yml of archive {arc.root}")
    chosen = local_targets(m, arc.manifest, list(options.targets), list(options.archs))
    manifest = archived.model_copy(
        update={
            "run_id": new_run_id(),
            "started_at": _now(),
            "targets": tuple(t.name for t in chosen),
            "overrides": {**archived.overrides, **options.overrides},
            "seconds": {},
            "archive": arc.ref,
        }
    )
    cpus = manifest.cpus if options.cpus is None else options.cpus
    manifest = manifest.model_copy(update={"cpus": cpus})
    return Origin(m, chosen, manifest, manifest.overrides, manifest.repeat, manifest.cpuset,
                  cpus, manifest.suites, options.metrics, options.gnunet,
                  options.taler)  # fmt: skip


def _origin(options: BenchOptions, store: ResultStore) -> tuple[Origin, VerifiedArchive | None]:
    """The run's origin and, with ``--from-archive``, the verified archive.

    Raises:
        MatrixError: ``--gnunet``, ``--taler`` or ``--rebuild`` with ``--from-archive``;
            whatever :func:`new_run`, :func:`resumed_run`, :func:`archive_rerun` raise.
    """
    if options.from_archive is not None:
        for flag, value in ((GNUNET, options.gnunet), (TALER, options.taler),
                            (REBUILD, options.rebuild)):  # fmt: skip
            if value is not None and value is not False:
                raise MatrixError(
                    f"{flag.option} and {FROM_ARCHIVE.option}: a rerun runs the archived "
                    "images as is"
                )
    arc = (
        open_archive(options.from_archive, options.work)
        if options.from_archive is not None
        else None
    )
    if arc is not None and not options.resume:
        return archive_rerun(options, arc), arc
    if options.resume:
        return resumed_run(options, store, arc), arc
    return new_run(options), arc


def _announce(reporter: RichReporter, plans: Sequence[TargetPlan], work: Path) -> None:
    """Each target's line with its ETA, and the emulated defaults the matrix applied."""
    durations = TimingStore(work)
    for p in plans:
        mode = "emulated (QEMU)" if p.emulated else "native"
        pool = f"pool {p.pool.name} ({', '.join(p.hosts)})" if p.pool else p.host_name
        where = f"{pool}, {p.target.arch.platform} {mode}"
        eta = durations.run_estimate(p.host_name, p.name, p.suites, p.repeat)
        reporter.expect(p.name, eta, where)
        if p.emulated_settings:
            reporter.console.print(
                f"{p.name}: emulated_defaults of the matrix set "
                f"{describe_emulated_changes(p.emulated_settings)} "
                "(a target's own settings or --rsa-bits etc. override them)",
                markup=False,
                soft_wrap=True,
            )


def run_bench(options: BenchOptions) -> BenchRun:
    """Plan the selected targets and carry them out: build, and unless ``build_only`` measure.

    The run is new, resumed (``resume``) or a rerun of an archive (``from_archive``):
    :func:`_origin`. Prints the run id and each target's progress; saves the run
    manifest unless ``build_only``. Returns the results store, the run id and one
    outcome per target, in plan order.

    Raises:
        MatrixError: a bad selection or ``run.json`` value, ``rebuild`` with
            ``from_archive``, or a cpuset or quota the engine cannot give.
        EngineError: a host's engine cannot be reached.
        ArchiveError, ResultsError: the archive or the resumed run cannot be read.
        Interrupted: Ctrl-C; finished results are kept.
    """
    store = ResultStore(options.results)
    o, arc = _origin(options, store)
    run_id, manifest = o.manifest.run_id, o.manifest
    if arc is None:
        # A missing tarball or tree is refused now, not by every target once the run began.
        for t in o.chosen:
            check_local_source(o.gnunet or o.m.gnunet(t))
            check_local_source(o.taler or o.m.taler(t), "taler-exchange")
    clients, host_archs = connect_engines(o.m, o.chosen, show)
    plans = plan(o.m, o.chosen, host_archs, dict(o.overrides), repeat=o.repeat, cpuset=o.cpuset,
                 suites=o.suites, metrics=o.metrics, cpus=o.cpus, gnunet=o.gnunet,
                 taler=o.taler)  # fmt: skip
    check_cpusets(clients, plans, o.cpuset)
    check_quotas(clients, plans, o.cpus)
    if arc is not None:
        loaded = load_for_targets(clients[LOCAL_HOST], arc, [p.name for p in plans])
        plans = [dataclasses.replace(p, archived=loaded[p.name]) for p in plans]
    # One writer of the results folder at a time, taken only now that every flag and the
    # engines have been checked: a refused run leaves no folder behind.
    with folder_lock(store.root, ResultsError, "results folder", options.on_wait):
        if not options.build_only:
            store.save_manifest(manifest)
        ws = Workspace(
            store=store,
            run_id=run_id,
            work_dir=options.work,
            apt_proxy=resolve_apt_proxy(clients.get(LOCAL_HOST), options.apt_proxy),
        )
        run_options = RunOptions(
            build_only=options.build_only,
            rebuild=options.rebuild,
            resume=bool(options.resume),
            build_first=True,
            build_jobs=options.build_jobs,
        )
        with RichReporter() as reporter:
            reporter.console.print(f"run {run_id}")
            _announce(reporter, plans, options.work)
            try:
                outcomes = execute(clients, plans, ws, host_archs, run_options, reporter=reporter)
            except KeyboardInterrupt:
                raise Interrupted(
                    f"interrupted; finished results are kept in {store.root / run_id} and this "
                    f"run's containers were removed. Finish it with: invoke bench --resume {run_id}"
                ) from None
        if not options.build_only:
            done = {t.name: t.seconds for t in outcomes if t.ok and not t.skipped}
            store.save_manifest(
                manifest.model_copy(update={"seconds": {**manifest.seconds, **done}})
            )
        return BenchRun(store, run_id, tuple(outcomes))


def print_outcomes(done: BenchRun) -> None:
    """One line per target: ``kept``, ``ok`` or ``FAILED`` and its stage seconds; a target
    moved off pool members that stopped answering says where it ran in the end."""
    for o in done.outcomes:
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items())
        state = "kept" if o.skipped else "ok" if o.ok else "FAILED"
        moved = f" on {o.host}, moved from {', '.join(o.moved_from)}" if o.moved_from else ""
        show(f"{o.name}: {state}{moved}" + (f" ({stages})" if stages else ""))


def raise_failures(outcomes: Sequence[TargetOutcome]) -> None:
    """Raise :class:`TargetsFailed` naming each failed target and why, if any failed."""
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines = "\n".join(f"  {o.name}: {o.message}" for o in failed)
        kept = len(outcomes) - len(failed)
        raise TargetsFailed(f"{len(failed)} target(s) failed ({kept} kept their results):\n{lines}")


def bench(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke bench``: build (if needed) and run the selected targets; print their tables.

    ``values``: the flags of :data:`archbench.cli.flags.BENCH` as invoke parsed them.
    Prints each target's end, each stored result's Markdown table (timings, or
    instruction counts) and where the run is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed; the others' results are kept.
        ArchbenchError: whatever :func:`run_bench` raises.
    """
    # One bench at a time per results folder (run_bench takes its lock once the flags
    # and engines are checked); a second waits and says so.
    options = bench_options(s, Given(BENCH, values))
    # The reports (pandas) load once the flags are checked: a refused flag costs less.
    from archbench.report import render_instructions_markdown, render_markdown_table

    done = run_bench(dataclasses.replace(options, on_wait=show))
    print_outcomes(done)
    for o in done.outcomes:
        if o.ok and o.result_paths:
            for merged in merge_repeats([load(p) for p in o.result_paths]):
                show()
                if merged.metric == "instructions":
                    show(render_instructions_markdown([merged]))
                else:
                    show(render_markdown_table(merged))
    if any(o.ok for o in done.outcomes):
        show(
            f"\nresults: {done.store.root / done.run_id}   (render all: invoke report --run "
            f"{done.run_id})"
        )
    raise_failures(done.outcomes)


def images(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke images``: bootstrap bases and build benchmark images only (no measurement).

    Raises:
        MatrixError: an empty selection or an unknown architecture.
        TargetsFailed: some targets' bases or images did not build; their logs are kept.
        ArchbenchError: whatever :func:`run_bench` raises.
    """
    done = run_bench(images_options(s, Given(IMAGES, values)))
    print_outcomes(done)
    raise_failures(done.outcomes)
