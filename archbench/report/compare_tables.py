"""Render a run comparison (:mod:`archbench.analysis.comparison`) as Markdown, LaTeX and CSV.

The Markdown table goes to the terminal, as ``pyperf compare_to`` and
critcmp print theirs; LaTeX (booktabs) and CSV go to the report folder as
``compare-<A>-vs-<B>.tex`` / ``.csv`` (:func:`archbench.report.compare_runs`,
``invoke compare``). Ratios are B/A of per-operation times: above 1 means B
is slower.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import pandas as pd
from tabulate import tabulate

from archbench.analysis import RowComparison, counts
from archbench.report.formats import csv_text, latex_escape, markdown_escape
from archbench.report.units import format_ratio, format_time_ns
from archbench.result import write_atomic

COLUMNS: Final = ("target", "row", "A", "B", "B/A", "95 % interval", "verdict")


def _interval(r: RowComparison) -> str:
    if math.isnan(r.low):
        return ""
    return f"[{format_ratio(r.low)}, {format_ratio(r.high)}]"


def _cells(r: RowComparison) -> list[str]:
    return [
        r.key.target,
        r.key.label,
        format_time_ns(r.a_ns),
        format_time_ns(r.b_ns),
        format_ratio(r.ratio) + "×",
        _interval(r),
        r.verdict,
    ]


def summary_line(rows: Sequence[RowComparison]) -> str:
    """``"12 rows: 2 slower, 1 faster, 9 no significant change"``."""
    tally = counts(rows)
    parts = ", ".join(f"{n} {v}" for v, n in sorted(tally.items(), key=lambda kv: -kv[1]))
    return f"{len(rows)} rows: {parts}" if rows else "no row was measured in both runs"


def markdown(rows: Sequence[RowComparison], run_a: str, run_b: str, confidence: float) -> str:
    """The comparison as a Markdown table with a heading line and the verdict counts.

    Target names and row labels (text from results files) are escaped with
    :func:`archbench.report.formats.markdown_escape`, as in ``appendix.md``.
    """
    head = (
        f"B/A of per-operation times, A = {run_a}, B = {run_b} "
        f"(median ratio, {confidence:.0%} bootstrap interval; > 1: B slower)"
    )
    # The texts from results files (target, row) escaped as appendix.md's tables are:
    # a target name's | or ` cannot end a cell or start code, nor its < start HTML.
    cells = [[markdown_escape(c) if i < 2 else c for i, c in enumerate(_cells(r))] for r in rows]
    table = tabulate(cells, headers=COLUMNS, tablefmt="github", disable_numparse=True)
    return f"{markdown_escape(head)}\n\n{table}\n\n{summary_line(rows)}\n"


def latex(rows: Sequence[RowComparison], run_a: str, run_b: str, confidence: float) -> str:
    """The comparison as a booktabs ``table`` float (needs ``\\usepackage{booktabs}``)."""
    escaped = pd.DataFrame(
        [[latex_escape(c) for c in _cells(r)] for r in rows],
        columns=[latex_escape(c) for c in COLUMNS],
    )
    # Cells are escaped above; the Styler writes them as they are, with booktabs rules.
    body = escaped.style.hide(axis="index").to_latex(hrules=True, column_format="llrrrll")
    caption = latex_escape(
        f"Run {run_b} (B) against run {run_a} (A): ratio B/A of the median time per "
        f"operation with its {confidence:.0%} bootstrap interval; above 1, B is slower. "
        + summary_line(rows)
        + "."
    )
    return (
        "\\begin{table}[htbp]\n\\centering\\small\n"
        f"{body}\n\\caption{{{caption}}}\n\\label{{tab:compare}}\n\\end{{table}}\n"
    )


def frame(rows: Sequence[RowComparison], run_a: str, run_b: str) -> pd.DataFrame:
    """Tidy frame of the comparison: one row per compared row, times in ns per operation."""
    return pd.DataFrame(
        [
            {
                "run_a": run_a,
                "run_b": run_b,
                "target": r.key.target,
                "suite": r.key.suite,
                "scheme": r.key.scheme,
                "key_bits": r.key.key_bits or None,
                "param": r.key.param or None,
                "operation": r.key.operation,
                "processes": r.key.processes,
                "a_ns_per_op": r.a_ns,
                "b_ns_per_op": r.b_ns,
                "n_a": r.n_a,
                "n_b": r.n_b,
                "ratio": r.ratio,
                "ratio_low": None if math.isnan(r.low) else r.low,
                "ratio_high": None if math.isnan(r.high) else r.high,
                "verdict": r.verdict,
            }
            for r in rows
        ]
    )


def write(
    rows: Sequence[RowComparison], run_a: str, run_b: str, out_dir: Path, confidence: float
) -> list[Path]:
    """Write ``compare-<A>-vs-<B>.tex`` and ``.csv`` into ``out_dir``; returns their paths.

    Raises:
        OSError: ``out_dir`` cannot be written.
    """
    # The suffix is appended, never put in place of one: run ids hold dots (v1.0,
    # v1.1), and with_suffix would map compare-v1.0-vs-v1.1 and -v1.2 onto one name.
    stem = f"compare-{run_a}-vs-{run_b}"
    tex, csv = out_dir / f"{stem}.tex", out_dir / f"{stem}.csv"
    write_atomic(tex, latex(rows, run_a, run_b, confidence))
    write_atomic(csv, csv_text(frame(rows, run_a, run_b)))
    return [tex, csv]
