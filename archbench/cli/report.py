"""``invoke report``: render the chapter, exports and plots from stored results only.

Flags are checked before any file is read, written or removed; afterwards only
files an earlier report listed as its own (:mod:`archbench.report.outputs`) are removed.
No Docker is needed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from archbench import report as reports
from archbench.cli import flags, options
from archbench.cli.config import Settings
from archbench.errors import ReportError, ResultsError
from archbench.report import export, formats, outputs
from archbench.report import gnunet_perf as gnunet_perf_tables
from archbench.report import instructions as instructions_tables
from archbench.result import Result, ResultStore, check_run_id
from archbench.upstream import reference as reference_mod


def select_counted(
    counted: list[Result], targets: list[str], archs: list[str], suites: list[str]
) -> list[Result]:
    """Instruction-count results of the selection; none (not an error) when none match."""
    if not counted:
        return []
    try:
        return reports.select_results(counted, targets=targets, archs=archs, suites=suites)
    except ReportError:
        return []


def report(
    s: Settings,
    *,
    run: str | None,
    all_runs: bool,
    results: str,
    out: str,
    target: str | None,
    arch: str | None,
    suite: str | None,
    reference: bool,
    baseline: str,
    style: str,
    unit: str,
    compare_bits: str | None,
    plots: bool,
    label_prefix: str,
) -> None:
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
    chosen_options = reports.ReportOptions(
        unit=reports.parse_unit(unit),
        style=reports.parse_style(style),
        baseline=baseline or None,
        compare_bits=tuple(
            flags.integer("--compare-bits", b, 512, 16384)
            for b in options.split(compare_bits, "--compare-bits")
        )
        or None,
        label_prefix=formats.check_label_prefix(label_prefix),
    )
    targets, archs = options.split(target, "--target"), [a.key for a in options.archs(arch)]
    suites = options.split(suite, "--suite")
    runs_asked = [check_run_id(r, "--run") for r in options.split(run, "--run")]
    store = ResultStore(Path(results or s.results))
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
    out_dir = Path(out or s.reports)
    counted = select_counted(counted, targets, archs, suites)
    paths: list[Path] = []
    if chosen or not counted:
        # The tidy frame is built once for the chapter, the exports and the plots.
        data = reports.prepare(chosen, failures)
        plot_paths: list[Path] = []
        if plots:
            from archbench.report import plots as plots_mod  # matplotlib: slow to import

            # Drawn first so the chapter can reference every figure it has.
            plot_paths, listed = plots_mod.write_listed(data, out_dir, chosen_options.unit)
            chosen_options = dataclasses.replace(chosen_options, figures=listed)
        paths += reports.write_reports(data, failures, out_dir, chosen_options)
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
