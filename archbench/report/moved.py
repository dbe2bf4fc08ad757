"""Where a counted row's instructions went when it moved: history steps and bisection moves.

A move is one counted row on one architecture between two runs of the results store:
two versions of a history (:func:`archbench.report.history.history_moves`), or the first
commit at a new level and the last commit measured at the old one in a bisection
(:func:`bisect_moves`). Each run's row carries its attribution (counting plugin version 2,
:class:`archbench.result.FunctionCount`); :func:`function_moves` pairs the two
(:func:`archbench.analysis.function_changes`: libraries pair across sonames, the
``(other functions)`` remainder counts in the totals but is never listed) and keeps the
functions whose instructions per operation changed most, with their share of the row's
change. The same functions are printed (:func:`move_lines`), written as Markdown
(:func:`render_moves_markdown`) and CSV (:func:`moves_frame`), stored in ``bisect.json``
(:class:`archbench.result.BisectMove`) and drawn as a differential figure
(:func:`archbench.report.plots.differential_figure`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import pandas as pd
from tabulate import tabulate

from archbench.analysis import (
    ArchState,
    Graph,
    against_parent,
    function_changes,
    median_per_op,
    stored_count,
)
from archbench.report.formats import markdown_escape
from archbench.result import (
    BisectCount,
    BisectManifest,
    BisectMove,
    FunctionCount,
    FunctionMove,
    Result,
    ResultStore,
    Row,
    load,
)

FUNCTIONS_SHOWN: Final = 5
"""Functions listed per move (``invoke compare``, ``history``, ``bisect``, the page)."""

NO_ATTRIBUTION: Final = (
    "no per-function counts (counted before the plugin attributed functions; count again "
    "to see them)"
)
"""A move's note when one of its runs' rows has no attribution."""


@dataclass(frozen=True)
class Moved:
    """One counted row's move on one architecture, and the functions behind it.

    ``row``: the row's label (``CS signing``); ``before_label``/``after_label``: the two
    sides (versions of a history, commits of a bisection); ``before``/``after``: the row's
    instructions per operation on each side; ``functions``: largest absolute change
    first (empty: ``note`` says why).
    """

    arch: str
    row: str
    before_label: str
    after_label: str
    before: float
    after: float
    functions: tuple[FunctionMove, ...]
    note: str = ""

    @property
    def change(self) -> float:
        """after - before, instructions per operation."""
        return self.after - self.before

    @property
    def ratio(self) -> float:
        """after / before (NaN when before is 0)."""
        return self.after / self.before if self.before else math.nan


@dataclass(frozen=True)
class Differential:
    """A differential figure: the moves of one row between the same two sides, one panel
    per architecture (:func:`archbench.report.plots.differential_figure`)."""

    key: str
    """What tells it apart on a page (hashed into its HTML id)."""
    title: str
    moves: tuple[Moved, ...]


def differentials(moves: Sequence[Moved], prefix: str) -> list[Differential]:
    """The moves grouped into figures: one per (row, before, after), in first-seen order,
    its architectures as panels. ``prefix`` (a history or bisection id) starts each key.
    Moves without functions (no attribution) are left to the tables' notes."""
    groups: dict[tuple[str, str, str], list[Moved]] = {}
    for m in moves:
        if not m.functions:
            continue
        groups.setdefault((m.row, m.before_label, m.after_label), []).append(m)
    return [
        Differential(
            f"{prefix}\x1f{row}\x1f{before}\x1f{after}",
            f"Where the instructions went: {row}, {before} → {after}",
            tuple(found),
        )
        for (row, before, after), found in groups.items()
    ]


def function_moves(
    a: Sequence[FunctionCount], b: Sequence[FunctionCount], limit: int = FUNCTIONS_SHOWN
) -> tuple[FunctionMove, ...]:
    """The ``limit`` functions whose instructions per operation changed most from ``a``
    to ``b`` (two runs' attribution of one row), as stored records
    (:func:`archbench.analysis.function_changes`; share None where the totals are equal)."""
    return tuple(
        FunctionMove(
            library=c.library[:300],
            function=c.function[:300],
            before=c.a,
            after=c.b,
            change=c.delta,
            share=None if math.isnan(c.share) else c.share,
        )
        for c in function_changes(a, b, limit)
    )


def function_line(f: FunctionMove) -> str:
    """One function of a move as the terminal prints it: the signed change, its share of
    the row's change, before -> after (instructions per operation), library, function."""
    share = "" if f.share is None else f"{f.share:6.1%}"
    return (
        f"  {f.change:+14,.0f} {share:>7}  {f.before:>12,.0f} -> {f.after:<12,.0f} "
        f"{f.library}  {f.function}"
    )


def move_lines(moves: Sequence[Moved]) -> list[str]:
    """Per move a heading line (row, architecture, sides, change, ratio) and its
    functions (:func:`function_line`), or its note."""
    lines: list[str] = []
    for m in moves:
        lines.append(
            f"where {m.row} moved on {m.arch}, {m.before_label} → {m.after_label} "
            f"({m.change:+,.0f} instructions per operation, {m.ratio:.4f}×):"
        )
        lines.extend(function_line(f) for f in m.functions)
        if m.note:
            lines.append(f"  {m.note}")
    return lines


def render_moves_markdown(
    moves: Sequence[Moved], title: str = "Where the instructions went"
) -> str:
    """The moves' functions as a Markdown section ("" without moves): one table, a line
    per function of each move, names from results files escaped."""
    if not moves:
        return ""
    rows = []
    notes = []
    for m in moves:
        where = [markdown_escape(m.arch), markdown_escape(m.row)]
        sides = markdown_escape(f"{m.before_label} → {m.after_label}")
        for rank, f in enumerate(m.functions, start=1):
            rows.append(
                [
                    *where,
                    sides,
                    rank,
                    markdown_escape(f.library),
                    markdown_escape(f.function),
                    f"{f.change:+,.0f}",
                    "–" if f.share is None else f"{f.share:.1%}",
                    f"{f.before:,.0f} → {f.after:,.0f}",
                ]
            )
        if m.note:
            notes.append(f"- {' '.join(where)}, {sides}: {markdown_escape(m.note)}\n")
    table = (
        tabulate(
            rows,
            headers=[
                "arch",
                "row",
                "between",
                "#",
                "library",
                "function",
                "change",
                "share",
                "before → after",
            ],
            tablefmt="github",
            disable_numparse=True,
        )
        + "\n"
        if rows
        else ""
    )
    return (
        f"### {title}\n\n"
        f"For each counted row that moved, the {FUNCTIONS_SHOWN} functions whose instructions "
        "per operation changed most: the change (signed), its share of the row's change, and "
        "the function's instructions per operation before and after (libraries pair across "
        "sonames; code no symbol names, in a stripped library without a matching symbol file, "
        'shows as "(no symbol) after" the exported function before it).\n\n'
        + table
        + ("\n" + "".join(notes) if notes else "")
    )


def moves_frame(moves: Sequence[Moved]) -> pd.DataFrame:
    """One row per (move, function): ``arch``, ``row``, ``before_label``, ``after_label``,
    ``row_before``/``row_after`` (the row's instructions per operation), ``rank``,
    ``library``, ``function``, ``before``/``after``/``change`` (the function's
    instructions per operation) and ``share`` (of the row's change; empty: none)."""
    columns = ["arch", "row", "before_label", "after_label", "row_before", "row_after", "rank",
               "library", "function", "before", "after", "change", "share"]  # fmt: skip
    return pd.DataFrame.from_records(
        [
            {
                "arch": m.arch,
                "row": m.row,
                "before_label": m.before_label,
                "after_label": m.after_label,
                "row_before": round(m.before, 1),
                "row_after": round(m.after, 1),
                "rank": rank,
                "library": f.library,
                "function": f.function,
                "before": round(f.before, 1),
                "after": round(f.after, 1),
                "change": round(f.change, 1),
                "share": None if f.share is None else round(f.share, 4),
            }
            for m in moves
            for rank, f in enumerate(m.functions, start=1)
        ],
        columns=columns,
    )


def counted_row(row: Row) -> float | None:
    """A valid counted row's instructions per operation (median over its blocks)."""
    if not row.valid or not row.instructions:
        return None
    return median_per_op(row.instructions, row.ops_per_block)


# --- bisections ---------------------------------------------------------------------


def bisect_row(manifest: BisectManifest, results: Sequence[Result], target: str) -> Row | None:
    """The bisected row (the manifest's scheme, key size, operation) in ``target``'s
    counting result among one step's ``results``; None when it is not there."""
    for result in results:
        if result.metric != "instructions" or result.target.name != target:
            continue
        for row in result.harness.rows:
            if (
                row.suite == "blindsig"
                and row.scheme == manifest.scheme
                and row.operation == manifest.operation
                and (manifest.key_bits is None or row.key_bits == manifest.key_bits)
            ):
                return row
    return None


def stored_rows(store: ResultStore, manifest: BisectManifest) -> Callable[[str, str], Row | None]:
    """``row_of`` for :func:`bisect_moves`: the bisected row of a step's run as stored
    in ``store`` (:func:`bisect_row`; None when the run or row is not there)."""

    def row_of(run_id: str, target: str) -> Row | None:
        return bisect_row(manifest, [load(p) for p in store.files([run_id])], target)

    return row_of


def _neighbour(graph: Graph, goods: Sequence[int], bad: int, measured: set[int]) -> int | None:
    """The commit measured at the old level that is closest to ``bad``: a parent of
    ``bad`` when one was measured there, else the latest such commit."""
    there = [g for g in goods if g in measured]
    parents = [g for g in there if g in graph.parents[bad]]
    if parents:
        return max(parents)
    return max(there) if there else None


def bisect_moves(
    manifest: BisectManifest,
    states: Sequence[ArchState],
    graph: Graph,
    row_of: Callable[[str, str], Row | None],
    limit: int = FUNCTIONS_SHOWN,
) -> tuple[BisectMove, ...]:
    """Per architecture and move a bisection found, where its instructions went.

    For each search of a ``moved`` architecture (:class:`archbench.analysis.ArchState`),
    its first commit at the new level (``bad``) against its own first parent when the
    record holds every parent (:func:`archbench.analysis.against_parent`: a commit that
    only carries a parent's count, or has no parent, is no move and is left out), else
    against the last commit measured at the old level (:func:`_neighbour`), from the two
    steps' runs: ``row_of(run_id, target)``
    gives the bisected row of a stored run (None: not there). A search not finished is
    left out; a move whose runs have no attribution is stored with a note and no
    functions.
    """
    counts: dict[tuple[int, str], BisectCount] = {}
    for step in manifest.steps:
        for c in step.counts:
            if c.instructions:
                counts.setdefault((step.index, c.arch), c)  # the first, as the outcome reads
    out = []
    steps = [
        (step.index, {c.arch: stored_count(c) if c.time is None else None
                      for c in step.counts})
        for step in manifest.steps
    ]  # fmt: skip
    for st in states:
        if st.status != "moved":
            continue
        measured = {i for i, a in counts if a == st.arch}
        for s in st.searches:
            if not s.done:
                continue
            own = against_parent(graph, st.arch, steps, s.bad) if s.exact else None
            if own is not None and own.verdict not in ("moved", "unchecked"):
                continue  # no move at this commit against its own parent (outcome says why)
            good = (
                own.parent
                if own is not None and own.verdict == "moved"
                else _neighbour(graph, s.goods, s.bad, measured)
            )
            if good is None or (s.bad, st.arch) not in counts:
                continue
            before, after = counts[(good, st.arch)], counts[(s.bad, st.arch)]
            assert before.instructions and after.instructions  # chosen from counts
            rows = (row_of(before.run_id, before.target), row_of(after.run_id, after.target))
            a, b = (r.attribution if r is not None else None for r in rows)
            functions = () if a is None or b is None else function_moves(a, b, limit)
            note = NO_ATTRIBUTION if a is None or b is None else "no function moved"
            out.append(
                BisectMove(
                    arch=st.arch,
                    commit=manifest.commits[s.bad].commit,
                    neighbour=manifest.commits[good].commit,
                    before_run=before.run_id,
                    after_run=after.run_id,
                    before=before.instructions,
                    after=after.instructions,
                    exact=s.exact,
                    functions=functions,
                    note="" if functions else note,
                )
            )
    return tuple(out)


def bisect_moved(manifest: BisectManifest) -> list[Moved]:
    """The stored moves of a bisection (``bisect.json``'s ``moves``) as :class:`Moved`."""
    return [
        Moved(
            arch=m.arch,
            row=manifest.row,
            before_label=m.neighbour[:12],
            after_label=m.commit[:12] if m.exact else f"…{m.commit[:12]}",
            before=m.before,
            after=m.after,
            functions=m.functions,
            note=m.note,
        )
        for m in manifest.moves
    ]
