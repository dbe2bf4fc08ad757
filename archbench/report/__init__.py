"""Reports: the public face of :mod:`archbench.report`, the thesis appendix rebuilt from results.

The chapter "Performance Measurements" for any set of results (ours,
measured natively or under QEMU, and the thesis's own figures from
:mod:`archbench.upstream.reference`): a section per machine as in the appendix of the
Clause Blind Schnorr thesis, summaries across machines, CS compared with
RSA, the speedup of CS over RSA and, with a baseline, each machine relative
to it. The work is done in the :mod:`archbench.report` package; this module
keeps the names ``tasks.py``, plots and tests use.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.report.frame import machine_names
from archbench.report.latex import FILE as LATEX_FILE
from archbench.report.latex import STANDALONE_FILE, STANDALONE_TEMPLATE, render_standalone
from archbench.report.latex import TEMPLATE as LATEX_TEMPLATE
from archbench.report.markdown import FILE as MARKDOWN_FILE
from archbench.report.markdown import TEMPLATE as MARKDOWN_TEMPLATE
from archbench.report.model import (
    FLAG_LEGEND,
    FLAG_MARKS,
    STYLES,
    SUMMARY_COLUMNS,
    ReportOptions,
    Style,
    parse_style,
)
from archbench.report.schemes import COMPARISON_SIZES_PER_TABLE
from archbench.report.templating import TEMPLATES_DIR, latex_escape, markdown_escape
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
    prepare,
    render_latex,
    render_markdown,
    render_markdown_table,
    select_results,
    write_reports,
)
from archbench.result import (
    COMPARISON_ROWS,
    OPERATION_GROUPS,
    OPERATION_WORDING,
    SHORT_WORDING,
    SPEEDUP_RSA_BITS,
)

__all__ = [
    "COMPARISON_ROWS",
    "COMPARISON_SIZES_PER_TABLE",
    "FLAG_LEGEND",
    "FLAG_MARKS",
    "GROUP_DIGITS_FROM_MS",
    "LATEX_FILE",
    "LATEX_TEMPLATE",
    "MARKDOWN_FILE",
    "MARKDOWN_TEMPLATE",
    "OPERATION_GROUPS",
    "OPERATION_WORDING",
    "SCIENTIFIC_FROM",
    "SHORT_WORDING",
    "SPEEDUP_RSA_BITS",
    "STANDALONE_FILE",
    "STANDALONE_TEMPLATE",
    "STYLES",
    "SUMMARY_COLUMNS",
    "TEMPLATES_DIR",
    "THREE_DECIMALS_BELOW",
    "UNITS",
    "ReportOptions",
    "Style",
    "Unit",
    "format_ms",
    "format_number",
    "format_ratio",
    "format_speed",
    "latex_escape",
    "machine_names",
    "markdown_escape",
    "parse_style",
    "parse_unit",
    "prepare",
    "render_latex",
    "render_markdown",
    "render_markdown_table",
    "render_standalone",
    "select_results",
    "unit_label",
    "unit_value",
    "write_reports",
]
