"""Selecting results, rendering the chapter, and the report stage's two commands.

Each render builds the tidy frame once (:func:`archbench.report.frame.build`)
and the chapter once; ``appendix.tex`` and ``appendix.md`` render the same
chapter. :func:`render_report` is the whole of ``invoke report``: the runs, the
selection, the figures, the chapter, the exports, the suites' and instruction
tables, and the removal of an earlier report's outputs. :func:`compare_runs` is
``invoke compare``: two runs of the store, selected alike and compared row by
row (:mod:`archbench.analysis.comparison`, :mod:`archbench.report.compare_tables`).

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
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from archbench.analysis import (
    DEFAULT_CONFIDENCE,
    DEFAULT_THRESHOLD,
    RowLimit,
    compare,
    environment_diff,
    over_limits,
    target_pairs,
    unmatched,
)
from archbench.errors import LimitExceeded, ReportError, ReportUsageError, ResultsError
from archbench.inputs import load_json, read_text
from archbench.platforms import Arch
from archbench.report import chapter, compare_tables, export, gnunet_perf, instructions, page
from archbench.report.formats import (
    LATEX_FILE,
    MARKDOWN_FILE,
    STANDALONE_FILE,
    STY_FILE,
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
from archbench.report.units import Unit
from archbench.result import (
    LoadFailure,
    Result,
    ResultStore,
    folder_lock,
    write_atomic,
    write_texts,
)
from archbench.suites import SUITE_TITLES
from archbench.upstream import load_reference

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
    unknown = [s for s in suites if s not in SUITE_TITLES]
    if unknown:
        raise ReportUsageError(
            f"--suite {','.join(unknown)}: no such suite; choose from: {', '.join(SUITE_TITLES)}"
        )
    wanted_archs = {_arch_key(a) for a in archs}
    kept: list[Result] = []
    for r in results:
        if targets and r.target.name not in targets:
            continue
        if wanted_archs and _arch_key(r.target.arch) not in wanted_archs:
            continue
        if suites:
            rows = tuple(row for row in r.harness.rows if row.suite in suites)
            if not rows:
                continue
            if len(rows) != len(r.harness.rows):
                r = r.model_copy(update={"harness": r.harness.model_copy(update={"rows": rows})})
        kept.append(r)
    if results and not kept:

        def choices(values: Iterable[str]) -> str:
            return ", ".join(sorted(set(values)))

        raise ReportError(
            "no results match the selection "
            f"(targets: {choices(r.target.name for r in results)}; "
            f"architectures: {choices(r.target.arch for r in results)}; "
            f"suites: {choices(row.suite for r in results for row in r.harness.rows)})"
        )
    return kept


def prepare(results: Sequence[Result], failures: Sequence[LoadFailure] = ()) -> ReportData:
    """The tidy frame and machines of one render (:func:`archbench.report.frame.build`).

    ``invoke report`` builds it once and passes it to the chapter, the
    exports (``frame=``) and the plots.

    Raises:
        ReportError: no results (the message says to run ``invoke bench``
            first and names load failures, if any), or a damaged row.
    """
    if not results:
        detail = ""
        if failures:
            detail = (
                f" ({len(failures)} results file(s) could not be loaded, "
                f"first: {failures[0].message})"
            )
        raise ReportError(f"no results to report{detail}; run 'invoke bench' first")
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


@dataclass(frozen=True)
class ReportRequest:
    """One ``invoke report``: which results, where to, and how (flags checked by the caller).

    ``runs`` None renders every run of ``results``, ``()`` the run whose results
    were written last (:meth:`~archbench.result.ResultStore.latest_run`), else the
    runs named. ``targets``, ``archs`` and ``suites`` select as
    :func:`select_results` does (empty: all). ``reference`` adds the thesis's
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
    options: ReportOptions = _DEFAULT


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
    return [latest] if latest else []


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


def render_report(request: ReportRequest, on_line: Callable[[str], None]) -> list[Path]:
    """``invoke report``: render the selected results into ``request.out``.

    Writes the figures (with ``plots``), the chapter, the exports, the suites'
    tables (:func:`write_folder`), the instruction tables
    (:func:`archbench.report.instructions.write_all`) and the results page with the
    stored histories that hold these runs
    (:func:`archbench.report.page.write_page_from_store`); a selection of
    instruction counts only writes just those. Then removes what an earlier
    report there listed as its own and did not write again (:func:`replace_outputs`;
    without ``plots`` the earlier figures stay). Writing holds the lock of
    ``request.out`` (:func:`archbench.result.folder_lock`): two reports into one
    folder take turns, and the second says it waits. ``on_line`` receives every line
    to show, in order: the run chosen, each file that could not be loaded, each
    path written and each earlier output removed.

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
    if not store.root.is_dir() and not request.reference:
        raise ReportError(
            f"results directory {store.root} does not exist; run 'invoke bench' first, "
            "or pass --results DIR (or --reference for the thesis's data alone)"
        )
    runs = _runs(store, request.runs, on_line)
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
    out_dir = request.out
    counted = _select_counted(counted, request)
    # Outputs repeat a machine's environment per row: long values are cut there and
    # stored whole once (environments.json), so the outputs stay bounded by the inputs.
    chosen, whole = export.bound_environments(chosen)
    counted, whole_counted = export.bound_environments(counted)
    for key, fields in whole_counted.items():
        whole.setdefault(key, {}).update(fields)
    options = request.options
    # One report at a time per --out: a second waits (and says so) instead of removing
    # the figures the first just wrote.
    # The tidy frame is built once for the chapter, the exports and the plots, before
    # anything is written (a rendering error leaves --out untouched).
    data = prepare(chosen, failures) if chosen or not counted else None
    with folder_lock(out_dir, ReportError, "--out", on_line):
        paths: list[Path] = []
        if data is not None:
            plot_paths: list[Path] = []
            if request.plots:
                # matplotlib: slow to import
                from archbench.report.plots import too_many_machines, write_listed

                if (why := too_many_machines(data)) is not None:
                    on_line(why)
                # Drawn first so the chapter can reference every figure it has. Each
                # phase says it starts: on a busy machine one takes tens of seconds.
                on_line("drawing the figures")
                plot_paths, listed = write_listed(data, out_dir, options.unit)
                options = dataclasses.replace(options, figures=listed)
            on_line("writing the chapter, the exports and the suites' tables")
            paths += write_folder(data, failures, out_dir, options, counted)
            paths += plot_paths
        else:
            # A counting-only run (--metric instructions): its tables are the report.
            on_line("no timing results selected: writing the instruction tables only")
        paths += instructions.write_all(counted, chosen, out_dir)
        paths += export.write_environments(whole, out_dir)
        # The results page: these runs and the stored histories that hold them.
        on_line("writing the results page")
        paths += page.write_page_from_store(
            store,
            out_dir,
            [*chosen, *counted],
            failures=failures,
            select=lambda rs: _select_counted(rs, request),
        )
        for p in paths:
            on_line(f"wrote {p}")
        # Only now, and only files an earlier report listed as its own: figures
        # and the GnuPG CSV of machines or suites no longer selected.
        # --no-plots leaves the figures of an earlier report as they are.
        keep = None if request.plots else (lambda name: name.startswith("fig-"))
        for p in replace_outputs(out_dir, paths, keep):
            on_line(f"removed {p} (written by an earlier report, not by this one)")
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
    :func:`select_results` does (empty: all); ``confidence`` is the level of the
    bootstrap interval of B/A in [0.5, 1), ``threshold`` the smallest change (a
    fraction in [0, 1]) called slower or faster
    (:func:`archbench.analysis.comparison.compare`). ``fail_above``: a ratio (1.02) that
    no counted row may exceed (:func:`archbench.analysis.over_limit`); None: no gate.
    ``limits``: matrix.yml's per-operation or per-row limits, which win over
    ``fail_above`` for the rows they name (:func:`archbench.analysis.over_limits`).
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
    limits: tuple[RowLimit, ...] = ()


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
        The paths written (:func:`archbench.report.compare_tables.write`).

    Raises:
        ReportError: a run is unknown, the runs share no row, or ``out`` cannot
            be written.
        ReportUsageError: a suite that does not exist.
        ResultsError: a target's repeats in one run measured different rows.
        LimitExceeded: a counted row grew beyond ``fail_above`` (after everything
            was shown and written).
    """
    store = ResultStore(request.results)
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
    rows = compare(
        sides[0], sides[1], confidence=level, threshold=request.threshold, interleaved=trusted
    )
    if not rows:
        raise ReportError(
            f"runs {run_a} and {run_b} have no row in common (same target, suite, scheme, "
            "key size and operation); select one target on each side with --target"
        )
    # The files first: a reader of the table that goes away (| head) loses nothing.
    try:
        with folder_lock(request.out, ReportError, "--out", on_line):
            written = compare_tables.write(rows, run_a, run_b, request.out, level)
    except OSError as exc:
        raise ReportError(
            f"--out {request.out}: cannot write the comparison there ({exc.strerror}); "
            "give a directory"
        ) from exc
    if run_a == run_b:
        on_line(f"note: {run_a} is compared with itself; every ratio is 1")
    shown = [export.bound_environments(side)[0] for side in sides]
    for ra, rb in target_pairs(shown[0], shown[1]):
        changes = environment_diff(ra, rb)
        names = (
            ra.target.name
            if ra.target.name == rb.target.name
            else (f"{ra.target.name} vs {rb.target.name}")
        )
        said = "; ".join(c.text for c in changes) or "nothing recorded differs"
        on_line(f"environment {names}: {said}")
    on_line(compare_tables.markdown(rows, run_a, run_b, level))
    only_a, only_b = unmatched(sides[0], sides[1])
    for run_id, n in ((run_a, only_a), (run_b, only_b)):
        if n:
            on_line(f"{n} row(s) only {run_id} measured are left out (no partner to compare)")
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
