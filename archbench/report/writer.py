"""Selecting results, rendering the chapter and writing its files.

Each render builds the tidy frame once (:func:`archbench.report.frame.build`)
and the chapter once; ``appendix.tex`` and ``appendix.md`` render the same chapter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from archbench.errors import ReportError, ReportUsageError
from archbench.platforms import Arch
from archbench.report import chapter
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
from archbench.result import SUITE_TITLES, LoadFailure, Result, write_texts

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
    failures: Sequence[LoadFailure] = (),
    options: ReportOptions = _DEFAULT,
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
) -> list[Path]:
    """Write ``appendix.tex``, ``appendix-standalone.tex``, ``appendix.md`` and the package.

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
    built = chapter.build(data, options, failures)
    rendered = {
        out_dir / LATEX_FILE: render_latex_chapter(built, options.style, options.label_prefix),
        out_dir / STANDALONE_FILE: render_standalone(options.style),
        out_dir / MARKDOWN_FILE: render_markdown_chapter(built),
        out_dir / STY_FILE: sty_text(),
    }
    return write_texts(rendered, ReportError, "report", "choose a writable output directory")
