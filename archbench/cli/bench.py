"""``invoke bench`` and ``invoke images``: set a run up, carry it out, print its tables.

:func:`run_pipeline` turns the flags (or a resumed run's ``run.json``, or an
archive's manifest) into a run manifest and plans, connects to each host's engine,
checks cpusets and CPU quotas against it, and hands the plans to
:func:`archbench.run.execute` (building every target first) under a progress display.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker.errors

from archbench import matrix as matrix_mod
from archbench import report as reports
from archbench.analysis import counting
from archbench.archive import archiver
from archbench.build import resolve_apt_proxy
from archbench.cli import flags, options
from archbench.cli.config import Settings
from archbench.errors import Interrupted, MatrixError, TargetsFailed
from archbench.hosts import connect_host, engine_arch
from archbench.matrix import LOCAL_HOST
from archbench.matrix import emulated as emulated_defaults
from archbench.matrix import quota as cpu_quota
from archbench.report import instructions as instructions_tables
from archbench.result import (
    ResultStore,
    RunManifest,
    check_run_id,
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
    execute,
    plan,
)


def check_cpusets(clients: dict[str, Any], plans: Sequence[TargetPlan], cpuset: str | None) -> None:
    """Refuse a cpuset (``--cpuset`` or a target's) naming CPUs its engine lacks."""
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
        flags.check_cpuset_fits(p.cpuset, ncpu[p.host_name], f"{where} on host {p.host_name}")


def check_quotas(clients: dict[str, Any], plans: Sequence[TargetPlan], cpus: float | None) -> None:
    """Refuse a CPU quota (``--cpus`` or a target's ``cpus``) above its engine's CPU count."""
    for p in plans:
        if p.cpus is None:
            continue
        try:
            ncpu = int(clients[p.host_name].info().get("NCPU") or 0)
        except (docker.errors.DockerException, OSError, ValueError, TypeError):
            ncpu = 0  # unknown: the engine itself refuses at run time
        where = "--cpus" if cpus is not None else f"target {p.name} (matrix.yml)"
        cpu_quota.check_cpus_fit(p.cpus, ncpu, f"{where} on host {p.host_name}")


def run_pipeline(
    s: Settings,
    arch: str | None,
    target: str | None,
    matrix: str,
    *,
    build_only: bool,
    rebuild: bool,
    overrides: dict[str, object] | None = None,
    repeat: int = 1,
    cpuset: str | None = None,
    resume: str = "",
    suites: Sequence[str] = (),
    from_archive: str = "",
    metrics: Sequence[str] = (),
    cpus: float | None = None,
) -> tuple[ResultStore, str, list[TargetOutcome]]:
    """Plan the selected targets and carry them out: build, and unless ``build_only`` measure.

    The run is new (matrix from ``matrix`` or the settings, targets from ``arch``
    and ``target``), resumed (``resume``: matrix, targets and parameters from its
    ``run.json``, checked as flags are) or a rerun of an archive (``from_archive``:
    its matrix and images). Prints the run id, each target's progress and its end
    (stage seconds); saves the run manifest unless ``build_only``. Returns the
    results store, the run id and one outcome per target, in plan order.

    Raises:
        MatrixError: a bad selection, flag or ``run.json`` value, or a cpuset or
            quota the engine cannot give.
        EngineError: a host's engine cannot be reached.
        ArchiveError, ResultsError: the archive or the resumed run cannot be read.
        Interrupted: Ctrl-C; finished results are kept.
    """
    store = ResultStore(Path(s.results))
    if from_archive and rebuild:
        raise MatrixError("--rebuild and --from-archive: a rerun runs the archived images as is")
    arc = archiver.open_archive(Path(from_archive), Path(s.work)) if from_archive else None
    if arc is not None and not resume:
        archived = archiver.run_manifest(arc)
        m = matrix_mod.parse(archived.matrix_text, f"matrix.yml of archive {arc.root}")
        chosen = archiver.local_targets(
            m, arc.manifest, options.split(target, "--target"), options.archs(arch)
        )
        manifest = archived.model_copy(
            update={
                "run_id": new_run_id(),
                "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "targets": tuple(t.name for t in chosen),
                "overrides": {**archived.overrides, **(overrides or {})},
                "seconds": {},
                "archive": arc.ref,
            }
        )
        overrides, repeat, cpuset, suites = (
            manifest.overrides,
            manifest.repeat,
            manifest.cpuset,
            manifest.suites,
        )
        cpus = manifest.cpus if cpus is None else cpus
        manifest = manifest.model_copy(update={"cpus": cpus})
    elif resume:
        check_run_id(resume, "--resume")
        manifest = store.load_manifest(resume)
        m = matrix_mod.parse(manifest.matrix_text, f"{manifest.matrix_file} (as of run {resume})")
        chosen = m.select(manifest.targets)
        if manifest.archive is not None or arc is not None:
            chosen = archiver.resume_targets(manifest, arc, m)
        # run.json is a file like any other: its values are checked as the flags were.
        where = f"{store.root / resume / 'run.json'}:"
        overrides = dict(manifest.overrides)
        flags.blindsig_overrides(overrides)
        repeat = flags.integer(f"{where} repeat", manifest.repeat, 1, 100)
        cpuset = flags.cpuset(f"{where} cpuset", manifest.cpuset)
        cpus = cpu_quota.parse_cpus(f"{where} cpus", manifest.cpus)
        suites = manifest.suites
        metrics = manifest.metrics
    else:
        path = Path(matrix or s.matrix)
        matrix_text = matrix_mod.read_matrix_text(path)
        m = matrix_mod.parse(matrix_text, str(path))
        chosen = m.select(options.split(target, "--target"), options.archs(arch))
        manifest = RunManifest(
            run_id=new_run_id(),
            started_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            matrix_file=str(path),
            matrix_text=matrix_text,
            targets=tuple(t.name for t in chosen),
            overrides=overrides or {},
            repeat=repeat,
            cpuset=cpuset,
            cpus=cpus,
            suites=tuple(suites),
            metrics=counting.metric_names(metrics),
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
        overrides,
        repeat=repeat,
        cpuset=cpuset,
        suites=suites,
        metrics=metrics,
        cpus=cpus,
    )
    check_cpusets(clients, plans, cpuset)
    check_quotas(clients, plans, cpus)
    if arc is not None:
        loaded = archiver.load_for_targets(clients[LOCAL_HOST], arc, [p.name for p in plans])
        plans = [dataclasses.replace(p, archived=loaded[p.name]) for p in plans]
    if not build_only:
        store.save_manifest(manifest)
    ws = Workspace(
        store=store,
        run_id=run_id,
        work_dir=Path(s.work),
        apt_proxy=resolve_apt_proxy(clients.get(LOCAL_HOST), s.apt_proxy),
    )
    build_jobs = flags.integer("invoke.yaml archbench.build_jobs", s.build_jobs, 1, 16)
    run_options = RunOptions(
        build_only=build_only,
        rebuild=rebuild,
        resume=bool(resume),
        build_first=True,
        build_jobs=build_jobs,
    )
    with RichReporter() as reporter:
        reporter.console.print(f"run {run_id}")
        durations = TimingStore(Path(s.work))
        for p in plans:
            mode = "emulated (QEMU)" if p.emulated else "native"
            where = f"{p.host_name}, {p.target.arch.platform} {mode}"
            eta = durations.run_estimate(p.host_name, p.name, p.suites, p.repeat)
            reporter.expect(p.name, eta, where)
            if p.emulated_settings:
                reporter.console.print(
                    f"{p.name}: emulated_defaults of the matrix set "
                    f"{emulated_defaults.describe(p.emulated_settings)} "
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
        store.save_manifest(manifest.model_copy(update={"seconds": {**manifest.seconds, **done}}))
    for o in outcomes:
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items())
        state = "kept" if o.skipped else "ok" if o.ok else "FAILED"
        print(f"{o.name}: {state}" + (f" ({stages})" if stages else ""))
    return store, run_id, outcomes


def raise_failures(outcomes: list[TargetOutcome]) -> None:
    """Raise :class:`TargetsFailed` naming each failed target and why, if any failed."""
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines = "\n".join(f"  {o.name}: {o.message}" for o in failed)
        kept = len(outcomes) - len(failed)
        raise TargetsFailed(f"{len(failed)} target(s) failed ({kept} kept their results):\n{lines}")


def bench(
    s: Settings,
    *,
    arch: str | None,
    target: str | None,
    matrix: str,
    iterations: str | None,
    repetitions: str | None,
    rsa_bits: str | None,
    rebuild: bool,
    repeat: str | None,
    cpuset: str | None,
    warmup: str | None,
    max_time: str | None,
    resume: str,
    suite: str | None,
    from_archive: str,
    metric: str | None,
    ci_target: str | None,
    cpus: str | None,
) -> None:
    """``invoke bench``: build (if needed) and run the selected targets; print their tables.

    The flags are the strings invoke parsed (None: not given). Prints each stored
    result's Markdown table (timings, or instruction counts) and where the run is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed; the others' results are kept.
        ArchbenchError: whatever :func:`run_pipeline` raises.
    """
    # Every flag is checked before the matrix is read or an engine is called.
    overrides = options.overrides(iterations, repetitions, rsa_bits, warmup, max_time, ci_target)
    options.split(target, "--target"), options.archs(arch)
    quota = cpu_quota.parse_cpus("--cpus", cpus)
    store, run_id, outcomes = run_pipeline(
        s,
        arch,
        target,
        matrix,
        build_only=False,
        rebuild=rebuild,
        overrides=overrides,
        repeat=1 if repeat is None else flags.integer("--repeat", repeat, 1, 100),
        cpuset=flags.cpuset("--cpuset", cpuset),
        resume=resume,
        suites=options.split(suite, "--suite"),
        from_archive=from_archive,
        metrics=counting.parse_metrics(metric) if metric is not None else (),
        cpus=quota,
    )
    for o in outcomes:
        if o.ok and o.result_paths:
            for merged in merge_repeats([load(p) for p in o.result_paths]):
                print()
                if merged.metric == "instructions":
                    print(instructions_tables.render_markdown([merged]))
                else:
                    print(reports.render_markdown_table(merged))
    if any(o.ok for o in outcomes):
        print(f"\nresults: {store.root / run_id}   (render all: invoke report --run {run_id})")
    raise_failures(outcomes)


def images(
    s: Settings, *, arch: str | None, target: str | None, matrix: str, rebuild: bool
) -> None:
    """``invoke images``: bootstrap bases and build benchmark images only (no measurement).

    Raises:
        TargetsFailed: some targets' bases or images did not build; their logs are kept.
        ArchbenchError: whatever :func:`run_pipeline` raises.
    """
    _, _, outcomes = run_pipeline(s, arch, target, matrix, build_only=True, rebuild=rebuild)
    raise_failures(outcomes)
