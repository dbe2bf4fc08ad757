"""``invoke compare``: two runs row by row, B/A with its bootstrap interval and a verdict."""

from __future__ import annotations

from pathlib import Path

from archbench.cli import options
from archbench.cli.config import Settings
from archbench.report import CompareRequest, compare_runs
from archbench.result import check_run_id


def compare(
    s: Settings,
    *,
    run_a: str,
    run_b: str,
    results: str,
    out: str,
    target: str | None,
    arch: str | None,
    suite: str | None,
    confidence: str,
    threshold: str,
) -> None:
    """``invoke compare``: print B/A per row shared by both runs; write ``.tex`` and ``.csv``.

    ``confidence`` is the level of the bootstrap interval of B/A in [0.5, 1);
    ``threshold`` the smallest change (a fraction in [0, 1]) called slower or
    faster (:func:`archbench.analysis.compare.compare`). Writes
    ``compare-<A>-vs-<B>.tex``/``.csv`` into ``out`` (default: the settings' reports;
    :func:`archbench.report.compare_runs`).

    Raises:
        ReportError: a flag value is not allowed, a run is unknown, the runs share
            no row, or ``out`` cannot be written.
        MatrixError: an empty selection or an unknown architecture.
        ResultsError: a run id that is not one.
    """
    level = options.number("confidence", confidence, lambda v: 0.5 <= v < 1, "a level in [0.5, 1)")
    change = options.number("threshold", threshold, lambda v: 0 <= v <= 1, "a fraction in [0, 1]")
    targets, archs = options.split(target, "--target"), [a.key for a in options.archs(arch)]
    suites = options.split(suite, "--suite")
    check_run_id(run_a, "RUN_A"), check_run_id(run_b, "RUN_B")
    request = CompareRequest(
        results=Path(results or s.results),
        out=Path(out or s.reports),
        run_a=run_a,
        run_b=run_b,
        targets=tuple(targets),
        archs=tuple(archs),
        suites=tuple(suites),
        confidence=level,
        threshold=change,
    )
    compare_runs(request, on_line=print)
