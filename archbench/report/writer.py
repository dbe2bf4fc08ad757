"""Selecting results, rendering the chapter, and writing the report folder.

Each render builds the tidy frame once (:func:`archbench.report.frame.build`)
and the chapter once; ``appendix.tex`` and ``appendix.md`` render the same
chapter. :func:`write_report_folder` writes what ``invoke report`` renders of the
selected results: the figures, the chapter, the exports, the suites' and
instruction tables, and the removal of an earlier report's outputs;
:func:`write_comparison` and :func:`describe_comparison` are what ``invoke compare``
writes and shows of two runs compared row by row
(:mod:`archbench.report.compare_tables`); :func:`write_page_from_store` and
:func:`write_bisect_page` write the results page (:mod:`archbench.report.page`) of
stored runs, histories and bisections. Which runs, and which of their results, is the
commands' (:mod:`archbench.cli.report`).

The out directory may hold the user's files (a hand-made ``fig-setup.png``,
notes). A report lists the files it writes in :data:`OUTPUTS_FILE` there; on
the next report, files listed in that manifest and not written again (figures
of machines no longer selected, the GnuPG CSV) are removed, after the new
outputs are written (:func:`replace_outputs`). A file archbench never listed is
never touched, and a manifest naming anything but a plain file name in that
directory is ignored entry by entry.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from archbench.analysis import (
    RowComparison,
    environment_diff,
    target_pairs,
    unmatched,
)
from archbench.errors import ReportError, ReportUsageError, ResultsError
from archbench.inputs import load_json, read_text
from archbench.platforms import Arch
from archbench.report import (
    chapter,
    compare_tables,
    export,
    gnunet_perf,
    instructions,
    page,
    page_html,
)
from archbench.report.formats import (
    LATEX_FILE,
    MARKDOWN_FILE,
    STANDALONE_FILE,
    STY_FILE,
    csv_text,
    markdown_escape,
    markdown_table,
    render_latex_chapter,
    render_markdown_chapter,
    render_standalone,
    sty_text,
)
from archbench.report.frame import ReportData, build
from archbench.report.model import ReportOptions
from archbench.report.sections import section
from archbench.report.suites import suite_tables
from archbench.report.timeline import ROWS_CSV, RUNS_CSV, Timeline, rows_frame, runs_frame
from archbench.report.units import Unit
from archbench.result import (
    BisectManifest,
    IndexedRow,
    IndexEntry,
    LoadFailure,
    Result,
    ResultStore,
    Row,
    TargetInfo,
    folder_lock,
    write_atomic,
    write_texts,
)
from archbench.suites import SUITE_TITLES

if TYPE_CHECKING:
    from archbench.report.plots import Drawing

_DEFAULT = ReportOptions()  # frozen: one shared default is safe


def render_latex(
    results: Sequence[Result] | ReportData,
    options: ReportOptions = _DEFAULT,
    failures: Sequence[LoadFailure] = (),
) -> str:
    """The chapter "Performance Measurements" in LaTeX (``appendix.tex``).

    A ``\\section`` per machine (measured ones by target name, then reference
    ones in the given order), then the summary, CS-vs-RSA and comparison
    sections. ``options.style`` ``"thesis"`` uses the thesis's macros
    (``bfhBox``, ``setupBfhTabular``, ``BFH-MediumBlue``; define them with
    :func:`archbench.report.formats.render_standalone` outside the thesis),
    ``"booktabs"`` plain ``booktabs`` rules. ``failures`` become LaTeX
    comments at the end.

    Raises:
        ReportError: no results, a damaged row, an unknown or emulated
            baseline, or the template is missing.
    """
    data = results if isinstance(results, ReportData) else build(results)
    built = chapter.build(data, options, failures)
    return render_latex_chapter(built, options.style, options.label_prefix)


def render_markdown(
    results: Sequence[Result] | ReportData,
    options: ReportOptions = _DEFAULT,
    failures: Sequence[LoadFailure] = (),
) -> str:
    """The same chapter in GitHub Markdown (``appendix.md``); ``failures`` close it as a warning.

    Raises:
        ReportError: no results, a damaged row, an unknown or emulated
            baseline, or the template is missing.
    """
    data = results if isinstance(results, ReportData) else build(results)
    return render_markdown_chapter(chapter.build(data, options, failures))


def render_markdown_table(result: Result, unit: Unit = "ms") -> str:
    """The Markdown tables of one result (with notes and flag legend), no trailing newline.

    The appendix suites' speeds are the median time of 10 operations (see
    :func:`archbench.report.frame.tidy_frame`); invalid rows read ``invalid [n]``
    and note ``n`` below the table gives the reason. The other suites follow,
    one table each (:mod:`archbench.report.suites`).

    Raises:
        ReportError: a damaged row.
    """
    data = build([result])
    out = []
    for machine in data.appendix_machines:
        if machine.records:
            out.append(str(markdown_table(section(machine, unit).table, unit)))
    for _title, tables in suite_tables(data.machines):
        for t in tables:
            out.append(f"**{markdown_escape(t.caption)}**\n\n{markdown_table(t, unit)}")
    return "\n\n".join(out)


def _arch_key(arch: str) -> str:
    try:
        return Arch.from_key(arch).key
    except ValueError:
        return arch


def select_results(
    results: Sequence[Result],
    *,
    targets: Sequence[str] = (),
    archs: Sequence[str] = (),
    suites: Sequence[str] = (),
) -> list[Result]:
    """Keep results of the named targets and architectures, with rows of the named suites.

    An empty selector keeps everything. Architectures match by key or OCI
    platform (``armv7`` = ``linux/arm/v7``). A result left without rows is
    dropped.

    Raises:
        ReportUsageError (exit 2): a suite that does not exist (the message lists the
            suites); ReportError: ``results`` is not empty but nothing matches (the
            message lists what there is to choose from).
    """
    _check_suites(suites)
    wanted_archs = {_arch_key(a) for a in archs}
    kept: list[Result] = []
    for r in results:
        rows = _kept_rows(r.target, r.harness.rows, targets, wanted_archs, suites)
        if rows is None:
            continue
        if len(rows) != len(r.harness.rows):
            r = r.model_copy(update={"harness": r.harness.model_copy(update={"rows": rows})})
        kept.append(r)
    if results and not kept:
        raise _nothing_matches([(r.target, r.harness.rows) for r in results])
    return kept


def select_entries(
    entries: Sequence[IndexEntry],
    *,
    targets: Sequence[str] = (),
    archs: Sequence[str] = (),
    suites: Sequence[str] = (),
) -> list[IndexEntry]:
    """The store index's entries (:meth:`archbench.result.ResultStore.indexed`) selected
    as :func:`select_results` selects results.

    Raises:
        ReportUsageError, ReportError: as :func:`select_results`.
    """
    _check_suites(suites)
    wanted_archs = {_arch_key(a) for a in archs}
    kept: list[IndexEntry] = []
    for e in entries:
        rows = _kept_rows(e.target, e.rows, targets, wanted_archs, suites)
        if rows is None:
            continue
        kept.append(e if len(rows) == len(e.rows) else e.model_copy(update={"rows": rows}))
    if entries and not kept:
        raise _nothing_matches([(e.target, e.rows) for e in entries])
    return kept


R = TypeVar("R", Row, IndexedRow)


def _kept_rows(
    target: TargetInfo,
    rows: Sequence[R],
    targets: Sequence[str],
    wanted_archs: set[str],
    suites: Sequence[str],
) -> tuple[R, ...] | None:
    """The rows of a result of ``target`` that the selection keeps; None: none (or not
    this target or architecture)."""
    if targets and target.name not in targets:
        return None
    if wanted_archs and _arch_key(target.arch) not in wanted_archs:
        return None
    kept = tuple(row for row in rows if row.suite in suites) if suites else tuple(rows)
    return kept if kept or not suites else None


def _check_suites(suites: Sequence[str]) -> None:
    unknown = [s for s in suites if s not in SUITE_TITLES]
    if unknown:
        raise ReportUsageError(
            f"--suite {','.join(unknown)}: no such suite; choose from: {', '.join(SUITE_TITLES)}"
        )


def _nothing_matches(
    found: Sequence[tuple[TargetInfo, Sequence[Row] | Sequence[IndexedRow]]],
) -> ReportError:
    def choices(values: Iterable[str]) -> str:
        return ", ".join(sorted(set(values)))

    return ReportError(
        "no results match the selection "
        f"(targets: {choices(t.name for t, _rows in found)}; "
        f"architectures: {choices(t.arch for t, _rows in found)}; "
        f"suites: {choices(row.suite for _t, rows in found for row in rows)})"
    )


def prepare(results: Sequence[Result], failures: Sequence[LoadFailure] = ()) -> ReportData:
    """The tidy frame and machines of one render (:func:`archbench.report.frame.build`).

    ``invoke report`` builds it once and passes it to the chapter, the
    exports (``frame=``) and the plots.

    Raises:
        ReportError: no results (the message says to run ``invoke bench``
            first and names load failures, if any), or a damaged row.
    """
    if not results:
        if failures:
            # The files are there: measuring again is not the fix, reading them is.
            raise ReportError(
                f"no results to report: {len(failures)} results file(s) could not be loaded "
                f"(first: {failures[0].message}); fix or move them away, or measure again"
            )
        raise ReportError("no results to report; run 'invoke bench' first")
    return build(results)


def write_reports(
    results: Sequence[Result] | ReportData,
    failures: Sequence[LoadFailure],
    out_dir: Path,
    options: ReportOptions = _DEFAULT,
    counted: Sequence[Result] = (),
) -> list[Path]:
    """Write ``appendix.tex``, ``appendix-standalone.tex``, ``appendix.md`` and the package.

    ``counted``: instruction-count results, shown in their machines' sections.

    The package is ``archbench-appendix.sty`` (:data:`archbench.report.formats.STY_FILE`):
    ``\\usepackage{archbench-appendix}`` + ``\\input{appendix}`` compiles anywhere.

    All files are rendered before any is written (each atomically), so a
    rendering error leaves the previous reports untouched. ``failures``
    (files that could not be loaded) are listed at the end of the Markdown
    and as comments in the LaTeX; they do not stop the rest.

    Returns:
        The paths written, in that order.

    Raises:
        ReportError: no results (the message says to run ``invoke bench``
            first and names load failures, if any), a damaged row, an
            unknown or emulated baseline, a missing template, or ``out_dir``
            is not writable.
    """
    data = results if isinstance(results, ReportData) else prepare(results, failures)
    built = chapter.build(data, options, failures, counted)
    rendered = {
        out_dir / LATEX_FILE: render_latex_chapter(built, options.style, options.label_prefix),
        out_dir / STANDALONE_FILE: render_standalone(options.style),
        out_dir / MARKDOWN_FILE: render_markdown_chapter(built),
        out_dir / STY_FILE: sty_text(),
    }
    return write_texts(rendered, ReportError, "report", "choose a writable output directory")


def write_folder(
    data: ReportData,
    failures: Sequence[LoadFailure],
    out_dir: Path,
    options: ReportOptions = _DEFAULT,
    counted: Sequence[Result] = (),
) -> list[Path]:
    """Every text file of a report: the chapter (:func:`write_reports`), the exports and
    the GNUnet witness table, from the one frame of ``data``.

    ``counted`` (instruction-count results) adds a table of counts to each counted
    machine's section and ``instructions_per_op`` to the exports
    (:func:`archbench.report.export.write_exports`); the GNUnet perf vs archbench table
    is written only when a target ran both suites (:func:`archbench.report.gnunet_perf.write`).

    Returns:
        The paths written, in that order.

    Raises:
        ReportError: as :func:`write_reports` and the exports.
        OSError: the GNUnet witness table cannot be written.
    """
    paths = write_reports(data, failures, out_dir, options, counted)
    paths += export.write_exports(data.results, out_dir, counted, frame=data.frame)
    paths += gnunet_perf.write(data.results, out_dir)
    return paths


OUTPUTS_FILE: Final = ".archbench-outputs.json"
OUTPUTS_FORMAT: Final = "archbench-outputs"
_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def listed(out_dir: Path) -> set[str]:
    """File names the previous report recorded in ``out_dir`` (empty when none or unreadable).

    Entries that are not plain file names (``../x``, ``/etc/passwd``, the
    manifest itself) are dropped: they can never be removed.
    """
    path = out_dir / OUTPUTS_FILE
    if not path.is_file():
        return set()
    try:
        text = read_text(path, ReportError, "the outputs manifest", 1 << 20)
        data = load_json(text, str(path), ReportError)
    except ReportError:
        return set()
    files = (
        data.get("files")
        if isinstance(data, dict) and data.get("format") == OUTPUTS_FORMAT
        else None
    )
    if not isinstance(files, list):
        return set()
    return {
        f for f in files if isinstance(f, str) and _PLAIN_NAME.fullmatch(f) and f != OUTPUTS_FILE
    }


def replace_outputs(
    out_dir: Path, written: Sequence[Path], keep: Callable[[str], bool] | None = None
) -> list[Path]:
    """Record ``written`` as the report's outputs; remove earlier outputs not written again.

    Call it after every new output is written, holding ``out_dir``'s lock. Only
    regular files directly in ``out_dir`` that the previous manifest listed are
    removed (and the ``.<output>.*.tmp`` files a writer killed mid-write left), except
    those whose name ``keep`` accepts (``--no-plots`` keeps the earlier
    figures): they stay, and stay listed. Returns the paths removed.

    Raises:
        ReportError: the manifest cannot be written.
    """
    fresh = {p.name for p in written if p.parent.resolve() == out_dir.resolve()}
    earlier = listed(out_dir) - fresh
    kept = {n for n in earlier if keep is not None and keep(n) and (out_dir / n).is_file()}
    names = sorted(fresh | kept)
    removed: list[Path] = []
    for name in sorted(earlier - kept):
        path = out_dir / name
        if path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(path)
    # The temporary files of an earlier writer killed mid-write (kill -9, a full disk):
    # named .<output>.<random>.tmp by write_atomic, and stale, as this one holds the lock.
    for name in fresh:
        for stale in out_dir.glob(f".{glob.escape(name)}.*.tmp"):
            if stale.is_file() and not stale.is_symlink():
                stale.unlink()
    try:
        write_atomic(
            out_dir / OUTPUTS_FILE,
            json.dumps({"format": OUTPUTS_FORMAT, "version": 1, "files": names}, indent=2) + "\n",
        )
    except OSError as exc:
        raise ReportError(
            f"{out_dir / OUTPUTS_FILE}: cannot record the report's outputs: {exc.strerror}"
        ) from exc
    return removed


def write_report_folder(
    store: ResultStore,
    chosen: Sequence[Result],
    counted: Sequence[Result],
    failures: Sequence[LoadFailure],
    out_dir: Path,
    options: ReportOptions = _DEFAULT,
    *,
    plots: bool = True,
    select: Callable[[list[Result]], list[Result]] = lambda rs: rs,
    on_line: Callable[[str], None] = print,
    over_time: Timeline | None = None,
) -> list[Path]:
    """Render selected results into the report folder ``out_dir``; the paths written.

    ``chosen`` are the timing results, ``counted`` the instruction counts of the
    selection. Writes the figures (with ``plots``), the chapter, the exports, the
    suites' tables (:func:`write_folder`), the instruction tables
    (:func:`archbench.report.instructions.write_all`), the environments cut from the
    rows and the results page with the stored histories of ``store`` that hold these
    runs (:func:`write_page_from_store`, ``select`` choosing
    their results as the selection did); a selection of instruction counts only
    writes just those. Then removes what an earlier report there listed as its own
    and did not write again (:func:`replace_outputs`; without ``plots`` the earlier
    figures stay). ``over_time`` (``--all-runs`` over runs of machines measured more than
    once: :mod:`archbench.report.timeline`) adds ``runs.csv`` and ``run-rows.csv`` (every
    run, its facts once) and the page's figures over time. Writing holds the lock of ``out_dir``
    (:func:`archbench.result.folder_lock`): two reports into one folder take turns,
    and the second says it waits. ``on_line`` receives every line to show, in order:
    each phase, each path written and each earlier output removed.

    Raises:
        ReportError: an unknown or emulated baseline, a damaged row, or ``out_dir``
            is not writable.
    """
    if over_time is not None and over_time.repeated:
        # The chapter shows each machine's latest run: it says how many others there are.
        shown = {(r.run_id, r.target.name) for r in [*chosen, *counted]}
        earlier = sum((r.run_id, r.target) not in shown for r in over_time.runs)
        options = dataclasses.replace(options, earlier_runs=earlier)
    # Outputs repeat a machine's environment per row: long values are cut there and
    # stored whole once (environments.json), so the outputs stay bounded by the inputs.
    chosen, whole = export.bound_environments(chosen)
    counted, whole_counted = export.bound_environments(counted)
    for key, fields in whole_counted.items():
        whole.setdefault(key, {}).update(fields)
    # One report at a time per --out: a second waits (and says so) instead of removing
    # the figures the first just wrote.
    # The tidy frame is built once for the chapter, the exports and the plots, before
    # anything is written (a rendering error leaves --out untouched).
    data = prepare(chosen, failures) if chosen or not counted else None
    with folder_lock(out_dir, ReportError, "--out", on_line):
        paths: list[Path] = []
        drawing: Drawing | None = None
        try:
            if plots or counted:
                # matplotlib: slow to import, so only a report that draws imports it. The
                # figures are built first, so the chapter can reference every one, and
                # rendered in other processes while the rest is written; the instruction
                # figure with them. Each phase says it starts: on a busy machine one
                # takes tens of seconds.
                from archbench.report.plots import start_drawing, too_many_machines

                extra = [(instructions.FIGURE_STEM, instructions.plot(counted))] if counted else []
                drawn = data if plots else None
                if drawn is not None:
                    if (why := too_many_machines(drawn)) is not None:
                        on_line(why)
                    on_line("drawing the figures")
                drawing = start_drawing(drawn, out_dir, options.unit, extra)
                options = dataclasses.replace(options, figures=drawing.listed)
            if data is not None:
                on_line("writing the chapter, the exports and the suites' tables")
                paths += write_folder(data, failures, out_dir, options, counted)
            else:
                # A counting-only run (--metric instructions): its tables are the report.
                on_line("no timing results selected: writing the instruction tables only")
            paths += instructions.write_all(counted, chosen, out_dir, figure=False)
            paths += export.write_environments(whole, out_dir)
            if over_time is not None and over_time.repeated:
                on_line(f"writing every run: {RUNS_CSV}, {ROWS_CSV}")
                paths += write_texts(
                    {
                        out_dir / RUNS_CSV: csv_text(runs_frame(over_time)),
                        out_dir / ROWS_CSV: csv_text(rows_frame(over_time)),
                    },
                    ReportError,
                    "the runs' exports",
                    "choose a writable --out",
                )
            else:
                over_time = None
            # The results page: these runs and the stored histories that hold them.
            on_line("writing the results page")
            paths += write_page_from_store(
                store,
                out_dir,
                [*chosen, *counted],
                failures=failures,
                select=select,
                over_time=over_time,
                on_line=on_line,
            )
            if drawing is not None:
                paths += drawing.finish()
            for p in paths:
                on_line(f"wrote {p}")
        finally:
            if drawing is not None:
                drawing.close()
        # Only now, and only files an earlier report listed as its own: figures
        # and the GnuPG CSV of machines or suites no longer selected.
        # --no-plots leaves the figures of an earlier report as they are.
        keep = None if plots else (lambda name: name.startswith("fig-"))
        for p in replace_outputs(out_dir, paths, keep):
            on_line(f"removed {p} (written by an earlier report, not by this one)")
    return paths


def write_comparison(
    rows: Sequence[RowComparison],
    run_a: str,
    run_b: str,
    out: Path,
    confidence: float,
    on_line: Callable[[str], None] = print,
    sides: Sequence[Sequence[Result]] = (),
) -> list[Path]:
    """Write a comparison's ``compare-<A>-vs-<B>.tex``/``.csv`` into ``out`` under its lock
    (:func:`archbench.report.compare_tables.write`), and with ``sides`` (the selected
    results of A and B) the functions behind each counted row that moved (CSV and
    differential figure, :func:`archbench.report.compare_tables.compare_moves`); the
    paths written.

    Raises:
        ReportError: ``out`` cannot be written (not a directory, no permission).
    """
    try:
        with folder_lock(out, ReportError, "--out", on_line):
            moves = compare_tables.compare_moves(rows, sides, run_a, run_b) if sides else []
            return compare_tables.write(rows, run_a, run_b, out, confidence, moves)
    except OSError as exc:
        raise ReportError(
            f"--out {out}: cannot write the comparison there ({exc.strerror}); give a directory"
        ) from exc


def write_bisect_page(
    store: ResultStore,
    out: Path,
    manifest: BisectManifest,
    on_line: Callable[[str], None] = print,
) -> list[Path]:
    """The results page of a finished bisection (``invoke bisect``), under ``out``'s lock:
    its section (outcome, the functions behind each move and their differential
    figures) and the runs on either side of each move; the paths written.

    Raises:
        ReportError: the page cannot be written.
        ResultsError: a run's repeated files cannot be merged.
    """
    runs = sorted({r for m in manifest.moves for r in (m.before_run, m.after_run)})
    shown, failures = store.load_all(runs, merge=False, metric=None) if runs else ([], [])
    with folder_lock(out, ReportError, "--out", on_line):
        return write_page_from_store(
            store, out, shown, histories=[], bisections=[manifest], failures=failures
        )


def describe_comparison(
    rows: Sequence[RowComparison],
    sides: Sequence[Sequence[Result]],
    run_a: str,
    run_b: str,
    confidence: float,
) -> list[str]:
    """What ``invoke compare`` shows of a comparison, in order: a note when a run is
    compared with itself, what differs between the paired targets' environments, the
    Markdown table (:func:`archbench.report.compare_tables.markdown`), the functions
    whose counts changed most in each counted row that moved
    (:func:`archbench.report.compare_tables.function_lines`) and the rows only
    one run has. ``sides``: the selected results of A and B."""
    lines = []
    if run_a == run_b:
        lines.append(f"note: {run_a} is compared with itself; every ratio is 1")
    shown = [export.bound_environments(side)[0] for side in sides]
    for ra, rb in target_pairs(shown[0], shown[1]):
        changes = environment_diff(ra, rb)
        names = (
            ra.target.name
            if ra.target.name == rb.target.name
            else (f"{ra.target.name} vs {rb.target.name}")
        )
        said = "; ".join(c.text for c in changes) or "nothing recorded differs"
        lines.append(f"environment {names}: {said}")
    lines.append(compare_tables.markdown(rows, run_a, run_b, confidence))
    lines.extend(compare_tables.function_lines(rows, sides))
    only_a, only_b = unmatched(sides[0], sides[1])
    for run_id, n in ((run_a, only_a), (run_b, only_b)):
        if n:
            lines.append(f"{n} row(s) only {run_id} measured are left out (no partner to compare)")
    return lines


def relative_json(store: ResultStore, out_dir: Path) -> Callable[[Result], str | None]:
    """A ``json_path`` for :func:`assemble`: each result's file in ``store``, relative to
    ``out_dir`` (its first container run's file; None when it is not there)."""

    def path(result: Result) -> str | None:
        try:
            file = store.path_for(result.run_id, result.target.name, 1, result.metric)
        except ResultsError:  # a name that cannot be a file name: no link
            return None
        if not file.is_file():
            return None
        return Path(os.path.relpath(file.resolve(), out_dir.resolve())).as_posix()

    return path


def histories_with(
    store: ResultStore,
    run_ids: Sequence[str],
    select: Callable[[list[Result]], list[Result]] = lambda rs: rs,
    problems: list[str] | None = None,
) -> list[page.History]:
    """The stored histories that hold any of ``run_ids``, each with its versions' results.

    ``select`` narrows each version's results (``--target``, ``--arch``, ``--suite``).
    A history whose manifest cannot be read (or does not hold together: a run named
    twice, rounds that do not match its versions) is left out, and why is appended to
    ``problems``; bad results files the report names already.
    """
    wanted = set(run_ids)
    found: list[page.History] = []
    for history_id in store.histories():
        try:
            manifest = store.load_history(history_id)
        except ResultsError as exc:
            if problems is not None:
                problems.append(f"history left out: {exc}")
            continue
        runs = [v.run_id for v in manifest.versions]
        if not wanted & set(runs):
            continue
        by_run: dict[str, Sequence[Result]] = {}
        for run_id in runs:
            loaded, _failures = store.load_all([run_id], merge=False, metric=None)
            by_run[run_id] = select(loaded)
        found.append((manifest, by_run))
    return found


def bisections_with(
    store: ResultStore, run_ids: Sequence[str], problems: list[str] | None = None
) -> list[BisectManifest]:
    """The stored bisections that measured or reused any of ``run_ids`` in a step.

    A bisection whose record cannot be read (or does not hold together) is left out, and
    why is appended to ``problems``, as :func:`histories_with` does for histories.
    """
    wanted = set(run_ids)
    found: list[BisectManifest] = []
    for e in store.entries():
        if e.kind != "bisection":
            continue
        try:
            manifest = store.load_bisect(e.name)
        except ResultsError as exc:
            if problems is not None:
                problems.append(f"bisection left out: {exc}")
            continue
        if any(c.run_id in wanted for step in manifest.steps for c in step.counts):
            found.append(manifest)
    return found


def write_page_from_store(
    store: ResultStore,
    out_dir: Path,
    results: Sequence[Result] = (),
    *,
    histories: Sequence[page.History] | None = None,
    bisections: Sequence[BisectManifest] = (),
    failures: Sequence[LoadFailure] = (),
    select: Callable[[list[Result]], list[Result]] = lambda rs: rs,
    over_time: Timeline | None = None,
    on_line: Callable[[str], None] = lambda _line: None,
) -> list[Path]:
    """``results.html`` for ``invoke report`` and ``invoke history``: assemble, render, write.

    ``results``: the runs rendered; ``histories`` None adds every stored history that
    holds one of their runs (:func:`histories_with`, each version narrowed by
    ``select``), else exactly those given, and then with no ``bisections`` given every
    stored bisection that measured one of the runs (:func:`bisections_with`);
    ``bisections`` get a section each. A history or bisection left out because its
    record is broken is named on the page and told to ``on_line`` (the terminal). Results
    files are linked relative to ``out_dir``. ``over_time``: every stored run of the
    report's machines (``--all-runs``; :mod:`archbench.report.timeline`), drawn over time
    with each run's detail beside the page (:func:`archbench.report.page_html.detail_files`).

    Returns:
        ``[out_dir / page.PAGE_FILE]``, then the files of the runs' details.

    Raises:
        ReportError: the template is missing, or the page cannot be written.
        ResultsError: a target's repeated runs cannot be merged.
    """
    problems: list[str] = []
    if histories is None:
        held = {r.run_id for r in results}
        held |= {r.run_id for r in over_time.runs} if over_time is not None else set()
        histories = histories_with(store, sorted(held), select, problems)
        if not bisections:
            bisections = bisections_with(store, sorted(held), problems)
    for problem in problems:
        on_line(f"warning: {problem}")
    drawn = page.assemble(
        results,
        histories,
        bisections=bisections,
        json_path=relative_json(store, out_dir),
        failures=[*(f.message for f in failures), *problems],
        timeline=over_time,
        entry_path=lambda e: _relative(store.root / e.path, out_dir),
    )
    return page_html.write_page(drawn, out_dir)


def _relative(file: Path, out_dir: Path) -> str:
    """``file`` relative to ``out_dir`` (POSIX separators)."""
    return Path(os.path.relpath(file.resolve(), out_dir.resolve())).as_posix()
