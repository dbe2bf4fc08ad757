"""One ``invoke bench`` or ``invoke images``: from checked options to stored results.

:func:`bench` turns a :class:`BenchOptions` (or a resumed run's ``run.json``, or an
archive's manifest) into a run manifest and plans, connects to each host's engine,
checks cpusets and CPU quotas against it, and carries the plans out
(:func:`archbench.run.schedule.execute`, building every target first) under a
progress display. It prints the run id and each target's progress; what the run
found is the caller's to print.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker.errors

from archbench.analysis import metric_names
from archbench.build import resolve_apt_proxy
from archbench.errors import Interrupted, MatrixError, ResultsError
from archbench.hosts import connect_host, engine_arch
from archbench.inputs import check_cpuset_fits, cpuset, integer
from archbench.matrix import (
    LOCAL_HOST,
    GnunetGit,
    GnunetPath,
    GnunetSource,
    GnunetTarball,
    check_cpus_fit,
    describe_emulated_changes,
    parse,
    parse_cpus,
    parse_gnunet,
    parse_taler,
    read_matrix_text,
)
from archbench.platforms import Arch
from archbench.result import ResultStore, RunManifest, check_run_id, folder_lock, new_run_id
from archbench.run.archives import (
    load_for_targets,
    local_targets,
    open_archive,
    resume_targets,
    run_manifest,
)
from archbench.run.planning import TargetPlan, check_overrides, plan
from archbench.run.progress import RichReporter, TimingStore
from archbench.run.schedule import RunOptions, execute
from archbench.run.target import TargetOutcome, Workspace


@dataclass(frozen=True)
class BenchOptions:
    """What one ``invoke bench`` or ``invoke images`` asks for, every flag already checked.

    ``matrix``, ``results`` and ``work`` are paths (the matrix of a new run, the
    results store, scratch space). ``targets`` and ``archs`` select targets (empty:
    all); ``overrides`` are blindsig settings for this run (``--iterations`` ...,
    checked by :func:`archbench.run.planning.check_overrides`); ``repeat`` container runs
    per target; ``cpuset``, ``cpus``: every container's CPUs and CPU quota (None:
    the targets' own); ``suites`` (empty: the matrix's enabled ones); ``metrics``
    (empty: the matrix's). ``resume``: the run id to finish (its ``run.json`` gives
    matrix, targets and parameters); ``from_archive``: an archive directory or tar
    to rerun. ``apt_proxy`` and ``build_jobs`` are ``invoke.yaml``'s values as
    written; :func:`bench` checks them when the run needs them. ``gnunet``
    (``--gnunet``): every selected target's GNUnet source (None: the matrix's);
    ``taler`` (``--taler``): every selected target's exchange source (None: the matrix's).
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
    build_jobs: str = "2"
    gnunet: GnunetSource | None = None
    taler: GnunetSource | None = None
    on_wait: Callable[[str], None] = print
    """Where the line goes that says this run waits for another writer of the results folder."""


@dataclass(frozen=True)
class BenchRun:
    """What :func:`bench` did: where the results are and how each target ended."""

    store: ResultStore
    run_id: str
    outcomes: tuple[TargetOutcome, ...]


def gnunet_flag(source: GnunetSource | None) -> str | None:
    """``source`` in ``--gnunet``'s one-string form with absolute paths (for ``run.json``:
    a resumed run builds the same source wherever it is started from)."""
    if source is None:
        return None
    if isinstance(source, GnunetTarball):
        return f"{source.tarball}@sha256:{source.sha256}"
    if isinstance(source, GnunetGit):
        return f"git+{source.git}@{source.ref}"
    if isinstance(source, GnunetPath):
        return source.path
    return "debian"


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
            try:
                ncpu[p.host_name] = int(clients[p.host_name].info().get("NCPU") or 0)
            except (docker.errors.DockerException, OSError, ValueError, TypeError):
                ncpu[p.host_name] = 0  # unknown: the engine itself refuses at run time
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
        try:
            ncpu = int(clients[p.host_name].info().get("NCPU") or 0)
        except (docker.errors.DockerException, OSError, ValueError, TypeError):
            ncpu = 0  # unknown: the engine itself refuses at run time
        where = "--cpus" if cpus is not None else f"target {p.name} (matrix.yml)"
        check_cpus_fit(p.cpus, ncpu, f"{where} on host {p.host_name}")


def bench(options: BenchOptions) -> BenchRun:
    """Plan the selected targets and carry them out: build, and unless ``build_only`` measure.

    The run is new (matrix from ``options.matrix``, targets from ``targets`` and
    ``archs``), resumed (``resume``: matrix, targets and parameters from its
    ``run.json``, checked as flags are) or a rerun of an archive (``from_archive``:
    its matrix and images). Prints the run id and each target's progress; saves the
    run manifest unless ``build_only``. Returns the results store, the run id and
    one outcome per target, in plan order.

    Raises:
        MatrixError: a bad selection or ``run.json`` value, ``rebuild`` with
            ``from_archive``, a bad ``invoke.yaml`` value, or a cpuset or quota the
            engine cannot give.
        EngineError: a host's engine cannot be reached.
        ArchiveError, ResultsError: the archive or the resumed run cannot be read.
        Interrupted: Ctrl-C; finished results are kept.
    """
    store = ResultStore(options.results)
    resume, rebuild, build_only = options.resume, options.rebuild, options.build_only
    overrides: Mapping[str, object] = options.overrides
    repeat, cpuset_value, suites = options.repeat, options.cpuset, options.suites
    metrics, cpus, gnunet = options.metrics, options.cpus, options.gnunet
    taler = options.taler
    if options.from_archive is not None and gnunet is not None:
        raise MatrixError("--gnunet and --from-archive: a rerun runs the archived images as is")
    if options.from_archive is not None and taler is not None:
        raise MatrixError("--taler and --from-archive: a rerun runs the archived images as is")
    if options.from_archive is not None and rebuild:
        raise MatrixError("--rebuild and --from-archive: a rerun runs the archived images as is")
    arc = (
        open_archive(options.from_archive, options.work)
        if options.from_archive is not None
        else None
    )
    if arc is not None and not resume:
        archived = run_manifest(arc)
        m = parse(archived.matrix_text, f"matrix.yml of archive {arc.root}")
        chosen = local_targets(m, arc.manifest, list(options.targets), list(options.archs))
        manifest = archived.model_copy(
            update={
                "run_id": new_run_id(),
                "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "targets": tuple(t.name for t in chosen),
                "overrides": {**archived.overrides, **overrides},
                "seconds": {},
                "archive": arc.ref,
            }
        )
        overrides, repeat, cpuset_value, suites = (
            manifest.overrides,
            manifest.repeat,
            manifest.cpuset,
            manifest.suites,
        )
        cpus = manifest.cpus if cpus is None else cpus
        manifest = manifest.model_copy(update={"cpus": cpus})
    elif resume:
        check_run_id(resume, "--resume", MatrixError)
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
        repeat = integer(f"{where} repeat", manifest.repeat, 1, 100)
        cpuset_value = cpuset(f"{where} cpuset", manifest.cpuset)
        cpus = parse_cpus(f"{where} cpus", manifest.cpus)
        suites = manifest.suites
        metrics = manifest.metrics
        if manifest.gnunet is not None:
            gnunet = parse_gnunet(manifest.gnunet, f"{where} gnunet")
        if manifest.taler is not None:
            taler = parse_taler(manifest.taler, f"{where} taler")
    else:
        path = options.matrix
        matrix_text = read_matrix_text(path)
        m = parse(matrix_text, str(path))
        chosen = m.select(list(options.targets), list(options.archs))
        manifest = RunManifest(
            run_id=new_run_id(),
            started_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            matrix_file=str(path),
            matrix_text=matrix_text,
            targets=tuple(t.name for t in chosen),
            overrides=dict(overrides),
            repeat=repeat,
            cpuset=cpuset_value,
            cpus=cpus,
            suites=tuple(suites),
            metrics=metric_names(metrics),
            gnunet=gnunet_flag(gnunet),
            taler=gnunet_flag(taler),
        )
    run_id = manifest.run_id
    clients = {}
    host_archs = {}
    for name in dict.fromkeys(t.host for t in chosen):
        clients[name] = connect_host(m.host(name), name)
        host_archs[name] = engine_arch(clients[name])
    plans = plan(
        m,
        chosen,
        host_archs,
        dict(overrides),
        repeat=repeat,
        cpuset=cpuset_value,
        suites=suites,
        metrics=metrics,
        cpus=cpus,
        gnunet=gnunet,
        taler=taler,
    )
    check_cpusets(clients, plans, cpuset_value)
    check_quotas(clients, plans, cpus)
    if arc is not None:
        loaded = load_for_targets(clients[LOCAL_HOST], arc, [p.name for p in plans])
        plans = [dataclasses.replace(p, archived=loaded[p.name]) for p in plans]
    # One writer of the results folder at a time, taken only now that every flag and the
    # engines have been checked: a refused run leaves no folder behind.
    with folder_lock(store.root, ResultsError, "results folder", options.on_wait):
        if not build_only:
            store.save_manifest(manifest)
        ws = Workspace(
            store=store,
            run_id=run_id,
            work_dir=options.work,
            apt_proxy=resolve_apt_proxy(clients.get(LOCAL_HOST), options.apt_proxy),
        )
        build_jobs = integer("invoke.yaml archbench.build_jobs", options.build_jobs, 1, 16)
        run_options = RunOptions(
            build_only=build_only,
            rebuild=rebuild,
            resume=bool(resume),
            build_first=True,
            build_jobs=build_jobs,
        )
        with RichReporter() as reporter:
            reporter.console.print(f"run {run_id}")
            durations = TimingStore(options.work)
            for p in plans:
                mode = "emulated (QEMU)" if p.emulated else "native"
                where = f"{p.host_name}, {p.target.arch.platform} {mode}"
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
            try:
                outcomes = execute(clients, plans, ws, host_archs, run_options, reporter=reporter)
            except KeyboardInterrupt:
                raise Interrupted(
                    f"interrupted; finished results are kept in {store.root / run_id} and this "
                    f"run's containers were removed. Finish it with: invoke bench --resume {run_id}"
                ) from None
        if not build_only:
            done = {o.name: o.seconds for o in outcomes if o.ok and not o.skipped}
            store.save_manifest(
                manifest.model_copy(update={"seconds": {**manifest.seconds, **done}})
            )
        return BenchRun(store, run_id, tuple(outcomes))
