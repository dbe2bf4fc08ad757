"""invoke tasks: the command line of archbench. Only this file knows invoke.

Each task parses its flags, calls the library, and turns an
:class:`archbench.errors.ArchbenchError` into ``Exit(message, code)``.
Run ``invoke --list`` for the tasks and ``invoke --help TASK`` for flags.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import docker.errors
from invoke.context import Context
from invoke.exceptions import Exit
from invoke.tasks import task

from archbench import (
    archiver,
    bases,
    counting,
    cpu_quota,
    emulated_defaults,
    emulation,
    engine,
    export,
    flags,
    image_stage,
    outputs,
    pipeline,
    reports,
    run,
    schedule,
)
from archbench import importer as importer_mod
from archbench import matrix as matrix_mod
from archbench import reference as reference_mod
from archbench.errors import (
    ArchbenchError,
    EmulationError,
    EngineError,
    Interrupted,
    MatrixError,
    ReportError,
    ResultsError,
    TargetsFailed,
)
from archbench.matrix import LOCAL_HOST
from archbench.platforms import Arch
from archbench.progress import RichReporter
from archbench.report import compare_tables, latex_chapter
from archbench.report import gnunet_perf as gnunet_perf_tables
from archbench.report import instructions as instructions_tables
from archbench.results import (
    Result,
    ResultStore,
    RunManifest,
    check_run_id,
    load,
    merge_repeats,
    new_run_id,
)
from archbench.timings import TimingStore

F = TypeVar("F", bound=Callable[..., Any])

_SELECT_HELP = {
    "arch": "comma-separated architectures: " + ", ".join(Arch.keys()),
    "target": "comma-separated target names from the matrix",
    "matrix": "matrix file (default from invoke.yaml: matrix.yml)",
}


def _errors_to_exit(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArchbenchError as exc:
            raise Exit(f"archbench: {exc}", code=exc.exit_code) from exc

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature


PROJECT_DIR = Path(__file__).resolve().parent
"""The project directory (where tasks.py and invoke.yaml are): relative paths in
invoke.yaml and INVOKE_ARCHBENCH_* start here, so `invoke` run from a subdirectory
finds the same matrix, results and reports; paths given as flags start at the
current directory, as a shell's do."""


def _settings(c: Context) -> dict[str, str]:
    cfg = c.config.get("archbench", {})
    paths = {
        "matrix": "matrix.yml",
        "results": "results",
        "reports": "reports/out",
        "work": ".archbench/work",
    }
    settings = {key: str(cfg.get(key, default)) for key, default in paths.items()}
    settings = {
        key: value if Path(value).is_absolute() else _from_project(value)
        for key, value in settings.items()
    }
    settings["apt_proxy"] = str(cfg.get("apt_proxy", "") or "")
    settings["build_jobs"] = str(cfg.get("build_jobs", 2))
    return settings


def _from_project(value: str) -> str:
    """``value`` relative to :data:`PROJECT_DIR`, written relative to the current
    directory when it lies below it (so messages keep reading ``results``)."""
    path = PROJECT_DIR / value
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _split(value: str | None, flag: str = "") -> list[str]:
    # None: the flag was not given (all); an explicitly empty value is an error.
    return flags.selection(flag or "selection", value)


def _archs(value: str | None) -> list[Arch]:
    try:
        return [Arch.from_key(a) for a in _split(value, "--arch")]
    except ValueError as exc:
        raise MatrixError(f"--arch: {exc}") from exc


def _overrides(
    iterations: str | None,
    repetitions: str | None,
    rsa_bits: str | None,
    warmup: str | None = None,
    max_time: str | None = None,
    ci_target: str | None = None,
) -> dict[str, object]:
    out: dict[str, object] = {}
    if ci_target is not None:
        out["ci_target"] = flags.ci_target("--ci-target", ci_target)
    elif repetitions is not None:
        out["ci_target"] = None  # --repetitions N: exactly N, not adaptive
    if warmup is not None:
        out["warmup"] = flags.integer("--warmup", warmup, 0, 1000)
    if max_time is not None:
        out["max_time"] = flags.number("--max-time", max_time, 0, 7 * 86_400)
    if iterations is not None:
        out["iterations"] = flags.integer("--iterations", iterations, 1, 100_000)
    if repetitions is not None:
        out["repetitions"] = flags.integer("--repetitions", repetitions, 1, 10_000)
    if rsa_bits is not None:
        out["rsa_bits"] = [
            flags.integer("--rsa-bits", b, 1024, 16384) for b in _split(rsa_bits, "--rsa-bits")
        ]
    flags.blindsig_overrides(out)
    return out


def _check_cpusets(
    clients: dict[str, Any], plans: Sequence[pipeline.TargetPlan], cpuset: str | None
) -> None:
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


def _check_quotas(
    clients: dict[str, Any], plans: Sequence[pipeline.TargetPlan], cpus: float | None
) -> None:
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


def _pipeline(
    c: Context,
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
) -> tuple[ResultStore, str, list[pipeline.TargetOutcome]]:
    s = _settings(c)
    store = ResultStore(Path(s["results"]))
    if from_archive and rebuild:
        raise MatrixError("--rebuild and --from-archive: a rerun runs the archived images as is")
    arc = archiver.open_archive(Path(from_archive), Path(s["work"])) if from_archive else None
    if arc is not None and not resume:
        archived = archiver.run_manifest(arc)
        m = matrix_mod.parse(archived.matrix_text, f"matrix.yml of archive {arc.root}")
        chosen = archiver.local_targets(m, arc.manifest, _split(target, "--target"), _archs(arch))
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
        path = Path(matrix or s["matrix"])
        matrix_text = matrix_mod.read_matrix_text(path)
        m = matrix_mod.parse(matrix_text, str(path))
        chosen = m.select(_split(target, "--target"), _archs(arch))
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
        clients[name] = engine.connect_host(m.host(name), name)
        host_archs[name] = engine.engine_arch(clients[name])
    plans = pipeline.plan(
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
    _check_cpusets(clients, plans, cpuset)
    _check_quotas(clients, plans, cpus)
    if arc is not None:
        loaded = archiver.load_for_targets(clients[LOCAL_HOST], arc, [p.name for p in plans])
        plans = [dataclasses.replace(p, archived=loaded[p.name]) for p in plans]
    if not build_only:
        store.save_manifest(manifest)
    ws = pipeline.Workspace(
        store=store,
        run_id=run_id,
        work_dir=Path(s["work"]),
        apt_proxy=image_stage.resolve_apt_proxy(clients.get(LOCAL_HOST), s["apt_proxy"]),
    )
    build_jobs = flags.integer("invoke.yaml archbench.build_jobs", s["build_jobs"], 1, 16)
    with RichReporter() as reporter:
        reporter.console.print(f"run {run_id}")
        durations = TimingStore(Path(s["work"]))
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
            outcomes = schedule.build_then_measure(
                clients,
                plans,
                ws,
                host_archs,
                reporter=reporter,
                build_only=build_only,
                rebuild=rebuild,
                resume=bool(resume),
                build_jobs=build_jobs,
            )
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


def _raise_failures(outcomes: list[pipeline.TargetOutcome]) -> None:
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines = "\n".join(f"  {o.name}: {o.message}" for o in failed)
        kept = len(outcomes) - len(failed)
        raise TargetsFailed(f"{len(failed)} target(s) failed ({kept} kept their results):\n{lines}")


@task(
    help={
        **_SELECT_HELP,
        "iterations": "blindsig: override operations per timed block (the thesis's 10x; 1-100000)",
        "repetitions": "blindsig: override timed blocks per row (1-10000); without"
        " --ci-target this also turns adaptive repetitions off",
        "rsa_bits": "blindsig: override RSA key sizes, comma-separated (e.g. 1024,2048)",
        "rebuild": "rebuild bases and images even when up to date",
        "repeat": "independent container runs per target (fresh process each), merged in reports "
        "(1-100, default 1)",
        "cpuset": "pin benchmark containers to these CPUs (Docker cpuset, e.g. 1 or 0-1)",
        "cpus": "CPU quota of every benchmark container (Docker's --cpus, e.g. 0.5; "
        "matrix target key 'cpus'), recorded in the results",
        "warmup": "blindsig: override warmup repetitions (run and discarded; 0-1000)",
        "max_time": "blindsig: override the time budget in s per scheme and key size",
        "ci_target": "blindsig: adaptive repetitions until the 95 % interval of each median"
        " is within this fraction (0.02 = ±2 %), up to max_repetitions (matrix.yml; native"
        " targets' default 0.02); 'off': fixed repetitions for this run",
        "resume": "RUN_ID of an interrupted run: keep its complete targets, measure the rest",
        "suite": "run only these suites, comma-separated: "
        + ", ".join(matrix_mod.SUITE_NAMES)
        + " (settings from the matrix, else the suite's defaults)",
        "from_archive": "DIR (or .tar) written by 'invoke archive': verify it, load its images "
        "and rerun its targets on this engine with its matrix; nothing is bootstrapped or built",
        "metric": "time (default), instructions, or time,instructions: instructions per "
        "operation counted under QEMU with archbench's TCG plugin (matrix key 'metrics')",
    }
)
@_errors_to_exit
def bench(
    c: Context,
    arch: str | None = None,
    target: str | None = None,
    matrix: str = "",
    iterations: str | None = None,
    repetitions: str | None = None,
    rsa_bits: str | None = None,
    rebuild: bool = False,
    repeat: str | None = None,
    cpuset: str | None = None,
    warmup: str | None = None,
    max_time: str | None = None,
    resume: str = "",
    suite: str | None = None,
    from_archive: str = "",
    metric: str | None = None,
    ci_target: str | None = None,
    cpus: str | None = None,
) -> None:
    """Build (if needed) and run the benchmark for matrix targets; print their tables."""
    # Every flag is checked before the matrix is read or an engine is called.
    overrides = _overrides(iterations, repetitions, rsa_bits, warmup, max_time, ci_target)
    _split(target, "--target"), _archs(arch)
    quota = cpu_quota.parse_cpus("--cpus", cpus)
    store, run_id, outcomes = _pipeline(
        c,
        arch,
        target,
        matrix,
        build_only=False,
        rebuild=rebuild,
        overrides=overrides,
        repeat=1 if repeat is None else flags.integer("--repeat", repeat, 1, 100),
        cpuset=flags.cpuset("--cpuset", cpuset),
        resume=resume,
        suites=_split(suite, "--suite"),
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
    _raise_failures(outcomes)


@task(
    help={
        "run_id": "the run to archive (a directory name under the results directory)",
        "out": "directory to write (default: archives/<run-id>); must not exist",
        "tar": "write <out>.tar (uncompressed) instead of the directory",
        "plots": "render the report's bar charts too (--no-plots: tables and exports only)",
        "results": "results directory (default from invoke.yaml: results)",
    }
)
@_errors_to_exit
def archive(
    c: Context, run_id: str, out: str = "", tar: bool = False, plots: bool = True, results: str = ""
) -> None:
    """Write a run's images (docker save), matrix, results and report into one directory."""
    store = ResultStore(Path(results or _settings(c)["results"]))
    summary = archiver.create(
        store, run_id, Path(out or f"archives/{run_id}"), tar=tar, plots=plots
    )
    print(
        f"wrote {summary.path}: {summary.total_bytes / 1e6:.0f} MB in {summary.seconds:.1f} s, "
        f"archive {summary.archive_id}, manifest sha256 {summary.manifest_sha256}"
    )
    print(f"rerun elsewhere: invoke bench --from-archive {summary.path}")


@task(help={**_SELECT_HELP, "rebuild": "rebuild bases and images even when up to date"})
@_errors_to_exit
def images(
    c: Context,
    arch: str | None = None,
    target: str | None = None,
    matrix: str = "",
    rebuild: bool = False,
) -> None:
    """Bootstrap bases and build benchmark images only (no measurement)."""
    _, _, outcomes = _pipeline(c, arch, target, matrix, build_only=True, rebuild=rebuild)
    _raise_failures(outcomes)


def _select_counted(
    counted: list[Result], targets: list[str], archs: list[str], suites: list[str]
) -> list[Result]:
    """Instruction-count results of the selection; none (not an error) when none match."""
    if not counted:
        return []
    try:
        return reports.select_results(counted, targets=targets, archs=archs, suites=suites)
    except ReportError:
        return []


@task(
    help={
        "run": "run id(s) to render, comma-separated (default: the latest run)",
        "all_runs": "render every run in the results directory",
        "results": "results directory (default from invoke.yaml: results)",
        "out": "output directory (default from invoke.yaml: reports/out)",
        "target": "only these targets, comma-separated (reference ones are thesis-...)",
        "arch": "only these architectures: " + ", ".join(Arch.keys()),
        "suite": "only rows of these suites, comma-separated (e.g. blindsig)",
        "reference": "add the thesis's published figures (reports/reference/thesis-*.json)",
        "baseline": "add each machine's time relative to this one (target, or target@run)",
        "style": "LaTeX table style: thesis (the thesis's macros) or booktabs",
        "unit": "speed unit: ms, us (µs) or ops/s",
        "compare_bits": "RSA sizes of the CS-vs-RSA tables, comma-separated (default: all)",
        "plots": "write bar charts (PNG and PDF) next to the tables (--no-plots: skip)",
        "label_prefix": "put before every LaTeX label of the chapter (default: the thesis's own)",
    }
)
@_errors_to_exit
def report(
    c: Context,
    run: str | None = None,
    all_runs: bool = False,
    results: str = "",
    out: str = "",
    target: str | None = None,
    arch: str | None = None,
    suite: str | None = None,
    reference: bool = False,
    baseline: str = "",
    style: str = "thesis",
    unit: str = "ms",
    compare_bits: str | None = None,
    plots: bool = True,
    label_prefix: str = "",
) -> None:
    """Render the Performance Measurements chapter, exports and plots (no Docker needed)."""
    s = _settings(c)
    # Arguments are checked before any file is read or removed.
    options = reports.ReportOptions(
        unit=reports.parse_unit(unit),
        style=reports.parse_style(style),
        baseline=baseline or None,
        compare_bits=tuple(
            flags.integer("--compare-bits", b, 512, 16384)
            for b in _split(compare_bits, "--compare-bits")
        )
        or None,
        label_prefix=latex_chapter.check_label_prefix(label_prefix),
    )
    targets, archs = _split(target, "--target"), [a.key for a in _archs(arch)]
    suites = _split(suite, "--suite")
    runs_asked = [check_run_id(r, "--run") for r in _split(run, "--run")]
    store = ResultStore(Path(results or s["results"]))
    if not store.root.is_dir() and not reference:
        raise ReportError(
            f"results directory {store.root} does not exist; run 'invoke bench' first, "
            "or pass --results DIR (or --reference for the thesis's data alone)"
        )
    known = store.runs()
    if all_runs:
        runs = None
    elif runs_asked:
        runs = runs_asked
        missing = [r for r in runs if r not in known]
        if missing:
            raise ReportError(
                f"no run {', '.join(missing)} in {store.root}; runs there: "
                f"{', '.join(known[-8:]) or 'none'}"
            )
    else:
        latest = store.latest_run()
        runs = [latest] if latest else []
        if latest:
            print(
                f"rendering run {latest}, the latest with results (--all-runs or --run for others)"
            )
    # One pass over the files: a bad one is reported once, whichever metric it held.
    both, failures = store.load_all(runs, metric=None)
    loaded = [r for r in both if r.metric == "time"]
    counted = [r for r in both if r.metric == "instructions"]
    if reference:
        shipped, bad = reference_mod.load_reference()
        loaded += shipped
        failures += bad
    for f in failures:
        print(f"warning: skipped {f.message}")
    chosen = reports.select_results(loaded, targets=targets, archs=archs, suites=suites)
    out_dir = Path(out or s["reports"])
    counted = _select_counted(counted, targets, archs, suites)
    paths: list[Path] = []
    if chosen or not counted:
        # The tidy frame is built once for the chapter, the exports and the plots.
        data = reports.prepare(chosen, failures)
        plot_paths: list[Path] = []
        if plots:
            from archbench import plots as plots_mod  # matplotlib: slow to import

            # Drawn first so the chapter can reference every figure it has.
            plot_paths, listed = plots_mod.write_listed(data, out_dir, options.unit)
            options = dataclasses.replace(options, figures=listed)
        paths += reports.write_reports(data, failures, out_dir, options)
        paths += export.write_exports(chosen, out_dir, counted, frame=data.frame)
        paths += gnunet_perf_tables.write(chosen, out_dir)
        paths += plot_paths
    else:
        # A counting-only run (--metric instructions): its tables are the report.
        print("no timing results selected: writing the instruction tables only")
    paths += instructions_tables.write_all(counted, chosen, out_dir)
    for p in paths:
        print(f"wrote {p}")
    # Only now, and only files an earlier report listed as its own: figures
    # and the GnuPG CSV of machines or suites no longer selected.
    # --no-plots leaves the figures of an earlier report as they are.
    keep = None if plots else (lambda name: name.startswith("fig-"))
    for p in outputs.replace_outputs(out_dir, paths, keep):
        print(f"removed {p} (written by an earlier report, not by this one)")
    if failures:
        raise ResultsError(
            f"rendered without {len(failures)} results file(s) that could not be loaded "
            "(listed above and in appendix.md); fix or move them away, or measure the "
            "target again with 'invoke bench --resume RUN_ID'"
        )


@task(
    help={
        "arch": "architectures to check (default: every emulated one in the matrix)",
        "fix": "as root on Debian: install qemu-user-static, mount binfmt_misc, register handlers",
        "matrix": _SELECT_HELP["matrix"],
    }
)
@_errors_to_exit
def doctor(c: Context, arch: str | None = None, fix: bool = False, matrix: str = "") -> None:
    """Check QEMU user emulation: binfmt_misc, handlers, static QEMU, uname -m smoke run."""
    s = _settings(c)
    native = Arch.native()
    archs = _archs(arch)
    m = matrix_mod.load(Path(matrix or s["matrix"]))
    if not archs:
        archs = sorted({t.arch for t in m.targets if t.arch is not native}, key=lambda a: a.key)
    if fix:
        for action in emulation.fix(archs):
            print(f"fixed: {action}")
    problems = []
    client = None
    try:
        client = engine.connect()
    except ArchbenchError as exc:
        problems.append(str(exc))
    for a in archs:
        try:
            st = emulation.check(a)
        except EmulationError as exc:
            problems.append(f"{a.key}: {exc}")
            print(f"FAIL {a.key:8} {exc}")
            continue
        smoke = "no base image yet (run 'invoke images --arch " + a.key + "')"
        status = "ok  "
        if client is not None:
            for t in m.targets:
                tag = bases.base_tag(t.base, a)
                if t.arch is a and engine.image_labels(client, tag) is not None:
                    try:
                        smoke = "uname -m: " + run.smoke_test(client, tag, a)
                    except EmulationError as exc:
                        problems.append(f"{a.key}: {exc}")
                        smoke = f"smoke test FAILED: {exc}"
                        status = "FAIL"
                    break
        print(
            f"{status} {a.key:8} {st.handler.name} flags {st.handler.flags} -> "
            f"{st.handler.interpreter} (static), QEMU {st.qemu_version}; {smoke}"
        )
    if problems:
        raise EmulationError("emulation preflight found problems:\n  " + "\n  ".join(problems))


@task(
    help={
        "matrix": _SELECT_HELP["matrix"],
        "host": "only these hosts, comma-separated: local and names under 'hosts' (default: all)",
    }
)
@_errors_to_exit
def clean(c: Context, matrix: str = "", host: str | None = None) -> None:
    """Remove containers archbench left on every host of the matrix (label org.archbench)."""
    s = _settings(c)
    m = matrix_mod.load(Path(matrix or s["matrix"]))
    unreachable = []
    names = [LOCAL_HOST, *m.hosts]
    chosen = _split(host, "--host") or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise MatrixError(f"--host: no host {', '.join(unknown)}; known: {', '.join(names)}")
    for name in chosen:
        try:
            client = engine.connect_host(m.host(name), name)
        except ArchbenchError as exc:
            unreachable.append(f"{name}: {exc}")
            continue
        n = 0
        for container in run.leftover_containers(client):
            container.remove(force=True)
            n += 1
        print(f"{name}: removed {n} container(s)")
    if unreachable:
        raise EngineError("could not clean every host:\n  " + "\n  ".join(unreachable))


# GitHub-hosted runners by architecture; the rest run emulated on x86_64 runners.
_RUNNERS = {Arch.AMD64: "ubuntu-24.04", Arch.ARM64: "ubuntu-24.04-arm"}


@task(help={**_SELECT_HELP})
@_errors_to_exit
def ci_matrix(
    c: Context, arch: str | None = None, target: str | None = None, matrix: str = ""
) -> None:
    """Print the targets as a GitHub Actions matrix (JSON) to fan out on native runners."""
    s = _settings(c)
    m = matrix_mod.load(Path(matrix or s["matrix"]))
    include = []
    for t in m.select(_split(target, "--target"), _archs(arch)):
        runner = _RUNNERS.get(t.arch)
        include.append(
            {
                "target": t.name,
                "arch": t.arch.key,
                "platform": t.arch.platform,
                "runs-on": runner or _RUNNERS[Arch.AMD64],
                "emulated": runner is None,
            }
        )
    print(json.dumps({"include": include}, indent=2))


@task(
    name="import",
    # Automatic short flags would give rsa_bits "--" and scheme "-h": long flags only.
    auto_shortflags=False,
    help={
        "logs": "saved output file(s), comma-separated; quoted globs work ('logs/*.log')",
        "setup": "YAML file naming the machine: cpu_model, cores, machine, kernel, os, packages",
        "target": "name for the machine (stored as <results>/<run>/<target>.json)",
        "arch": "its architecture: " + ", ".join(Arch.keys()),
        "run": "run id to store into (default: a new run)",
        "results": "results directory (default from invoke.yaml: results)",
        "cpu": "CPU model (without --setup, or over its cpu_model)",
        "cores": "number of cores (without --setup, or over its cores)",
        "os": "operating system, e.g. 'Debian GNU/Linux 12 (bookworm)' (over the setup's)",
        "kernel": "kernel as uname -a prints it (over the setup's)",
        "scheme": "cs or rsa: the test_helper of logs that do not say (nor their file names)",
        "rsa_bits": "RSA key size of test_helper_rsa logs, which do not print it (RSA_KEYSIZE)",
    },
)
@_errors_to_exit
def import_(
    c: Context,
    logs: str,
    setup: str = "",
    target: str = "",
    arch: str | None = None,
    run: str = "",
    results: str = "",
    cpu: str = "",
    cores: str | None = None,
    os: str = "",
    kernel: str = "",
    scheme: str = "",
    rsa_bits: str | None = None,
) -> None:
    """Import saved perf_crypto_cs/_rsa and test_helper_cs/_rsa output as one machine's results."""
    paths = importer_mod.log_paths(logs)
    if not target:
        raise MatrixError("--target is required: the name the imported machine is stored under")
    archs = _archs(arch) if arch is not None else []
    if len(archs) != 1:
        raise MatrixError(f"--arch: name exactly one architecture ({', '.join(Arch.keys())})")
    overrides: dict[str, object] = {}
    if cpu:
        overrides["cpu_model"] = cpu
    if cores is not None:
        overrides["cores"] = flags.integer("--cores", cores, 1, 65_536)
    if os:
        overrides["os"] = os
    if kernel:
        overrides["kernel"] = kernel
    if setup:
        machine = importer_mod.load_setup(Path(setup), archs[0], overrides)
    elif "cpu_model" in overrides and "cores" in overrides:
        machine = importer_mod.parse_setup(overrides, "command line", archs[0])
    else:
        raise MatrixError(
            "no setup: pass --setup setup.yml, or --cpu and --cores (and --os, --kernel)"
        )
    bits = None if rsa_bits is None else flags.integer("--rsa-bits", rsa_bits, 512, 16384)
    store = ResultStore(Path(results or _settings(c)["results"]))
    run_id = check_run_id(run, "--run") if run else new_run_id()
    helper_scheme = importer_mod.parse_scheme(scheme)
    scans = importer_mod.scan_files(paths, scheme=helper_scheme, rsa_bits=bits)
    result = importer_mod.build_result(scans, machine, target, archs[0], run_id)
    if store.path_for(run_id, target).exists():
        raise ResultsError(
            f"{store.path_for(run_id, target)} exists already; choose another --target "
            "or --run (or remove the file to import again)"
        )
    saved = store.save(result)
    for scan in scans:
        print(importer_mod.describe(scan))
    print(f"wrote {saved}")
    print()
    print(reports.render_markdown_table(result))


def _number(flag: str, text: str, ok: Callable[[float], bool], allowed: str) -> float:
    """``--flag`` as a float, or a ReportError naming the flag, the value and what is allowed."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not ok(value):
        raise ReportError(f"--{flag} {text!r}: give {allowed}")
    return value


@task(
    help={
        "run_a": "run id of A, the reference (results/<run-id>)",
        "run_b": "run id of B, compared with A: B/A above 1 means B is slower",
        "results": "results directory (default from invoke.yaml: results)",
        "out": "where compare-<A>-vs-<B>.tex/.csv go (default from invoke.yaml: reports/out)",
        "target": "only these targets, comma-separated",
        "arch": "only these architectures: " + ", ".join(Arch.keys()),
        "suite": "only rows of these suites, comma-separated (e.g. blindsig)",
        "confidence": "confidence level of the bootstrap interval of B/A (default 0.95)",
        "threshold": "smallest change called slower/faster, as a fraction (default 0.05)",
    }
)
@_errors_to_exit
def compare(
    c: Context,
    run_a: str,
    run_b: str,
    results: str = "",
    out: str = "",
    target: str | None = None,
    arch: str | None = None,
    suite: str | None = None,
    confidence: str = "0.95",
    threshold: str = "0.05",
) -> None:
    """Compare two runs row by row: B/A, its interval and a verdict (faster, slower, no change)."""
    s = _settings(c)
    level = _number("confidence", confidence, lambda v: 0.5 <= v < 1, "a level in [0.5, 1)")
    change = _number("threshold", threshold, lambda v: 0 <= v <= 1, "a fraction in [0, 1]")
    targets, archs = _split(target, "--target"), [a.key for a in _archs(arch)]
    suites = _split(suite, "--suite")
    check_run_id(run_a, "RUN_A"), check_run_id(run_b, "RUN_B")
    store = ResultStore(Path(results or s["results"]))
    known = store.runs()
    missing = [r for r in (run_a, run_b) if r not in known]
    if missing:
        raise ReportError(
            f"no run {', '.join(missing)} in {store.root}; runs there: "
            f"{', '.join(known[-8:]) or 'none'}"
        )
    sides = []
    for run_id in (run_a, run_b):
        loaded, failures = store.load_all([run_id])
        for f in failures:
            print(f"warning: skipped {f.message}")
        sides.append(reports.select_results(loaded, targets=targets, archs=archs, suites=suites))
    from archbench import compare as compare_mod  # numpy and scipy: slow to import

    rows = compare_mod.compare(sides[0], sides[1], confidence=level, threshold=change)
    if not rows:
        raise ReportError(
            f"runs {run_a} and {run_b} have no row in common (same target, suite, scheme, "
            "key size and operation); select one target on each side with --target"
        )
    if run_a == run_b:
        print(f"note: {run_a} is compared with itself; every ratio is 1")
    print(compare_tables.markdown(rows, run_a, run_b, level))
    only_a, only_b = compare_mod.unmatched(sides[0], sides[1])
    for run_id, n in ((run_a, only_a), (run_b, only_b)):
        if n:
            print(f"{n} row(s) only {run_id} measured are left out (no partner to compare)")
    out_dir = Path(out or s["reports"])
    try:
        written = compare_tables.write(rows, run_a, run_b, out_dir, level)
    except OSError as exc:
        raise ReportError(
            f"--out {out_dir}: cannot write the comparison there ({exc.strerror}); give a directory"
        ) from exc
    for p in written:
        print(f"wrote {p}")
