"""Reports: the thesis appendix "Performance Measurements" rebuilt from stored results.

For any set of results (ours, measured natively or under QEMU, imported tool logs
and the thesis's own figures, :mod:`archbench.upstream`) a report folder holds the
chapter in LaTeX and Markdown (a section per machine as in the appendix of the
Clause Blind Schnorr thesis, summaries across machines, CS compared with RSA, the
speedup of CS over RSA and, with a baseline, each machine relative to it; a part per
other suite), the tidy frame as CSV and JSON, the instruction-count tables and the
figures. The commands ``invoke report`` and ``invoke compare`` (which runs, which
results) are :mod:`archbench.cli.report`; they hand the selection to
:func:`write_report_folder`, :func:`write_comparison` and :func:`describe_comparison`.

The render, one concern per module:

* :mod:`~archbench.report.record`: one row of the tidy frame as a typed record
  (statistics from :mod:`archbench.analysis`), whose fields declare the frame's columns
  and dtypes once;
* :mod:`~archbench.report.frame`: the tidy frame (one record per machine × suite ×
  scheme × operation) and the machines of one render (:class:`ReportData`), built
  once and read by every table;
* :mod:`~archbench.report.model`: the table model, :class:`ReportOptions`;
  :mod:`~archbench.report.units`: number formatting (ms, µs, ops/s);
  :mod:`~archbench.report.versions`: library versions compared side by side;
* the chapter's parts: :mod:`~archbench.report.sections` (one per machine),
  :mod:`~archbench.report.crossmachine` (the one cross-machine table builder),
  :mod:`~archbench.report.comparisons` (summary, baseline, emulation, spread),
  :mod:`~archbench.report.schemes` (CS vs RSA), :mod:`~archbench.report.suites`
  (the other suites), assembled by :mod:`~archbench.report.chapter`;
* :mod:`~archbench.report.formats`: the chapter as LaTeX and Markdown (escaping,
  templates, the ``archbench-appendix.sty`` package, ``--label-prefix``);
* :mod:`~archbench.report.writer`: selection, rendering, the report folder and
  the list of its own outputs; :mod:`~archbench.report.export`: ``results.csv``
  and ``.json``; :mod:`~archbench.report.instructions`: instructions per operation;
  :mod:`~archbench.report.gnunet_perf`: GNUnet's perf programs beside ours;
  :mod:`~archbench.report.compare_tables`: a run comparison's tables;
  :mod:`~archbench.report.moved`: where a counted row's instructions went when it
  moved (history steps, bisection moves);
  :mod:`~archbench.report.summary`: the pull-request summary of ``invoke publish``
  (per architecture, the rows that moved against the base branch on the same machine
  class, the count gate's verdict, the functions that moved);
  :mod:`~archbench.report.page`: the results page ``results.html``, one self-contained
  HTML file (plotly, imported only when a page is drawn);
  :mod:`~archbench.report.timeline`: many stored runs of the same machines over time
  (the page's figures over time, ``runs.csv``, ``run-rows.csv``, the latest run of each
  machine that ``--all-runs`` renders in full);
* :mod:`~archbench.report.plots`: the figures. It imports matplotlib, which is
  slow to import, so this face does not import it; callers import
  ``archbench.report.plots`` where they draw.

Errors: :class:`archbench.errors.ReportError` (nothing to render, a damaged row, an
unknown baseline, an unwritable folder) and :class:`archbench.errors.ReportUsageError`
(a flag value that is not allowed, exit 2). The package is pure: it never imports
``docker``.
"""

from __future__ import annotations

from archbench.report.formats import (
    LATEX_FILE,
    LATEX_TEMPLATE,
    MARKDOWN_FILE,
    MARKDOWN_TEMPLATE,
    STANDALONE_FILE,
    STANDALONE_TEMPLATE,
    TEMPLATES_DIR,
    check_label_prefix,
    latex_escape,
    markdown_escape,
    render_standalone,
)
from archbench.report.frame import ReportData, machine_names
from archbench.report.history import (
    history_changes,
    history_count_kinds,
    history_moves,
    history_steps,
    render_changes_markdown,
    render_count_kinds_markdown,
    render_history_markdown,
    render_steps_markdown,
    write_history_files,
)
from archbench.report.instructions import render_instructions_markdown
from archbench.report.model import (
    FLAG_LEGEND,
    FLAG_MARKS,
    STYLES,
    SUMMARY_COLUMNS,
    ReportOptions,
    Style,
    parse_style,
)
from archbench.report.moved import (
    bisect_moved,
    bisect_moves,
    bisect_row,
    move_lines,
    stored_rows,
)
from archbench.report.page import PAGE_FILE
from archbench.report.schemes import COMPARISON_SIZES_PER_TABLE
from archbench.report.summary import Summary, pr_summary
from archbench.report.timeline import Timeline
from archbench.report.timeline import build as build_timeline
from archbench.report.timeline import latest as latest_runs
from archbench.report.units import (
    GROUP_DIGITS_FROM_MS,
    SCIENTIFIC_FROM,
    THREE_DECIMALS_BELOW,
    UNITS,
    Unit,
    format_ms,
    format_number,
    format_ratio,
    format_speed,
    parse_unit,
    unit_label,
    unit_value,
)
from archbench.report.writer import (
    describe_comparison,
    prepare,
    render_latex,
    render_markdown,
    render_markdown_table,
    select_entries,
    select_results,
    write_bisect_page,
    write_comparison,
    write_folder,
    write_page_from_store,
    write_report_folder,
    write_reports,
)

__all__ = [
    "COMPARISON_SIZES_PER_TABLE",
    "FLAG_LEGEND",
    "FLAG_MARKS",
    "GROUP_DIGITS_FROM_MS",
    "LATEX_FILE",
    "LATEX_TEMPLATE",
    "MARKDOWN_FILE",
    "MARKDOWN_TEMPLATE",
    "PAGE_FILE",
    "SCIENTIFIC_FROM",
    "STANDALONE_FILE",
    "STANDALONE_TEMPLATE",
    "STYLES",
    "SUMMARY_COLUMNS",
    "TEMPLATES_DIR",
    "THREE_DECIMALS_BELOW",
    "UNITS",
    "ReportData",
    "ReportOptions",
    "Style",
    "Summary",
    "Timeline",
    "Unit",
    "bisect_moved",
    "bisect_moves",
    "bisect_row",
    "build_timeline",
    "check_label_prefix",
    "describe_comparison",
    "format_ms",
    "format_number",
    "format_ratio",
    "format_speed",
    "history_changes",
    "history_count_kinds",
    "history_moves",
    "history_steps",
    "latest_runs",
    "latex_escape",
    "machine_names",
    "markdown_escape",
    "move_lines",
    "parse_style",
    "parse_unit",
    "pr_summary",
    "prepare",
    "render_changes_markdown",
    "render_count_kinds_markdown",
    "render_history_markdown",
    "render_instructions_markdown",
    "render_latex",
    "render_markdown",
    "render_markdown_table",
    "render_standalone",
    "render_steps_markdown",
    "select_entries",
    "select_results",
    "stored_rows",
    "unit_label",
    "unit_value",
    "write_bisect_page",
    "write_comparison",
    "write_folder",
    "write_history_files",
    "write_page_from_store",
    "write_report_folder",
    "write_reports",
]
