"""The bodies of the invoke tasks: each checks its flags, calls a stage and prints.

``tasks.py`` (the only module that knows invoke) puts each task's flags, as the
strings invoke parsed, into one frozen object (:mod:`archbench.cli.options`) and
calls the body here with the resolved ``invoke.yaml`` settings:

* ``bench``, ``images``: the flags become one frozen :class:`archbench.run.BenchOptions`
  before the matrix is read or an engine is called; the run itself (manifests,
  engines, plans, schedule) is :func:`archbench.run.bench`. Printed: each target's
  end (stage seconds) and, for ``bench``, each stored result's Markdown table.
* ``report``: flags are checked before any file is read, written or removed;
  :func:`archbench.report.render_report` does the rest and removes afterwards only
  files an earlier report listed as its own. No Docker is needed.
* ``compare``: two runs row by row, B/A with its bootstrap interval and a verdict
  (:func:`archbench.report.compare_runs`).
* ``import``: saved GNUnet ``perf_crypto_*`` / Taler ``test_helper_*`` output as a
  machine's results (:func:`archbench.upstream.import_logs`).
* ``archive``: one directory (or tar) with a run's images, matrix, results and
  report (:func:`archbench.run.create_archive`).
* ``doctor``, ``clean``, ``ci-matrix``: the hosts targets run on: QEMU user
  emulation on this machine, the containers archbench left on the matrix's hosts,
  the targets as a GitHub Actions matrix for native runners.

The bodies raise :class:`archbench.errors.ArchbenchError` subclasses; ``tasks.py``
turns them into exit codes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from archbench import matrix, run, upstream
from archbench.analysis import RowLimit, over_limits, parse_metrics
from archbench.build import base_tag, image_labels
from archbench.cli.config import Settings
from archbench.cli.options import (
    ArchiveFlags,
    BenchFlags,
    BisectFlags,
    CiMatrixFlags,
    CleanFlags,
    CompareFlags,
    DoctorFlags,
    HistoryFlags,
    ImagesFlags,
    ImportFlags,
    ReportFlags,
    archs,
    number,
    overrides,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import (
    ArchbenchError,
    EmulationError,
    EngineError,
    LimitExceeded,
    MatrixError,
    ReportError,
    TargetsFailed,
)
from archbench.hosts import check_emulation, connect, connect_host, fix_emulation
from archbench.inputs import cpuset, integer, path_flag, quote
from archbench.matrix import LOCAL_HOST, parse_cpus, parse_gnunet, parse_taler
from archbench.platforms import Arch
from archbench.report import (
    CompareRequest,
    ReportOptions,
    ReportRequest,
    check_label_prefix,
    compare_runs,
    history_changes,
    history_steps,
    parse_style,
    parse_unit,
    render_changes_markdown,
    render_history_markdown,
    render_instructions_markdown,
    render_markdown_table,
    render_report,
    render_steps_markdown,
    write_page_from_store,
)
from archbench.result import (
    ResultStore,
    check_run_id,
    folder_lock,
    load,
    merge_repeats,
    new_run_id,
)
from archbench.run import (
    BenchOptions,
    BenchRun,
    BisectOptions,
    HistoryOptions,
    TargetOutcome,
    check_overrides,
    create_archive,
    leftover_containers,
    smoke_test,
)
from archbench.upstream import (
    LogImport,
    check_import_name,
    describe,
    load_setup,
    log_paths,
    parse_scheme,
    parse_setup,
)


def bench_options(s: Settings, f: BenchFlags) -> BenchOptions:
    """``invoke bench``'s flags and settings, every flag checked, as one options object.

    Raises:
        MatrixError: a flag value is not allowed (nothing read or called yet).
    """
    chosen = overrides(f.iterations, f.repetitions, f.rsa_bits, f.warmup, f.max_time, f.ci_target)
    check_overrides(chosen)
    targets, selected = split(f.target, "--target"), archs(f.arch)
    quota = parse_cpus("--cpus", f.cpus)
    return BenchOptions(
        matrix=given("--matrix", f.matrix, s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        targets=tuple(targets),
        archs=tuple(selected),
        rebuild=f.rebuild,
        overrides=chosen,
        repeat=1 if f.repeat is None else integer("--repeat", f.repeat, 1, 100),
        cpuset=cpuset("--cpuset", f.cpuset),
        cpus=quota,
        resume=f.resume,
        suites=tuple(split(f.suite, "--suite")),
        from_archive=path_flag("--from-archive", f.from_archive) if f.from_archive else None,
        metrics=parse_metrics(f.metric) if f.metric is not None else (),
        apt_proxy=s.apt_proxy,
        build_jobs=s.build_jobs,
        gnunet=parse_gnunet(f.gnunet) if f.gnunet is not None else None,
        taler=parse_taler(f.taler) if f.taler is not None else None,
    )


def given(flag: str, value: str, default: str) -> Path:
    """The path ``--flag`` names (checked by :func:`archbench.inputs.path_flag`), or the
    setting ``default`` when the flag was not given.

    Raises:
        MatrixError: a path no file system takes (a NUL byte, a name over 255 bytes).
    """
    return path_flag(flag, value) if value else Path(default)


def bisect(s: Settings, f: BisectFlags) -> None:
    """``invoke bisect``: the commit(s) between two refs that moved a row's instructions
    per operation, on each selected architecture (:func:`archbench.run.bisect`).

    Prints every step as it is measured (with an ETA), the outcome per architecture,
    the number of steps and the wall time, and where ``bisect.json`` is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        SourceError: a ref names no commit, or good is not an ancestor of bad.
        TargetsFailed: good or bad did not build or run on some architecture.
        ArchbenchError: whatever :func:`archbench.run.measure_bisection` raises.
    """
    if f.metric != "instructions":
        raise MatrixError(
            f"--metric {quote(f.metric)}: invoke bisect decides on instructions (exact counts); "
            "timed bisection is not implemented"
        )
    chosen = overrides(None, f.repetitions, f.rsa_bits, None, None, None)
    check_overrides(chosen)
    if f.resume:
        check_run_id(f.resume, "--resume", MatrixError)
        given = [n for n, v in (("--gnunet", f.gnunet), ("--good", f.good), ("--bad", f.bad),
                                ("--row", f.row), ("--arch", f.arch), ("--target", f.target))
                 if v]  # fmt: skip
        if given:
            raise MatrixError(
                f"--resume takes the bisection's own {', '.join(given)}: give none of them"
            )
        options = BisectOptions(
            matrix=Path(f.matrix or s.matrix),
            results=Path(s.results),
            work=Path(s.work),
            resume=f.resume,
            apt_proxy=s.apt_proxy,
            on_wait=show,
        )
    else:
        missing = [n for n, v in (("--gnunet", f.gnunet), ("--good", f.good),
                                  ("--bad", f.bad), ("--row", f.row)) if not v]  # fmt: skip
        if missing:
            raise MatrixError(
                f"invoke bisect needs {', '.join(missing)} (e.g. --gnunet git+file:///srv/"
                "gnunet.git --good v0.21.2 --bad v0.22.2 --row 'CS signing')"
            )
        assert f.gnunet and f.good and f.bad and f.row
        if not f.gnunet.startswith("git+") or "@" in f.gnunet.rpartition("/")[2]:
            raise MatrixError(
                f"--gnunet {quote(f.gnunet)}: give git+URL without @REF "
                "(the refs are --good, --bad)"
            )
        url = f.gnunet[len("git+") :]
        # The grammar of a git source checks the URL and each ref as for bench --gnunet.
        for ref in (f.good, f.bad):
            parse_gnunet(f"git+{url}@{ref}", "--good/--bad")
        options = BisectOptions(
            matrix=Path(f.matrix or s.matrix),
            results=Path(s.results),
            work=Path(s.work),
            url=url,
            good=f.good,
            bad=f.bad,
            row=run.parse_row(f.row),
            archs=tuple(archs(f.arch)),
            targets=tuple(split(f.target, "--target")),
            overrides=chosen,
            apt_proxy=s.apt_proxy,
            on_wait=show,
        )
    done = run.measure_bisection(options)
    show()
    for line in done.manifest.outcome.splitlines():
        show(line)
    steps = len(done.manifest.steps)
    builds = sum(len(st.counts) for st in done.manifest.steps)
    total = sum(st.seconds for st in done.manifest.steps)
    show(
        f"{steps} steps ({builds} builds and counts), {total / 60:.1f} min measuring in all"
        f" ({done.seconds / 60:.1f} min this session)"
    )
    where = done.store.root / done.manifest.bisect_id / "bisect.json"
    show(f"bisection: {where}")
    failed = [st.arch for st in done.states if st.status == "failed"]
    if failed:
        raise TargetsFailed(
            f"{done.manifest.good} or {done.manifest.bad} did not build or run on "
            f"{', '.join(failed)}: see the steps in {where}"
        )


def history(s: Settings, f: HistoryFlags) -> None:
    """``invoke history``: build, measure in interleaved rounds and count a series of versions.

    Prints the history's tables (instructions and times per operation across the
    versions, :func:`archbench.report.render_history_markdown`) and where it is stored,
    and writes the results page of the history into the reports folder
    (:func:`archbench.report.write_page_from_store`).

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed in some versions; the rest is kept.
        LimitExceeded: ``--fail-above``: a counted row steps up beyond the limit.
        ArchbenchError: whatever :func:`archbench.run.measure_history` raises.
    """
    chosen = overrides(f.iterations, f.repetitions, f.rsa_bits, f.warmup, f.max_time, f.ci_target)
    check_overrides(chosen)
    limit = (
        None
        if f.fail_above is None
        else number("fail-above", f.fail_above, lambda v: 1 <= v <= 100, "a ratio such as 1.02")
    )
    sources = tuple(parse_gnunet(text, "--gnunet") for text in split(f.gnunet, "--gnunet"))
    bases = tuple(split(f.base, "--base"))
    talers = tuple(parse_taler(text, "--taler") for text in split(f.taler, "--taler"))
    if f.extend:
        check_run_id(f.extend, "--extend", MatrixError)
    options = HistoryOptions(
        matrix=given("--matrix", f.matrix, s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        sources=sources,
        bases=bases,
        talers=talers,
        targets=tuple(split(f.target, "--target")),
        archs=tuple(archs(f.arch)),
        overrides=chosen,
        suites=tuple(split(f.suite, "--suite")),
        cpus=parse_cpus("--cpus", f.cpus),
        rounds=8 if f.rounds is None else integer("--rounds", f.rounds, 1, 100),
        seed=None if f.seed is None else integer("--seed", f.seed, 0, 2**31 - 1),
        extend=f.extend or None,
        apt_proxy=s.apt_proxy,
        build_jobs=integer("invoke.yaml archbench.build_jobs", s.build_jobs, 1, 16),
        on_wait=show,
    )
    done = run.measure_history(options)
    results = {
        v.run_id: [load(p) for p in done.store.files([v.run_id])] for v in done.manifest.versions
    }
    show()
    show(render_history_markdown(done.manifest, results))
    steps = history_steps(done.manifest, results)
    alone = history_steps(done.manifest, results, rate=1.0)
    show(render_steps_markdown(steps, sum(step.metric == "time" for _, _, step in alone)))
    show(render_changes_markdown(history_changes(done.manifest, results)))
    # The page's folder is invoke report's --out: one writer at a time.
    with folder_lock(Path(s.reports), ReportError, "--out", show):
        for p in write_page_from_store(
            done.store, Path(s.reports), histories=[(done.manifest, results)]
        ):
            show(f"wrote {p}")
    where = done.store.root / done.manifest.history_id / "history.json"
    show(f"history: {where}   (extend: invoke history --extend {done.manifest.history_id} ...)")
    raise_failures([o for outcomes in done.outcomes.values() for o in outcomes])
    limits = matrix.load(options.matrix).row_limits
    if limit is not None or limits:
        over = over_limits([(key, step) for _, key, step in steps], limit, limits)
        if over:
            gate = f"--fail-above {limit}" if limit is not None else "the matrix's limits"
            raise LimitExceeded(
                f"{len(over)} counted step(s) grew beyond {gate}: "
                + "; ".join(
                    f"{arch} {key.label} {step.before} → {step.after} {step.ratio:.3f}×"
                    f" (limit {lim:g})"
                    for arch, key, step in steps
                    for item, lim in over
                    if item is step
                )
            )


def images_options(s: Settings, f: ImagesFlags) -> BenchOptions:
    """``invoke images``'s flags and settings as one options object (``build_only``).

    Raises:
        MatrixError: an empty selection or an unknown architecture.
    """
    return BenchOptions(
        matrix=given("--matrix", f.matrix, s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        targets=tuple(split(f.target, "--target")),
        archs=tuple(archs(f.arch)),
        build_only=True,
        rebuild=f.rebuild,
        apt_proxy=s.apt_proxy,
        build_jobs=s.build_jobs,
    )


def print_outcomes(done: BenchRun) -> None:
    """One line per target: ``kept``, ``ok`` or ``FAILED`` and its stage seconds."""
    for o in done.outcomes:
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items())
        state = "kept" if o.skipped else "ok" if o.ok else "FAILED"
        show(f"{o.name}: {state}" + (f" ({stages})" if stages else ""))


def raise_failures(outcomes: Sequence[TargetOutcome]) -> None:
    """Raise :class:`TargetsFailed` naming each failed target and why, if any failed."""
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines = "\n".join(f"  {o.name}: {o.message}" for o in failed)
        kept = len(outcomes) - len(failed)
        raise TargetsFailed(f"{len(failed)} target(s) failed ({kept} kept their results):\n{lines}")


def bench(s: Settings, f: BenchFlags) -> None:
    """``invoke bench``: build (if needed) and run the selected targets; print their tables.

    Prints each target's end, each stored result's Markdown table (timings, or
    instruction counts) and where the run is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed; the others' results are kept.
        ArchbenchError: whatever :func:`archbench.run.bench` raises.
    """
    # One bench at a time per results folder (run.bench takes its lock once the flags
    # and engines are checked); a second waits and says so.
    done = run.bench(dataclasses.replace(bench_options(s, f), on_wait=show))
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


def images(s: Settings, f: ImagesFlags) -> None:
    """``invoke images``: bootstrap bases and build benchmark images only (no measurement).

    Raises:
        MatrixError: an empty selection or an unknown architecture.
        TargetsFailed: some targets' bases or images did not build; their logs are kept.
        ArchbenchError: whatever :func:`archbench.run.bench` raises.
    """
    done = run.bench(images_options(s, f))
    print_outcomes(done)
    raise_failures(done.outcomes)


def report(s: Settings, f: ReportFlags) -> None:
    """``invoke report``: render the latest run (or ``run``, or ``all_runs``) into ``out``.

    Writes the chapter (``appendix.tex``, ``appendix-standalone.tex``,
    ``appendix.md``), the exports (``results.csv``/``.json``), the suites'
    tables, the instruction tables and, with ``plots``, ``fig-*.png``/``.pdf``;
    prints each path written and each earlier output removed.

    Raises:
        MatrixError, ReportUsageError: a flag value is not allowed (nothing read or written).
        ReportError: no results directory, an unknown run, or nothing to render.
        ResultsError: a ``run`` that is not a run id, or rendered without results
            files that could not be loaded (named).
    """
    # Arguments are checked before any file is read or removed.
    chosen = ReportOptions(
        unit=parse_unit(f.unit),
        style=parse_style(f.style),
        baseline=f.baseline or None,
        compare_bits=tuple(
            integer("--compare-bits", b, 512, 16384)
            for b in split(f.compare_bits, "--compare-bits")
        )
        or None,
        label_prefix=check_label_prefix(f.label_prefix),
    )
    targets = split(f.target, "--target")
    arch_keys = [a.key for a in archs(f.arch)]
    suites = split(f.suite, "--suite")
    runs = tuple(check_run_id(r, "--run", MatrixError) for r in split(f.run, "--run"))
    request = ReportRequest(
        results=given("--results", f.results, s.results),
        out=given("--out", f.out, s.reports),
        runs=None if f.all_runs else runs,
        targets=tuple(targets),
        archs=tuple(arch_keys),
        suites=tuple(suites),
        reference=f.reference,
        plots=f.plots,
        options=chosen,
    )
    render_report(request, on_line=show)


def compare(s: Settings, f: CompareFlags) -> None:
    """``invoke compare``: print B/A per row shared by both runs; write ``.tex`` and ``.csv``.

    ``confidence`` is the level of the bootstrap interval of B/A in [0.5, 1);
    ``threshold`` the smallest change (a fraction in [0, 1]) called slower or
    faster (:func:`archbench.analysis.comparison.compare`). Writes
    ``compare-<A>-vs-<B>.tex``/``.csv`` into ``out`` (default: the settings' reports;
    :func:`archbench.report.compare_runs`).

    Raises:
        ReportError: a flag value is not allowed, a run is unknown, the runs share
            no row, or ``out`` cannot be written.
        LimitExceeded: ``--fail-above``: a counted row grew beyond the limit.
        MatrixError: an empty selection or an unknown architecture.
        ResultsError: a run id that is not one.
    """
    level = number("confidence", f.confidence, lambda v: 0.5 <= v < 1, "a level in [0.5, 1)")
    change = number("threshold", f.threshold, lambda v: 0 <= v <= 1, "a fraction in [0, 1]")
    limit = (
        None
        if f.fail_above is None
        else number("fail-above", f.fail_above, lambda v: 1 <= v <= 100, "a ratio such as 1.02")
    )
    targets = split(f.target, "--target")
    arch_keys = [a.key for a in archs(f.arch)]
    suites = split(f.suite, "--suite")
    check_run_id(f.run_a, "RUN_A", MatrixError), check_run_id(f.run_b, "RUN_B", MatrixError)
    request = CompareRequest(
        results=given("--results", f.results, s.results),
        out=given("--out", f.out, s.reports),
        run_a=f.run_a,
        run_b=f.run_b,
        targets=tuple(targets),
        archs=tuple(arch_keys),
        suites=tuple(suites),
        confidence=level,
        threshold=change,
        fail_above=limit,
        limits=_matrix_limits(Path(s.matrix)),
    )
    compare_runs(request, on_line=show)


def _matrix_limits(path: Path) -> tuple[RowLimit, ...]:
    """matrix.yml's ``limits:`` for ``invoke compare``'s gate; none without a matrix file
    (comparing stored runs needs none).

    Raises:
        MatrixError: the file exists and is invalid.
    """
    return matrix.load(path).row_limits if path.is_file() else ()


def import_logs(s: Settings, f: ImportFlags) -> None:
    """``invoke import``: store the logs ``logs`` names as the results of machine ``target``.

    The machine is described by ``setup`` (a YAML file) and/or ``cpu``, ``cores``,
    ``os``, ``kernel`` (which win); the results go to ``<results>/<run>/<target>.json``
    (a new run unless ``run``; :func:`archbench.upstream.import_logs`). Prints what
    each log held, the path and the table.

    Raises:
        MatrixError: no ``target``, not exactly one ``arch``, no machine description,
            a flag value that is not allowed, or a bad setup file.
        ResultsError: no log matches, a log cannot be read or gives no sample, or
            the results file exists already (never overwritten).
    """
    paths = log_paths(str(path_flag("LOGS", f.logs)))
    if not f.target:
        raise MatrixError("--target is required: the name the imported machine is stored under")
    check_import_name(f.target, "--target")
    chosen = archs(f.arch) if f.arch is not None else []
    if len(chosen) != 1:
        raise MatrixError(f"--arch: name exactly one architecture ({', '.join(Arch.keys())})")
    overrides: dict[str, object] = {}
    if f.cpu:
        overrides["cpu_model"] = f.cpu
    if f.cores is not None:
        overrides["cores"] = integer("--cores", f.cores, 1, 65_536)
    if f.os:
        overrides["os"] = f.os
    if f.kernel:
        overrides["kernel"] = f.kernel
    if f.setup:
        machine = load_setup(path_flag("--setup", f.setup), chosen[0], overrides)
    elif "cpu_model" in overrides and "cores" in overrides:
        machine = parse_setup(overrides, "command line", chosen[0])
    else:
        raise MatrixError(
            "no setup: pass --setup setup.yml, or --cpu and --cores (and --os, --kernel)"
        )
    bits = None if f.rsa_bits is None else integer("--rsa-bits", f.rsa_bits, 512, 16384)
    run_id = check_run_id(f.run, "--run", MatrixError) if f.run else new_run_id()
    request = LogImport(
        paths=tuple(paths),
        setup=machine,
        target=f.target,
        arch=chosen[0],
        run_id=run_id,
        results=given("--results", f.results, s.results),
        scheme=parse_scheme(f.scheme),
        rsa_bits=bits,
    )
    imported = upstream.import_logs(request, on_wait=show)
    for scan in imported.scans:
        show(describe(scan))
    show(f"wrote {imported.path}")
    show()
    show(render_markdown_table(imported.result))


def archive(s: Settings, f: ArchiveFlags) -> None:
    """``invoke archive``: write run ``run_id`` to ``out`` (default ``archives/<run-id>``).

    Prints the path, size in MB, seconds taken, archive id and the sha256 of its
    ``manifest.json``, and the command that reruns it elsewhere.

    Raises:
        ArchiveError: ``out`` exists, or an image or file of the run cannot be saved.
        ResultsError: the run is unknown or its manifest cannot be read.
        EngineError: the engine cannot be reached to save the images.
    """
    store = ResultStore(given("--results", f.results, s.results))
    summary = create_archive(
        store,
        f.run_id,
        given("--out", f.out, f"archives/{f.run_id}"),
        tar=f.tar,
        plots=f.plots,
        on_line=show,
    )
    show(
        f"wrote {summary.path}: {summary.total_bytes / 1e6:.0f} MB in {summary.seconds:.1f} s, "
        f"archive {summary.archive_id}, manifest sha256 {summary.manifest_sha256}"
    )
    show(f"rerun elsewhere: invoke bench --from-archive {summary.path}")


def doctor(s: Settings, f: DoctorFlags) -> None:
    """``invoke doctor``: binfmt_misc, the QEMU handlers, static QEMU, a ``uname -m`` smoke run.

    Checks ``f.arch`` (default: every emulated architecture of the matrix); with
    ``f.fix`` first installs and registers what is missing (root, Debian). Prints
    one line per architecture.

    Raises:
        EmulationError: any architecture failed a check (all of them listed).
        MatrixError: an unknown architecture or a bad matrix.
    """
    native = Arch.native()
    checked = archs(f.arch)
    m = matrix.load(given("--matrix", f.matrix, s.matrix))
    if not checked:
        checked = sorted({t.arch for t in m.targets if t.arch is not native}, key=lambda a: a.key)
    if f.fix:
        for action in fix_emulation(checked):
            show(f"fixed: {action}")
    problems = []
    client = None
    try:
        client = connect()
    except ArchbenchError as exc:
        problems.append(str(exc))
    for a in checked:
        try:
            st = check_emulation(a)
        except EmulationError as exc:
            problems.append(f"{a.key}: {exc}")
            show(f"FAIL {a.key:8} {exc}")
            continue
        smoke = "no base image yet (run 'invoke images --arch " + a.key + "')"
        status = "ok  "
        if client is not None:
            for t in m.targets:
                tag = base_tag(t.base, a)
                if t.arch is a and image_labels(client, tag) is not None:
                    try:
                        smoke = "uname -m: " + smoke_test(client, tag, a)
                    except EmulationError as exc:
                        problems.append(f"{a.key}: {exc}")
                        smoke = f"smoke test FAILED: {exc}"
                        status = "FAIL"
                    break
        show(
            f"{status} {a.key:8} {st.handler.name} flags {st.handler.flags} -> "
            f"{st.handler.interpreter} (static), QEMU {st.qemu_version}; {smoke}"
        )
    if problems:
        raise EmulationError("emulation preflight found problems:\n  " + "\n  ".join(problems))


def clean(s: Settings, f: CleanFlags) -> None:
    """``invoke clean``: remove containers labelled ``org.archbench`` on the matrix's hosts.

    ``f.host`` names some hosts (``local`` and keys of ``hosts``); default: all.
    Prints how many containers each host had.

    Raises:
        MatrixError: an unknown host name or a bad matrix.
        EngineError: some hosts could not be reached (the others were cleaned).
    """
    m = matrix.load(given("--matrix", f.matrix, s.matrix))
    unreachable = []
    names = [LOCAL_HOST, *m.hosts]
    chosen = split(f.host, "--host") or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        shown = ", ".join(quote(n) for n in unknown[:5])
        raise MatrixError(f"--host: no host {shown}; known: {', '.join(names)}")
    for name in chosen:
        try:
            client = connect_host(m.host(name), name)
        except ArchbenchError as exc:
            unreachable.append(f"{name}: {exc}")
            continue
        n = 0
        for container in leftover_containers(client):
            container.remove(force=True)
            n += 1
        show(f"{name}: removed {n} container(s)")
    if unreachable:
        raise EngineError("could not clean every host:\n  " + "\n  ".join(unreachable))


# GitHub-hosted runners by architecture; the rest run emulated on x86_64 runners.
RUNNERS = {Arch.AMD64: "ubuntu-24.04", Arch.ARM64: "ubuntu-24.04-arm"}


def ci_matrix(s: Settings, f: CiMatrixFlags) -> None:
    """``invoke ci-matrix``: print ``{"include": [...]}``, one entry per selected target.

    Each entry has ``target``, ``arch``, ``platform``, ``runs-on`` (a native
    runner where one exists, else an x86_64 one) and ``emulated``.

    Raises:
        MatrixError: a bad selection or matrix.
    """
    m = matrix.load(given("--matrix", f.matrix, s.matrix))
    include = []
    for t in m.select(split(f.target, "--target"), archs(f.arch)):
        runner = RUNNERS.get(t.arch)
        include.append(
            {
                "target": t.name,
                "arch": t.arch.key,
                "platform": t.arch.platform,
                "runs-on": runner or RUNNERS[Arch.AMD64],
                "emulated": runner is None,
            }
        )
    show(json.dumps({"include": include}, indent=2))
