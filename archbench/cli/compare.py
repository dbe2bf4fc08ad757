"""``invoke compare``: two runs row by row, B/A with its bootstrap interval and a verdict."""

from __future__ import annotations

from pathlib import Path

from archbench import report as reports
from archbench.cli import options
from archbench.cli.config import Settings
from archbench.errors import ReportError
from archbench.report import compare_tables
from archbench.result import ResultStore, check_run_id


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
    ``compare-<A>-vs-<B>.tex``/``.csv`` into ``out`` (default: the settings' reports).

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
    store = ResultStore(Path(results or s.results))
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
    from archbench.analysis import compare as compare_mod  # numpy and scipy: slow to import

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
    out_dir = Path(out or s.reports)
    try:
        written = compare_tables.write(rows, run_a, run_b, out_dir, level)
    except OSError as exc:
        raise ReportError(
            f"--out {out_dir}: cannot write the comparison there ({exc.strerror}); give a directory"
        ) from exc
    for p in written:
        print(f"wrote {p}")
