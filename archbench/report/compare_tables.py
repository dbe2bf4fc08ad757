"""Render a run comparison (:mod:`archbench.analysis.comparison`) as Markdown, LaTeX and CSV.

The Markdown table goes to the terminal, as ``pyperf compare_to`` and
critcmp print theirs; LaTeX (booktabs) and CSV go to the report folder as
``compare-<A>-vs-<B>.tex`` / ``.csv`` (:func:`archbench.cli.report.compare_runs`,
``invoke compare``). Ratios are B/A per operation, of times or of instructions:
above 1 means B is slower (or executes more instructions). Each target says how its
times were compared and what their intervals cover: over interleaved rounds, over the
container runs of two runs that were not interleaved, or not at all (no interval); the
summary says how many rows changed under the false-discovery control.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import pandas as pd
from tabulate import tabulate

from archbench.analysis import NO_INTERVAL, RowComparison, counts, library_stem
from archbench.report.formats import csv_text, latex_escape, markdown_escape
from archbench.report.moved import (
    FUNCTIONS_SHOWN,
    Moved,
    function_line,
    function_moves,
    moves_frame,
)
from archbench.report.units import format_ratio, format_time_ns
from archbench.result import FunctionCount, Result, RowKey, row_key, write_atomic

COLUMNS: Final = ("target", "row", "metric", "A", "B", "B/A", "interval", "verdict")


def _interval(r: RowComparison) -> str:
    if r.verdict == "no interval":
        return NO_INTERVAL
    if r.metric == "instructions" and r.count_kind == "random":
        rank = "" if math.isnan(r.low) else f" [{format_ratio(r.low)}, {format_ratio(r.high)}]"
        return f"random ±{r.spread or 0:.1%}: by rank{rank}, not called"
    if math.isnan(r.low):
        return ""
    if r.metric == "instructions":
        if r.count_kind == "exact+extra":
            return f"exact+extra ±{r.spread or 0:.1%}: on the constant"
        return "exact" if not r.spread else f"varying ±{r.spread:.2%}"
    return f"[{format_ratio(r.low)}, {format_ratio(r.high)}]"


def _value(r: RowComparison, side: str) -> str:
    if r.metric == "instructions":
        x = r.a_instructions if side == "a" else r.b_instructions
        return "" if math.isnan(x) else f"{x:,.0f} instr."
    return format_time_ns(r.a_ns if side == "a" else r.b_ns)


def _ratio(r: RowComparison) -> str:
    if math.isnan(r.ratio):
        return ""
    if r.metric == "instructions":
        return f"{r.ratio:.4f}×"
    return format_ratio(r.ratio) + "×"


def _cells(r: RowComparison) -> list[str]:
    return [
        r.key.target,
        r.key.label,
        "instructions" if r.metric == "instructions" else "time",
        _value(r, "a"),
        _value(r, "b"),
        _ratio(r),
        _interval(r),
        r.verdict,
    ]


def summary_line(rows: Sequence[RowComparison]) -> str:
    """``"12 rows: 2 slower, 1 faster, 9 no significant change"``, then how many timed rows
    changed under the false-discovery control (and by their own intervals, where more)."""
    tally = counts(rows)
    parts = ", ".join(f"{n} {v}" for v, n in sorted(tally.items(), key=lambda kv: -kv[1]))
    if not rows:
        return "no row was measured in both runs"
    text = f"{len(rows)} rows: {parts}"
    tested = [r for r in rows if r.metric == "time" and math.isfinite(r.q_value)]
    if tested:
        changed = sum(r.changed for r in tested)
        alone = sum((r.own_verdict or r.verdict) in ("slower", "faster") for r in tested)
        text += (
            f"; {changed} of the {len(tested)} timed rows with an interval changed under "
            "Benjamini–Hochberg control of false discoveries at 5 %"
        )
        if alone != changed:
            text += f" ({alone} by their own intervals alone)"
    return text


def design_lines(rows: Sequence[RowComparison]) -> list[str]:
    """Per target, how its timed rows were compared and what their intervals cover: over
    paired rounds, over the container runs of two runs that were not interleaved, or not
    at all."""
    lines = []
    targets = sorted({r.key.target for r in rows if r.metric == "time"})
    for target in targets:
        timed = [r for r in rows if r.key.target == target and r.metric == "time"]
        rounds = sorted({r.rounds for r in timed if r.interleaved})
        repeats = sorted({r.df for r in timed if r.spread_source == "repeats"})
        if rounds:
            n = f"{rounds[0]}" if len(rounds) == 1 else f"{rounds[0]}-{rounds[-1]}"
            lines.append(
                f"{target}: interleaved, {n} paired rounds: each time interval is the "
                "Student-t interval of the per-round log ratios; it covers what varies "
                "from round to round"
            )
        if repeats:
            df = f"{repeats[0]}" if len(repeats) == 1 else f"{repeats[0]}-{repeats[-1]}"
            priors = sorted({r.between_runs or 0.0 for r in timed if r.spread_source == "repeats"})
            prior = priors[-1]
            if prior > 0:
                lines.append(
                    f"{target}: A and B were not interleaved: each time interval is the t "
                    f"interval over both runs' container runs ({df} degrees of freedom) "
                    "widened by a shift of the "
                    f"machine between the two invocations of ±{prior:.0%} each (a prior: "
                    "the spread of run levels measured on a 2-core VM; '--between-runs' "
                    "sets it), so only changes of some 35 % or more can be called; for "
                    "smaller ones measure A and B interleaved ('invoke history')"
                )
            else:
                lines.append(
                    f"{target}: A and B were not interleaved and '--between-runs 0' "
                    "leaves out any shift of the machine between them: the intervals are "
                    "not 95 % intervals (they covered 27-84 % in benchmarks/coverage.py) "
                    "and no row is called slower or faster; measure A and B interleaved "
                    "('invoke history')"
                )
        if any(r.verdict == "no interval" for r in timed):
            lines.append(
                f"{target}: A and B were not interleaved and neither has two container "
                f"runs: ratios only ({NO_INTERVAL}); measure them interleaved "
                "('invoke history') or with '--repeat 3' or more"
            )
    return lines


def _attribution(side: Sequence[Result], key: RowKey) -> tuple[FunctionCount, ...] | None:
    """The first attribution of ``key``'s row in one run's results (None: none has one).

    A comparison of two differently named single targets pairs them (``key.target``
    is A's name): then a row matches on everything but its target."""
    loose = None
    for result in side:
        for row in result.harness.rows:
            if row.attribution is None:
                continue
            found = row_key(result.target.name, row)
            if found == key:
                return row.attribution
            if loose is None and found == dataclasses.replace(key, target=found.target):
                loose = row.attribution
    return loose


def _named_by_symbol_files(side: Sequence[Result], target: str) -> frozenset[str]:
    """Libraries (file name without version) a symbol file named in ``target``'s counts
    (a side of one target only, when two differently named targets are compared)."""
    out: set[str] = set()
    chosen = [r for r in side if r.target.name == target]
    if not chosen and len({r.target.name for r in side}) == 1:
        chosen = list(side)
    for result in chosen:
        counting = result.harness.counting
        if counting is None:
            continue
        for library, check in counting.symbol_files.items():
            if check.get("status") == "used":
                out.add(library_stem(library))
    return frozenset(out)


def function_lines(
    rows: Sequence[RowComparison], sides: Sequence[Sequence[Result]], limit: int = FUNCTIONS_SHOWN
) -> list[str]:
    """Where each counted row that moved gained or lost its instructions, per target.

    For every instruction-count row with a verdict of change whose two runs both
    stored an attribution (counting plugin version 2), a heading line and the
    ``limit`` functions whose instructions per operation changed most
    (:func:`archbench.report.moved.function_moves`): the change (instructions per
    operation, signed), its share of the row's change, A and B, library and function.
    Rows counted before attribution are named once in a closing note.
    """
    lines: list[str] = []
    without = []
    for r in rows:
        if r.metric != "instructions" or not r.changed:
            continue
        a, b = (_attribution(side, r.key) for side in sides)
        if a is None or b is None:
            without.append(f"{r.key.target} {r.key.label}")
            continue
        named_a, named_b = (_named_by_symbol_files(side, r.key.target) for side in sides)
        if named_a != named_b:
            only = sorted(named_a ^ named_b)
            lines.append(
                f"note: on {r.key.target} symbol files named the functions of "
                f"{', '.join(only)} in only one of the two runs: their internal code is "
                "'(no symbol) after ...' on the other side, so those functions show as moved "
                "by their names alone"
            )
        lines.append(
            f"where {r.key.label} moved on {r.key.target} "
            f"({r.b_instructions - r.a_instructions:+,.0f} instructions per operation, "
            f"{r.ratio:.4f}×):"
        )
        lines.extend(function_line(f) for f in function_moves(a, b, limit))
    if without:
        lines.append(
            "no per-function counts for "
            + ", ".join(without)
            + " (counted before the plugin attributed functions; count again to see them)"
        )
    return lines


def compare_moves(
    rows: Sequence[RowComparison],
    sides: Sequence[Sequence[Result]],
    run_a: str,
    run_b: str,
    limit: int = FUNCTIONS_SHOWN,
) -> list[Moved]:
    """Each counted row that moved, with both runs' attribution, as a :class:`Moved` (its
    ``arch`` is the target's name, as the table's): what the differential figure and
    ``compare-<A>-vs-<B>-functions.csv`` show (:func:`function_lines` prints the same)."""
    out = []
    for r in rows:
        if r.metric != "instructions" or not r.changed:
            continue
        a, b = (_attribution(side, r.key) for side in sides)
        if a is None or b is None:
            continue
        out.append(
            Moved(
                arch=r.key.target,
                row=r.key.label.removeprefix(f"{r.key.suite} "),
                before_label=run_a,
                after_label=run_b,
                before=r.a_instructions,
                after=r.b_instructions,
                functions=function_moves(a, b, limit),
            )
        )
    return out


def notes(rows: Sequence[RowComparison]) -> list[str]:
    """``target row (metric): note`` for every row that has a note."""
    return [f"{r.key.target} {r.key.label} ({r.metric}): {r.note}" for r in rows if r.note]


def markdown(rows: Sequence[RowComparison], run_a: str, run_b: str, confidence: float) -> str:
    """The comparison as a Markdown table with a heading line, how each target was compared,
    the verdict counts and the rows' notes.

    Target names and row labels (text from results files) are escaped with
    :func:`archbench.report.formats.markdown_escape`, as in ``appendix.md``; so are the
    lines that name targets.
    """
    head = (
        f"B/A per operation, A = {run_a}, B = {run_b} (times: ratio with its "
        f"{confidence:.0%} interval; instructions: exact ratio, a change only beyond the "
        "rows' block-to-block spread and 0.1 %; > 1: B slower or more instructions)"
    )
    # The texts from results files (target, row) escaped as appendix.md's tables are:
    # a target name's | or ` cannot end a cell or start code, nor its < start HTML.
    cells = [[markdown_escape(c) if i < 2 else c for i, c in enumerate(_cells(r))] for r in rows]
    table = tabulate(cells, headers=COLUMNS, tablefmt="github", disable_numparse=True)
    design = "".join(f"- {markdown_escape(line)}\n" for line in design_lines(rows))
    remarks = "".join(f"- {markdown_escape(line)}\n" for line in notes(rows))
    # The heading holds run ids only (RUN_ID's grammar: nothing Markdown would read).
    parts = [
        head,
        design.rstrip("\n"),
        table,
        summary_line(rows),
        remarks.rstrip("\n"),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def latex(rows: Sequence[RowComparison], run_a: str, run_b: str, confidence: float) -> str:
    """The comparison as a booktabs ``table`` float (needs ``\\usepackage{booktabs}``)."""
    escaped = pd.DataFrame(
        [[latex_escape(c) for c in _cells(r)] for r in rows],
        columns=[latex_escape(c) for c in COLUMNS],
    )
    # Cells are escaped above; the Styler writes them as they are, with booktabs rules.
    body = escaped.style.hide(axis="index").to_latex(hrules=True, column_format="lllrrrll")
    caption = latex_escape(
        f"Run {run_b} (B) against run {run_a} (A): ratio B/A per operation, of median times "
        f"with its {confidence:.0%} interval, of instructions exactly; above 1, B is slower "
        "or executes more instructions. "
        + " ".join(f"{line}." for line in design_lines(rows))
        + (" " if design_lines(rows) else "")
        + summary_line(rows)
        + "."
    )
    return (
        "\\begin{table}[htbp]\n\\centering\\small\n"
        f"{body}\n\\caption{{{caption}}}\n\\label{{tab:compare}}\n\\end{{table}}\n"
    )


def frame(rows: Sequence[RowComparison], run_a: str, run_b: str) -> pd.DataFrame:
    """Tidy frame of the comparison: one row per compared row and metric, times in ns per
    operation, counts in instructions per operation; an unknown value is empty."""
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
                "metric": r.metric,
                "a_ns_per_op": None if math.isnan(r.a_ns) else r.a_ns,
                "b_ns_per_op": None if math.isnan(r.b_ns) else r.b_ns,
                "a_instructions_per_op": None if math.isnan(r.a_instructions) else r.a_instructions,
                "b_instructions_per_op": None if math.isnan(r.b_instructions) else r.b_instructions,
                "n_a": r.n_a,
                "n_b": r.n_b,
                "ratio": None if math.isnan(r.ratio) else r.ratio,
                "ratio_low": None if math.isnan(r.low) else r.low,
                "ratio_high": None if math.isnan(r.high) else r.high,
                "verdict": r.verdict,
                "interleaved_rounds": r.rounds or None,
                "between_run_spread": r.between_spread,
                "spread_source": r.spread_source,
                "degrees_of_freedom": r.df or None,
                "p_value": None if math.isnan(r.p_value) else r.p_value,
                "bh_q_value": None if math.isnan(r.q_value) else r.q_value,
                "count_spread": r.spread,
                "count_kind": r.count_kind,
                "between_runs_prior": r.between_runs,
                "note": r.note or None,
            }
            for r in rows
        ]
    )


def write(
    rows: Sequence[RowComparison],
    run_a: str,
    run_b: str,
    out_dir: Path,
    confidence: float,
    moves: Sequence[Moved] = (),
) -> list[Path]:
    """Write ``compare-<A>-vs-<B>.tex`` and ``.csv`` into ``out_dir``, and with ``moves``
    (:func:`compare_moves`) that have functions ``compare-<A>-vs-<B>-functions.csv``
    (:func:`archbench.report.moved.moves_frame`) and the differential figure
    ``compare-<A>-vs-<B>-functions.png``/``.pdf`` (a figure per row, a panel per target,
    :func:`archbench.report.plots.differential_figure`); returns their paths.

    Raises:
        OSError: ``out_dir`` cannot be written.
    """
    # The suffix is appended, never put in place of one: run ids hold dots (v1.0,
    # v1.1), and with_suffix would map compare-v1.0-vs-v1.1 and -v1.2 onto one name.
    stem = f"compare-{run_a}-vs-{run_b}"
    tex, csv = out_dir / f"{stem}.tex", out_dir / f"{stem}.csv"
    write_atomic(tex, latex(rows, run_a, run_b, confidence))
    write_atomic(csv, csv_text(frame(rows, run_a, run_b)))
    paths = [tex, csv]
    drawn = [m for m in moves if m.functions]
    if drawn:
        from archbench.report import plots  # matplotlib is slow to import: only when drawn

        functions = out_dir / f"{stem}-functions.csv"
        write_atomic(functions, csv_text(moves_frame(drawn)))
        paths.append(functions)
        rows_drawn: dict[str, list[Moved]] = {}
        for m in drawn:
            rows_drawn.setdefault(m.row, []).append(m)
        several = len(rows_drawn) > 1
        for k, (row, panels) in enumerate(rows_drawn.items(), start=1):
            fig = plots.differential_figure(
                panels, f"Where the instructions went: {row}, {run_a} → {run_b}"
            )
            name = f"{stem}-functions-{k}" if several else f"{stem}-functions"
            for fmt in ("png", "pdf"):
                path = out_dir / f"{name}.{fmt}"
                write_atomic(path, plots.figure_bytes(fig, fmt))
                paths.append(path)
    return paths
