"""invoke tasks: the command line of archbench. Only this file knows invoke.

Each task parses its flags, calls the library, and turns an
:class:`archbench.errors.ArchbenchError` into ``Exit(message, code)``.
Run ``invoke --list`` for the tasks and ``invoke --help TASK`` for flags.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from invoke.context import Context
from invoke.exceptions import Exit
from invoke.tasks import task

from archbench import (
    bases,
    counting,
    emulation,
    engine,
    export,
    instructions_tables,
    pipeline,
    reports,
    run,
)
from archbench import importer as importer_mod
from archbench import matrix as matrix_mod
from archbench import plots as plots_mod
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
from archbench.results import ResultStore, RunManifest, load, merge_repeats, new_run_id

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


def _settings(c: Context) -> dict[str, str]:
    cfg = c.config.get("archbench", {})
    return {
        "matrix": str(cfg.get("matrix", "matrix.yml")),
        "results": str(cfg.get("results", "results")),
        "reports": str(cfg.get("reports", "reports/out")),
        "work": str(cfg.get("work", ".archbench/work")),
    }


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _archs(value: str) -> list[Arch]:
    try:
        return [Arch.from_key(a) for a in _split(value)]
    except ValueError as exc:
        raise MatrixError(f"--arch: {exc}") from exc


def _overrides(
    iterations: int | None,
    repetitions: int | None,
    rsa_bits: str,
    warmup: int | None = None,
    max_time: float | None = None,
) -> dict[str, object]:
    out: dict[str, object] = {}
    if warmup is not None:
        out["warmup"] = int(warmup)
    if max_time is not None:
        out["max_time"] = float(max_time)
    if iterations is not None:
        out["iterations"] = int(iterations)
    if repetitions is not None:
        out["repetitions"] = int(repetitions)
    if rsa_bits:
        try:
            out["rsa_bits"] = [int(b) for b in _split(rsa_bits)]
        except ValueError as exc:
            raise MatrixError(
                f"--rsa-bits: {rsa_bits!r} is not a comma-separated list of ints"
            ) from exc
    return out


def _pipeline(
    c: Context,
    arch: str,
    target: str,
    matrix: str,
    *,
    build_only: bool,
    rebuild: bool,
    overrides: dict[str, object] | None = None,
    repeat: int = 1,
    cpuset: str | None = None,
    resume: str = "",
    suites: Sequence[str] = (),
    metrics: Sequence[str] = (),
) -> tuple[ResultStore, str, list[pipeline.TargetOutcome]]:
    s = _settings(c)
    store = ResultStore(Path(s["results"]))
    if resume:
        manifest = store.load_manifest(resume)
        m = matrix_mod.parse(manifest.matrix_text, f"{manifest.matrix_file} (as of run {resume})")
        chosen = m.select(manifest.targets)
        overrides, repeat, cpuset = manifest.overrides, manifest.repeat, manifest.cpuset
        suites = manifest.suites
    else:
        path = Path(matrix or s["matrix"])
        m = matrix_mod.load(path)
        chosen = m.select(_split(target), _archs(arch))
        manifest = RunManifest(
            run_id=new_run_id(),
            started_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            matrix_file=str(path),
            matrix_text=path.read_text(encoding="utf-8"),
            targets=tuple(t.name for t in chosen),
            overrides=overrides or {},
            repeat=repeat,
            cpuset=cpuset,
            suites=tuple(suites),
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
    )
    if not build_only:
        store.save_manifest(manifest)
    ws = pipeline.Workspace(store=store, run_id=run_id, work_dir=Path(s["work"]))
    with RichReporter() as reporter:
        reporter.console.print(f"run {run_id}")
        for p in plans:
            mode = "emulated (QEMU)" if p.emulated else "native"
            previous = store.previous_seconds(p.name, before=run_id)
            where = f"{p.host_name}, {p.target.arch.platform} {mode}"
            reporter.expect(p.name, sum(previous.values()) if previous else None, where)
        try:
            outcomes = pipeline.execute(
                clients,
                plans,
                ws,
                host_archs,
                reporter=reporter,
                build_only=build_only,
                rebuild=rebuild,
                resume=bool(resume),
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
        "iterations": "blindsig: override operations per timed block (the thesis's 10x)",
        "repetitions": "blindsig: override timed blocks per row",
        "rsa_bits": "blindsig: override RSA key sizes, comma-separated (e.g. 1024,2048)",
        "rebuild": "rebuild bases and images even when up to date",
        "repeat": "independent container runs per target (fresh process each), merged in reports",
        "cpuset": "pin benchmark containers to these CPUs (Docker cpuset, e.g. 1 or 0-1)",
        "warmup": "blindsig: override warmup repetitions (run and discarded)",
        "max_time": "blindsig: override the time budget in s per scheme and key size",
        "resume": "RUN_ID of an interrupted run: keep its complete targets, measure the rest",
        "suite": "run only these suites, comma-separated: blindsig, openssl-speed, rsa-large, "
        "gnupg, sodium, taler-helper (settings from the matrix, else the suite's defaults)",
        "metric": "time (default), instructions, or time,instructions: instructions per "
        "operation counted under QEMU with archbench's TCG plugin (matrix key 'metrics')",
    }
)
@_errors_to_exit
def bench(
    c: Context,
    arch: str = "",
    target: str = "",
    matrix: str = "",
    iterations: int | None = None,
    repetitions: int | None = None,
    rsa_bits: str = "",
    rebuild: bool = False,
    repeat: int = 1,
    cpuset: str = "",
    warmup: int | None = None,
    max_time: float | None = None,
    resume: str = "",
    suite: str = "",
    metric: str = "",
) -> None:
    """Build (if needed) and run the benchmark for matrix targets; print their tables."""
    store, run_id, outcomes = _pipeline(
        c,
        arch,
        target,
        matrix,
        build_only=False,
        rebuild=rebuild,
        overrides=_overrides(iterations, repetitions, rsa_bits, warmup, max_time),
        repeat=int(repeat),
        cpuset=cpuset or None,
        resume=resume,
        suites=_split(suite),
        metrics=counting.parse_metrics(metric) if metric else (),
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


@task(help={**_SELECT_HELP, "rebuild": "rebuild bases and images even when up to date"})
@_errors_to_exit
def images(
    c: Context, arch: str = "", target: str = "", matrix: str = "", rebuild: bool = False
) -> None:
    """Bootstrap bases and build benchmark images only (no measurement)."""
    _, _, outcomes = _pipeline(c, arch, target, matrix, build_only=True, rebuild=rebuild)
    _raise_failures(outcomes)


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
    }
)
@_errors_to_exit
def report(
    c: Context,
    run: str = "",
    all_runs: bool = False,
    results: str = "",
    out: str = "",
    target: str = "",
    arch: str = "",
    suite: str = "",
    reference: bool = False,
    baseline: str = "",
    style: str = "thesis",
    unit: str = "ms",
    compare_bits: str = "",
    plots: bool = True,
) -> None:
    """Render the Performance Measurements chapter, exports and plots (no Docker needed)."""
    s = _settings(c)
    store = ResultStore(Path(results or s["results"]))
    if not store.root.is_dir() and not reference:
        raise ReportError(
            f"results directory {store.root} does not exist; run 'invoke bench' first, "
            "or pass --results DIR (or --reference for the thesis's data alone)"
        )
    known = store.runs()
    if all_runs:
        runs = None
    elif run:
        runs = _split(run)
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
    loaded, failures = store.load_all(runs)
    if reference:
        shipped, bad = reference_mod.load_reference()
        loaded += shipped
        failures += bad
    for f in failures:
        print(f"warning: skipped {f.message}")
    try:
        bits = tuple(int(b) for b in _split(compare_bits)) or None
    except ValueError as exc:
        raise ReportError(f"--compare-bits: {compare_bits!r} is not a list of ints") from exc
    options = reports.ReportOptions(
        unit=reports.parse_unit(unit),
        style=reports.parse_style(style),
        baseline=baseline or None,
        compare_bits=bits,
    )
    chosen = reports.select_results(
        loaded,
        targets=_split(target),
        archs=[a.key for a in _archs(arch)],
        suites=_split(suite),
    )
    out_dir = Path(out or s["reports"])
    # Figures and the GnuPG CSV of machines or suites no longer selected must
    # not linger beside the new tables; whatever applies is written again below.
    stale_files = [*out_dir.glob("fig-*.png"), *out_dir.glob("fig-*.pdf")]
    stale_files += [p for p in [out_dir / export.GNUPG_CSV_FILE] if p.exists()]
    for stale in stale_files:
        stale.unlink()
    counted, count_failures = store.load_all(runs, metric="instructions")
    failures += count_failures
    counted = reports.select_results(
        counted, targets=_split(target), archs=[a.key for a in _archs(arch)], suites=_split(suite)
    )
    paths = reports.write_reports(chosen, failures, out_dir, options)
    paths += export.write_exports(chosen, out_dir, counted)
    paths += instructions_tables.write_all(counted, chosen, out_dir)
    if plots:
        paths += plots_mod.write_plots(chosen, out_dir, options.unit)
    for p in paths:
        print(f"wrote {p}")
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
def doctor(c: Context, arch: str = "", fix: bool = False, matrix: str = "") -> None:
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


@task(help={"matrix": _SELECT_HELP["matrix"]})
@_errors_to_exit
def clean(c: Context, matrix: str = "") -> None:
    """Remove containers archbench left on every host of the matrix (label org.archbench)."""
    s = _settings(c)
    m = matrix_mod.load(Path(matrix or s["matrix"]))
    unreachable = []
    for name in [LOCAL_HOST, *m.hosts]:
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
def ci_matrix(c: Context, arch: str = "", target: str = "", matrix: str = "") -> None:
    """Print the targets as a GitHub Actions matrix (JSON) to fan out on native runners."""
    s = _settings(c)
    m = matrix_mod.load(Path(matrix or s["matrix"]))
    include = []
    for t in m.select(_split(target), _archs(arch)):
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
    arch: str = "",
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
    archs = _archs(arch)
    if len(archs) != 1:
        raise MatrixError(f"--arch: name exactly one architecture ({', '.join(Arch.keys())})")
    overrides: dict[str, object] = {}
    if cpu:
        overrides["cpu_model"] = cpu
    if cores is not None:
        try:
            overrides["cores"] = int(cores)
        except ValueError as exc:
            raise MatrixError(f"--cores: {cores!r} is not a whole number") from exc
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
    try:
        bits = None if rsa_bits is None else int(rsa_bits)
    except ValueError as exc:
        raise MatrixError(f"--rsa-bits: {rsa_bits!r} is not a whole number") from exc
    store = ResultStore(Path(results or _settings(c)["results"]))
    run_id = run or new_run_id()
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
