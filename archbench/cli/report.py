"""``invoke report``: render the chapter, exports and plots from stored results only.

Flags are checked here, before any file is read, written or removed;
:func:`archbench.report.render_report` does the rest, and removes afterwards only
files an earlier report listed as its own. No Docker is needed.
"""

from __future__ import annotations

from pathlib import Path

from archbench.cli import options
from archbench.cli.config import Settings
from archbench.inputs import integer
from archbench.report import (
    ReportOptions,
    ReportRequest,
    check_label_prefix,
    parse_style,
    parse_unit,
    render_report,
)
from archbench.result import check_run_id


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
    chosen = ReportOptions(
        unit=parse_unit(unit),
        style=parse_style(style),
        baseline=baseline or None,
        compare_bits=tuple(
            integer("--compare-bits", b, 512, 16384)
            for b in options.split(compare_bits, "--compare-bits")
        )
        or None,
        label_prefix=check_label_prefix(label_prefix),
    )
    targets, archs = options.split(target, "--target"), [a.key for a in options.archs(arch)]
    suites = options.split(suite, "--suite")
    runs = tuple(check_run_id(r, "--run") for r in options.split(run, "--run"))
    request = ReportRequest(
        results=Path(results or s.results),
        out=Path(out or s.reports),
        runs=None if all_runs else runs,
        targets=tuple(targets),
        archs=tuple(archs),
        suites=tuple(suites),
        reference=reference,
        plots=plots,
        options=chosen,
    )
    render_report(request, on_line=print)
