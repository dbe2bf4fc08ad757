"""``invoke report`` and ``invoke compare``: the report stage's two commands.

Flags (:data:`archbench.cli.flags.REPORT`, :data:`~archbench.cli.flags.COMPARE`) are
checked before any file is read, written or removed; the stored runs are then
rendered (:func:`render_report`: which runs and which of their results; the report
stage writes the folder and removes afterwards only files an earlier report listed as
its own) or compared row by row (:func:`compare_runs`). No Docker is needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archbench import matrix
from archbench.analysis import (
    DEFAULT_BETWEEN_RUNS,
    DEFAULT_CONFIDENCE,
    DEFAULT_THRESHOLD,
    over_limits,
)
from archbench.analysis import (
    compare as compare_rows,
)
from archbench.cli.bench import path_or_setting
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ALL_RUNS,
    BASELINE,
    BETWEEN_RUNS,
    COMPARE,
    COMPARE_BITS,
    COMPARE_OUT,
    COMPARE_TARGET,
    CONFIDENCE,
    FAIL_ABOVE,
    LABEL_PREFIX,
    ONLY_ARCH,
    OUT,
    PLOTS,
    REFERENCE,
    REPORT,
    REPORT_SUITE,
    REPORT_TARGET,
    RESULTS,
    RUN,
    RUN_A,
    RUN_B,
    STYLE,
    THRESHOLD,
    UNIT,
    Given,
    archs,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import LimitExceeded, MatrixError, ReportError, ResultsError
from archbench.report import (
    ReportOptions,
    Timeline,
    build_timeline,
    check_label_prefix,
    describe_comparison,
    latest_runs,
    parse_style,
    parse_unit,
    select_entries,
    select_results,
    write_comparison,
    write_report_folder,
)
from archbench.result import LoadFailure, Result, ResultStore, check_run_id, shown_path
from archbench.upstream import load_reference


def report(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke report``: render the latest run (or ``--run``, or ``--all-runs``) into ``--out``.

    Writes the chapter (``appendix.tex``, ``appendix-standalone.tex``,
    ``appendix.md``), the exports (``results.csv``/``.json``), the suites'
    tables, the instruction tables and, with ``--plots``, ``fig-*.png``/``.pdf``;
    prints each path written and each earlier output removed.

    Raises:
        MatrixError, ReportUsageError: a flag value is not allowed (nothing read or written).
        ReportError: no results directory, an unknown run, or nothing to render.
        ResultsError: a ``--run`` that is not a run id, or rendered without results
            files that could not be loaded (named).
    """
    g = Given(REPORT, values)
    # Arguments are checked before any file is read or removed.
    chosen = ReportOptions(
        unit=parse_unit(g.text(UNIT)),
        style=parse_style(g.text(STYLE)),
        baseline=g.text(BASELINE) or None,
        compare_bits=tuple(COMPARE_BITS.integers(g.optional(COMPARE_BITS))) or None,
        label_prefix=check_label_prefix(g.text(LABEL_PREFIX)),
    )
    targets = split(g.optional(REPORT_TARGET), REPORT_TARGET.option)
    arch_keys = [a.key for a in archs(g.optional(ONLY_ARCH))]
    suites = split(g.optional(REPORT_SUITE), REPORT_SUITE.option)
    runs = tuple(
        check_run_id(r, RUN.option, MatrixError) for r in split(g.optional(RUN), RUN.option)
    )
    request = ReportRequest(
        results=path_or_setting(RESULTS.option, g.text(RESULTS), s.results),
        out=path_or_setting(OUT.option, g.text(OUT), s.reports),
        runs=None if g.switch(ALL_RUNS) else runs,
        targets=tuple(targets),
        archs=tuple(arch_keys),
        suites=tuple(suites),
        reference=g.switch(REFERENCE),
        plots=g.switch(PLOTS),
        options=chosen,
    )
    render_report(request, on_line=show)


def compare(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke compare``: print B/A per row shared by both runs; write ``.tex`` and ``.csv``.

    ``--confidence`` is the level of the bootstrap interval of B/A in [0.5, 1);
    ``--threshold`` the smallest change (a fraction in [0, 1]) called slower or
    faster (:func:`archbench.analysis.comparison.compare`). Writes
    ``compare-<A>-vs-<B>.tex``/``.csv`` into ``--out`` (default: the settings'
    reports; :func:`archbench.report.compare_runs`).

    Raises:
        ReportError: a flag value is not allowed, a run is unknown, the runs share
            no row, or ``out`` cannot be written.
        LimitExceeded: ``--fail-above``: a counted row grew beyond the limit.
        MatrixError: an empty selection or an unknown architecture.
        ResultsError: a run id that is not one.
    """
    g = Given(COMPARE, values)
    level = CONFIDENCE.level(g.text(CONFIDENCE))
    change = THRESHOLD.level(g.text(THRESHOLD))
    above = g.optional(FAIL_ABOVE)
    limit = None if above is None else FAIL_ABOVE.level(above)
    targets = split(g.optional(COMPARE_TARGET), COMPARE_TARGET.option)
    arch_keys = [a.key for a in archs(g.optional(ONLY_ARCH))]
    suites = split(g.optional(REPORT_SUITE), REPORT_SUITE.option)
    run_a, run_b = g.text(RUN_A), g.text(RUN_B)
    check_run_id(run_a, "RUN_A", MatrixError), check_run_id(run_b, "RUN_B", MatrixError)
    request = CompareRequest(
        results=path_or_setting(RESULTS.option, g.text(RESULTS), s.results),
        out=path_or_setting(COMPARE_OUT.option, g.text(COMPARE_OUT), s.reports),
        run_a=run_a,
        run_b=run_b,
        targets=tuple(targets),
        archs=tuple(arch_keys),
        suites=tuple(suites),
        confidence=level,
        threshold=change,
        fail_above=limit,
        limits=matrix_limits(Path(s.matrix)),
        between_runs=BETWEEN_RUNS.level(g.text(BETWEEN_RUNS)),
    )
    compare_runs(request, on_line=show)


def matrix_limits(path: Path) -> tuple[matrix.RowLimit, ...]:
    """matrix.yml's ``limits:`` for ``invoke compare``'s gate; none without a matrix file
    (comparing stored runs needs none).

    Raises:
        MatrixError: the file exists and is invalid.
    """
    return matrix.load(path).row_limits if path.is_file() else ()


@dataclass(frozen=True)
class ReportRequest:
    """One ``invoke report``: which results, where to, and how (flags checked by the caller).

    ``runs`` None renders every run of ``results``, ``()`` the run whose results
    were written last (:meth:`~archbench.result.ResultStore.latest_run`), else the
    runs named. ``targets``, ``archs`` and ``suites`` select as
    :func:`archbench.report.select_results` does (empty: all). ``reference`` adds the thesis's
    published figures (:func:`archbench.upstream.reference.load_reference`);
    ``plots`` draws the figures (matplotlib) before the chapter, so that it
    references every one.
    """

    results: Path
    out: Path
    runs: tuple[str, ...] | None = ()
    targets: tuple[str, ...] = ()
    archs: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()
    reference: bool = False
    plots: bool = True
    options: ReportOptions = field(default_factory=ReportOptions)


def _sessions_agree(
    store: ResultStore,
    run_a: str,
    run_b: str,
    sides: Sequence[Sequence[Result]],
    on_line: Callable[[str], None],
) -> bool:
    """Whether the session id the results files of both runs carry may pair their rounds.

    A session id is a claim of the files; the runs' own manifests (``run.json`` naming
    their history, and that history's ``history.json``) must say the two runs are
    versions of one history measured in that one session. Otherwise ``on_line`` hears
    why, and the runs are compared as runs that were not interleaved.
    """

    def sessions(side: Sequence[Result]) -> set[str]:
        return {r.execution.interleaved for r in side if r.execution and r.execution.interleaved}

    claimed = sessions(sides[0]) & sessions(sides[1])
    if not claimed or run_a == run_b:
        return True
    why = ""
    try:
        histories = {store.load_manifest(r).history for r in (run_a, run_b)}
        history_id = histories.pop() if len(histories) == 1 else None
        if history_id is None:
            why = "their run.json files name no common history"
        else:
            of = {v.run_id: v.session for v in store.load_history(history_id).versions}
            if of.get(run_a) is None or of.get(run_b) is None:
                why = f"history {history_id} does not list both"
            elif of[run_a] != of[run_b] or of[run_a] not in claimed:
                why = f"history {history_id} says they ran in different sessions"
    except ResultsError as exc:
        why = f"their manifests cannot be read ({exc})"
    if not why:
        return True
    on_line(
        f"note: the results files of {run_a} and {run_b} claim one interleaved session, but "
        f"{why}; compared as runs that were not interleaved"
    )
    return False


def _no_run(store: ResultStore, missing: Sequence[str], known: Sequence[str]) -> str:
    """Why the runs ``missing`` cannot be read: not there, or a history's folder."""
    histories = set(store.histories())
    said = [
        f"{r} is a history, not a run (its runs are in its history.json)"
        if r in histories
        else f"no run {r}"
        for r in missing
    ]
    return f"{'; '.join(said)} in {store.root}; runs there: {', '.join(known[-8:]) or 'none'}"


def _runs(
    store: ResultStore, asked: tuple[str, ...] | None, on_line: Callable[[str], None]
) -> list[str] | None:
    """The run ids :meth:`~archbench.result.ResultStore.load_all` is to read (None: all).

    Raises:
        ReportError: a run asked for is not in the store; the message lists the latest.
    """
    known = store.runs()
    for note in store.notes():
        on_line(f"note: {note}")
    if asked is None:
        return None
    if asked:
        missing = [r for r in asked if r not in known]
        if missing:
            raise ReportError(_no_run(store, missing, known))
        return list(asked)
    latest = store.latest_run()
    if latest:
        on_line(f"rendering run {latest}, the latest with results (--all-runs or --run for others)")
        return [latest]
    # No file could be dated: the runs that hold any are read, so that each file that
    # cannot be (a symbolic link loop, a dangling link) is named, not passed over.
    return [r for r in known if next(iter(store.files([r])), None) is not None]


def readable_results(root: Path) -> None:
    """Refuse a results folder that is there but cannot be listed, saying why.

    A folder that does not exist is the caller's to say (it may be fine: ``--reference``).

    Raises:
        ReportError: ``root`` is a file, or cannot be read (its permissions, an I/O error).
    """
    try:
        with os.scandir(root):
            return
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise ReportError(
            f"results folder {shown_path(root)} is a file, not a folder; pass --results DIR, "
            "the folder invoke bench writes its runs to"
        ) from None
    except OSError as exc:
        raise ReportError(
            f"results folder {shown_path(root)} cannot be read ({exc.strerror or exc}); nothing "
            "was rendered: give this user read access to it (chmod u+rx), or pass --results DIR"
        ) from None


def _select_counted(counted: list[Result], request: ReportRequest) -> list[Result]:
    """Instruction-count results of the selection; none (not an error) when none match."""
    if not counted:
        return []
    try:
        return select_results(
            counted, targets=request.targets, archs=request.archs, suites=request.suites
        )
    except ReportError:
        return []


def _all_runs(
    store: ResultStore, request: ReportRequest, on_line: Callable[[str], None]
) -> tuple[list[Result], list[LoadFailure], Timeline]:
    """``--all-runs``: every stored run from the store's index
    (:meth:`~archbench.result.ResultStore.indexed`: a file is parsed again only when it
    changed), and the latest run of each machine (:func:`archbench.report.latest_runs`)
    loaded whole, for the chapter; both metrics, the selection applied to the index.

    Returns:
        The latest runs' results, every file that could not be loaded (once each), and
        the timeline of every run selected.

    Raises:
        ReportError, ReportUsageError: as :func:`archbench.report.select_results`.
    """
    entries, failures = store.indexed(on_note=lambda note: on_line(f"note: {note}"))
    if entries:
        entries = select_entries(
            entries, targets=request.targets, archs=request.archs, suites=request.suites
        )
    line = build_timeline(entries)
    keep = latest_runs(line)
    loaded, more = store.load_all(sorted({run_id for run_id, _t, _m in keep}), metric=None)
    said = {f.message for f in failures}
    failures += [f for f in more if f.message not in said]
    if line.repeated:
        machines = f"{len(line.machines)} machine{'s' if len(line.machines) > 1 else ''}"
        on_line(
            f"--all-runs: {len(line.runs)} runs of {machines}; the chapter and results.csv "
            "show each machine's latest run, run-rows.csv and the results page every run"
        )
    return [r for r in loaded if (r.run_id, r.target.name, r.metric) in keep], failures, line


def render_report(request: ReportRequest, on_line: Callable[[str], None]) -> list[Path]:
    """``invoke report``: render the selected results into ``request.out``.

    Reads the runs asked for (the latest by default) and the thesis's figures with
    ``reference``, selects, and hands the selection to
    :func:`archbench.report.write_report_folder` (figures, chapter, exports, tables,
    results page; earlier outputs removed; the lock of ``request.out``).
    ``on_line`` receives every line to show, in order: the run chosen, each file
    that could not be loaded, each phase, each path written and each earlier output
    removed.

    Returns:
        The paths written.

    Raises:
        ReportError: no results directory (and no ``reference``), an unknown run,
            nothing to render, a selection that matches nothing, an unknown or
            emulated baseline, or ``out`` is not writable.
        ReportUsageError: a suite that does not exist.
        ResultsError: after everything was written, when results files could not
            be loaded (they are named, and listed in ``appendix.md``).
    """
    store = ResultStore(request.results)
    readable_results(store.root)
    if not store.root.is_dir() and not request.reference:
        raise ReportError(
            f"results directory {store.root} does not exist; run 'invoke bench' first, "
            "or pass --results DIR (or --reference for the thesis's data alone)"
        )
    runs = _runs(store, request.runs, on_line)
    over_time: Timeline | None = None
    if runs is None:
        both, failures, over_time = _all_runs(store, request, on_line)
    else:
        # One pass over the files: a bad one is reported once, whichever metric it held.
        both, failures = store.load_all(runs, metric=None)
    loaded = [r for r in both if r.metric == "time"]
    counted = [r for r in both if r.metric == "instructions"]
    if request.reference:
        shipped, bad = load_reference()
        loaded += shipped
        failures += bad
    for f in failures:
        on_line(f"warning: skipped {f.message}")
    chosen = select_results(
        loaded, targets=request.targets, archs=request.archs, suites=request.suites
    )
    counted = _select_counted(counted, request)
    paths = write_report_folder(
        store,
        chosen,
        counted,
        failures,
        request.out,
        request.options,
        plots=request.plots,
        select=lambda rs: _select_counted(rs, request),
        on_line=on_line,
        over_time=over_time,
    )
    if failures:
        raise ResultsError(
            f"rendered without {len(failures)} results file(s) that could not be loaded "
            "(listed above and in appendix.md); fix or move them away, or measure the "
            "target again with 'invoke bench --resume RUN_ID'"
        )
    return paths


@dataclass(frozen=True)
class CompareRequest:
    """One ``invoke compare``: run B against run A of ``results`` (flags checked by the caller).

    ``targets``, ``archs`` and ``suites`` select on both sides as
    :func:`archbench.report.select_results` does (empty: all); ``confidence`` is the level of the
    bootstrap interval of B/A in [0.5, 1), ``threshold`` the smallest change (a
    fraction in [0, 1]) called slower or faster
    (:func:`archbench.analysis.comparison.compare`). ``fail_above``: a ratio (1.02) that
    no counted row may exceed (:func:`archbench.analysis.over_limit`); None: no gate.
    ``limits``: matrix.yml's per-operation or per-row limits, which win over
    ``fail_above`` for the rows they name (:func:`archbench.analysis.over_limits`).
    ``between_runs``: the spread of a run's level between invocations that the interval
    of two runs not interleaved adds (``--between-runs``; 0: no verdict on them).
    """

    results: Path
    out: Path
    run_a: str
    run_b: str
    targets: tuple[str, ...] = ()
    archs: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()
    confidence: float = DEFAULT_CONFIDENCE
    threshold: float = DEFAULT_THRESHOLD
    fail_above: float | None = None
    limits: tuple[matrix.RowLimit, ...] = ()
    between_runs: float = DEFAULT_BETWEEN_RUNS


def compare_runs(request: CompareRequest, on_line: Callable[[str], None]) -> list[Path]:
    """Compare the two runs, show the Markdown table, write ``.tex`` and ``.csv`` into ``out``.

    Both metrics are compared (times, and instruction counts where the runs counted);
    the runs' files are read as stored, so the rounds of an interleaved session pair
    (:func:`archbench.analysis.compare`). ``on_line`` receives every text to show, in
    order: each file that could not be loaded, a note when a run is compared with
    itself, what differs between the paired targets' environments, the table (with how
    each target was compared: interleaved or not), the rows only one run has, each path
    written, and the counted rows beyond ``fail_above``.

    Returns:
        The paths written (:func:`archbench.report.write_comparison`).

    Raises:
        ReportError: a run is unknown, the runs share no row, or ``out`` cannot
            be written.
        ReportUsageError: a suite that does not exist.
        ResultsError: a target's repeats in one run measured different rows.
        LimitExceeded: a counted row grew beyond ``fail_above`` (after everything
            was shown and written).
    """
    store = ResultStore(request.results)
    readable_results(store.root)
    run_a, run_b = request.run_a, request.run_b
    known = store.runs()
    for note in store.notes():
        on_line(f"note: {note}")
    missing = [r for r in (run_a, run_b) if r not in known]
    if missing:
        raise ReportError(_no_run(store, missing, known))
    sides = []
    for run_id in (run_a, run_b):
        loaded, failures = store.load_all([run_id], merge=False, metric=None)
        for f in failures:
            on_line(f"warning: skipped {f.message}")
        sides.append(
            select_results(
                loaded, targets=request.targets, archs=request.archs, suites=request.suites
            )
        )
    level = request.confidence
    trusted = _sessions_agree(store, run_a, run_b, sides, on_line)
    rows = compare_rows(
        sides[0],
        sides[1],
        confidence=level,
        threshold=request.threshold,
        interleaved=trusted,
        between_runs=request.between_runs,
    )
    if not rows:
        raise ReportError(
            f"runs {run_a} and {run_b} have no row in common (same target, suite, scheme, "
            "key size and operation); select one target on each side with --target"
        )
    # The files first: a reader of the table that goes away (| head) loses nothing.
    written = write_comparison(rows, run_a, run_b, request.out, level, on_line, sides)
    for line in describe_comparison(rows, sides, run_a, run_b, level):
        on_line(line)
    for p in written:
        on_line(f"wrote {p}")
    if request.fail_above is not None or request.limits:
        gate = (
            f"--fail-above {request.fail_above:g}"
            if request.fail_above is not None
            else "the matrix's limits"
        )
        if not any(r.metric == "instructions" for r in rows):
            on_line(
                f"note: {gate} gates counted rows only, and these "
                "runs share none (measure with --metric time,instructions)"
            )
        over = over_limits([(r.key, r) for r in rows], request.fail_above, request.limits)
        if over:
            listed = "; ".join(
                f"{r.key.target} {r.key.label} {r.ratio:.4f}× (limit {limit:g})"
                for r, limit in over
            )
            raise LimitExceeded(
                f"{gate}: {len(over)} counted row(s) grew beyond "
                f"the limit: {listed}; if the growth is intended, raise the limit"
            )
    return written
