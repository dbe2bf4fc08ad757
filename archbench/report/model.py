"""The table model every report table is built in, and the options a user chooses.

A :class:`Table` is rows of cells (grouped by extra rules), a header, notes
and flags; the LaTeX and Markdown renderers (:mod:`archbench.report.formats`)
turn the same table into either format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

import pandas as pd

from archbench.analysis import DEFAULT_CV_THRESHOLD, DEFAULT_RESOLUTION_FACTOR
from archbench.errors import ReportUsageError
from archbench.inputs import quote
from archbench.report import versions
from archbench.report.record import Record
from archbench.report.units import Unit
from archbench.result import Result

FLAG_MARKS: Final[dict[str, tuple[str, str]]] = {
    "noisy": (r"\dag", "†"),
    "near_resolution": (r"\ddag", "‡"),
    "single_sample": (r"\S", "§"),
}
"""Flag from :func:`archbench.analysis.stats.summarize` -> (LaTeX mark, Markdown mark)."""

FLAG_LEGEND: Final[dict[str, str]] = {
    "noisy": f"noisy: coefficient of variation above {DEFAULT_CV_THRESHOLD:.0%}",
    "near_resolution": (
        f"near the clock resolution: median block shorter than "
        f"{DEFAULT_RESOLUTION_FACTOR} clock ticks"
    ),
    "single_sample": "a single sample: no spread is known",
}

SPREAD_NOTE: Final = (
    "±: half-width of the 95 % interval of the row's median over its blocks, within the "
    "container run(s) measured; how far another run on the same machine would lie is not "
    "in it (between runs, see invoke compare)"
)
"""The legend of a measured cell's ``±``, under every table and on the results page."""

Style = Literal["thesis", "booktabs"]
STYLES: Final[tuple[Style, ...]] = get_args(Style)

SUMMARY_COLUMNS: Final = 6
"""Machines per cross-machine LaTeX table; more are split over several tables to fit A4."""


@dataclass(frozen=True)
class ReportOptions:
    """What ``invoke report`` lets a user choose; the defaults give the thesis's appendix.

    ``compare_bits`` are the RSA sizes of the CS-vs-RSA tables (``None``:
    every size a machine has); ``baseline`` names a machine (target name, or
    ``target@run`` when a target appears in several runs).
    """

    unit: Unit = "ms"
    style: Style = "thesis"
    baseline: str | None = None
    compare_bits: tuple[int, ...] | None = None
    summary_columns: int = SUMMARY_COLUMNS
    label_prefix: str = ""
    """Put before every LaTeX label and reference (``--label-prefix``; see
    :func:`archbench.report.formats.check_label_prefix`)."""
    figures: tuple[tuple[str, str], ...] = ()
    """(file stem, caption) of the figures written next to the chapter, to reference them."""
    earlier_runs: int = 0
    """Runs of the chapter's machines it leaves out for their latest (``--all-runs`` over
    a history); the chapter says so, and where they are."""


def parse_style(text: str) -> Style:
    """``"thesis"`` (the thesis's macros) or ``"booktabs"`` (plain booktabs tables).

    Raises:
        ReportUsageError (exit 2): any other text; the message lists the choices.
    """
    for style in STYLES:
        if text.strip() == style:
            return style
    raise ReportUsageError(f"--style {quote(text)} is not one of: {', '.join(STYLES)}")


@dataclass(frozen=True)
class Speed:
    """A speed cell; ``value`` (in the report's unit) is None exactly when the row is invalid."""

    value: float | None
    printed: str | None = None
    flags: tuple[str, ...] = ()
    note: int | None = None
    bare: bool = False
    """Without the unit (cross-machine tables name it in the caption)."""
    digits: int | None = None
    """Significant digits the source supports (printed figure, confidence interval); None:
    unknown, the appendix's style applies."""
    spread: float | None = None
    """Half-width of the median's 95 % interval relative to the value (0.014: ±1.4 %)."""


@dataclass(frozen=True)
class Ratio:
    """A ratio cell; ``value`` is None when one side is missing or (``invalid``) invalid."""

    value: float | None
    suffix: str = ""
    invalid: bool = False
    digits: int | None = None
    """Significant digits its inputs support (None: :data:`.units.RATIO_DIGITS`)."""


Cell = str | Speed | Ratio | None
"""Plain text (escaped by the renderer), a number, or None for "not measured"."""


def is_empty(cell: object) -> bool:
    """True for a cell that says nothing: not measured (invalid rows do say something)."""
    if cell is None:
        return True
    return isinstance(cell, Ratio) and cell.value is None and not cell.invalid


@dataclass(frozen=True)
class Table:
    """A table: ``groups`` of rows (separated by an extra rule), one cell per ``header`` entry.

    ``align`` has one LaTeX letter per column (``l``/``r``; ``Y`` a wrapping
    column of ``\\linewidth``). A ``header`` entry may hold a line break
    (``"CS\\n(ms)"``): LaTeX stacks its lines, Markdown joins them with a
    space (:func:`one_line`).
    """

    label: str
    caption: str
    header: tuple[str, ...]
    align: str
    groups: tuple[tuple[tuple[Cell, ...], ...], ...]
    notes: tuple[str, ...] = ()
    """Invalid-row reasons; note ``i + 1`` is ``notes[i]``."""
    small: bool = False
    rotate_from: int | None = None
    """Header cells from this index on are set vertically in LaTeX, to keep wide tables on A4."""
    version_notes: tuple[str, ...] = ()
    """Notes saying which compared machines' library versions differ (see
    :mod:`archbench.report.versions`)."""
    row_notes: tuple[str, ...] = ()
    """What the rows' ``note`` says (an API change inside a call, the work a layer row
    holds, key generation that left the adaptive loop), one line per distinct note."""
    noise_cause: str = ""
    """What the run recorded for the rows marked noisy (:func:`archbench.analysis.noise_summary`),
    printed after the † legend; empty: the legend alone."""

    @property
    def rows(self) -> tuple[tuple[Cell, ...], ...]:
        """All rows, groups concatenated."""
        return tuple(row for group in self.groups for row in group)

    def legend(self, flag: str) -> str:
        """The legend of ``flag`` under this table; the noisy one names the recorded causes."""
        text = FLAG_LEGEND[flag]
        if flag == "noisy" and self.noise_cause:
            text += f"; recorded: {self.noise_cause}"
        return text

    @property
    def spread_note(self) -> str:
        """What a cell's ``±`` covers, when some cell has one; else empty."""
        if not any(isinstance(c, Speed) and c.spread is not None for row in self.rows for c in row):
            return ""
        return SPREAD_NOTE

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags some cell carries, in legend order."""
        present = {
            flag
            for row in self.rows
            for cell in row
            if isinstance(cell, Speed)
            for flag in cell.flags
        }
        return tuple(f for f in FLAG_MARKS if f in present)


@dataclass(frozen=True)
class Machine:
    """One result as a report shows it: a unique name and where its rows are."""

    name: str
    slug: str
    result: Result
    table: pd.DataFrame = field(compare=False, repr=False)
    """The render's whole tidy frame (shared by every machine, never copied)."""
    positions: tuple[int, ...] = field(compare=False, default=())
    """This machine's rows: their positions in ``table``, in frame order."""
    records: tuple[Record, ...] = field(compare=False, default=())
    """The records of the rows at ``positions`` (:func:`archbench.report.frame.tidy_records`)."""

    @property
    def frame(self) -> pd.DataFrame:
        """This machine's rows of the tidy frame (a new frame: built only when asked for)."""
        return self.table.iloc[list(self.positions)]

    @property
    def emulated(self) -> bool:
        return self.result.emulated

    @property
    def is_reference(self) -> bool:
        return self.result.reference is not None

    @property
    def header(self) -> str:
        """Column header in cross-machine tables:
        ``amd64-trixie (amd64, Debian 13, GNUnet 0.20.0)``.

        Reference data keeps ``name (arch)``: its Setup box says what it ran on.
        """
        if self.is_reference:
            return f"{self.name} ({self.result.target.arch})"
        result = self.result
        return (
            f"{self.name} ({result.target.arch}, {versions.release(result)},"
            f" {versions.gnunet_label(result)})"
        )

    def suite_records(self, suite: str) -> list[Record]:
        """This machine's records of ``suite``, in frame order."""
        return [r for r in self.records if r.suite == suite]

    def has_suite(self, suite: str) -> bool:
        """True when this machine has a row of ``suite``."""
        return any(r.suite == suite for r in self.records)


@dataclass(frozen=True)
class Section:
    """Everything one machine's section shows, shared by both templates."""

    name: str
    title: str
    heading: str
    emulated: bool
    reference: bool
    setup: tuple[tuple[str, str], ...]
    notes: str
    table: Table
    intro: str = ""
    """Published text before the Setup box, ``\\ref{label}`` kept; empty: our sentence."""
    extra_tables: tuple[Table, ...] = ()
    """Tables after the appendix's: GNU Taler's path (the scheme-independent layer's
    ``taler_*`` rows), never mixed into the thesis's table."""


@dataclass(frozen=True)
class Part:
    """A titled group of tables (summary, CS vs RSA, comparison)."""

    title: str
    intro: str
    tables: tuple[Table, ...]


@dataclass(frozen=True)
class Chapter:
    """The whole chapter, format-neutral: sections per machine, then parts."""

    unit: Unit
    sections: tuple[Section, ...]
    parts: tuple[Part, ...]
    citation: str | None
    failures: tuple[tuple[str, str], ...]
    shared_notes: str = ""
    """Notes every reference section shares, printed once in the opening."""
    speedups: bool = False
    """True when a table shows CS speedups (the opening then defines them)."""
    figures: tuple[tuple[str, str], ...] = ()
    """(file stem, caption) of the figures beside the chapter (``ReportOptions.figures``)."""
    opening: tuple[str, ...] = ()
    """Plain sentences that open the chapter (:func:`archbench.report.chapter.intro`)."""
    earlier_runs: int = 0
    """``ReportOptions.earlier_runs``: said in the opening when not 0."""


def one_line(text: str) -> str:
    """A header entry on one line: ``"CS\\n(ms)"`` -> ``"CS (ms)"``."""
    return " ".join(text.split("\n"))


def slug(name: str) -> str:
    """``"amd64 Trixie!"`` -> ``"amd64-trixie"``: a name fit for a LaTeX label or file name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "target"
