"""Reports: the thesis appendix "Performance Measurements", rebuilt from stored results.

The whole chapter, for any set of results (ours, measured natively or under
QEMU, and the thesis's own figures from :mod:`archbench.reference`):

* one section per machine, as the appendix of the Clause Blind Schnorr thesis
  (``/work/shared/seeds/thesis-appendix-performance.tex``): a Setup box and a
  table *Signature Scheme | Operation | Speed* in the appendix's row order;
* a summary per suite across machines (rows: operation × scheme, columns:
  machines), emulated machines in tables of their own;
* per machine, CS compared with RSA operation by operation, where the CS
  "derive R0, R1 & blinding" row is the sum of r derivation, blinding-secret
  derivation and blinding (the thesis's discussion chapter: 0.444 + 0.094 +
  3.332 = 3.870 ms on the Ryzen 7), with the CS/RSA ratio;
* the speedup of CS over RSA 2048 bit per machine and, with a baseline, each
  machine's time relative to it.

Renderings: ``appendix.tex`` (``reports/templates/appendix.tex.j2``, in the
thesis's macros ``bfhBox``/``setupBfhTabular`` or plain booktabs),
``appendix-standalone.tex`` (a wrapper that defines those macros with plain
packages and ``\\input``s the chapter) and ``appendix.md`` (GitHub Markdown
with tabulate).

Every number comes from :func:`archbench.export.tidy_frame`, hence from
:func:`archbench.stats.summarize`: a speed is the median time of 10
operations (``thesis_ms``; the whole block for the security module), shown
in ms, µs or as operations per second. Reference rows print their published
text (``Row.printed``) when the unit is ms, so the thesis's tables come back
character for character.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, get_args

import jinja2
import pandas as pd
from tabulate import tabulate

from archbench import measurement, suite_tables, versions
from archbench.errors import ReportError
from archbench.export import HELPER_OPERATIONS, OPERATION_ORDER, THESIS_OPS, tidy_frame
from archbench.platforms import Arch
from archbench.results import APPENDIX_SUITES, LoadFailure, Operation, Result, write_atomic
from archbench.stats import DEFAULT_CV_THRESHOLD, DEFAULT_RESOLUTION_FACTOR

TEMPLATES_DIR: Final = Path(__file__).resolve().parent.parent / "reports" / "templates"
"""Where the Jinja2 templates live: ``reports/templates`` of the checkout."""

LATEX_TEMPLATE: Final = "appendix.tex.j2"
STANDALONE_TEMPLATE: Final = "appendix-standalone.tex.j2"
MARKDOWN_TEMPLATE: Final = "appendix.md.j2"
LATEX_FILE: Final = "appendix.tex"
STANDALONE_FILE: Final = "appendix-standalone.tex"
MARKDOWN_FILE: Final = "appendix.md"

Unit = Literal["ms", "us", "ops/s"]
Style = Literal["thesis", "booktabs"]

UNITS: Final[dict[str, Unit]] = {"ms": "ms", "us": "us", "µs": "us", "μs": "us", "ops/s": "ops/s"}
"""Accepted spellings of ``--unit``: milliseconds, microseconds, operations per second."""

STYLES: Final[tuple[Style, ...]] = get_args(Style)

OPERATION_WORDING: Final[dict[str, str]] = {
    "key_generation": "key generation",
    "r_derivation": "r0, r1 derive and R1,R2 calculation",
    "blinding_secret_derivation": "derivation of blinding secrets",
    "blinding": "blinding",
    "signing": "signing",
    "unblinding": "unblinding",
    "verifying": "verifying",
    "helper_sequential_signing": "sequential signature operations",
    "helper_parallel_signing": "parallel signature operations",
}
"""Operation id -> the thesis appendix's wording (``harness/CONTRACT.md``)."""

SHORT_WORDING: Final[dict[str, str]] = {
    **OPERATION_WORDING,
    "r_derivation": "r derivation",
    "blinding_secret_derivation": "blinding secrets",
}
"""Narrower wording for the cross-machine tables, whose columns are machines."""

OPERATION_GROUPS: Final[tuple[tuple[Operation, ...], ...]] = (
    ("key_generation",),
    ("r_derivation", "blinding_secret_derivation", "blinding"),
    ("signing",),
    ("unblinding",),
    ("verifying",),
    ("helper_sequential_signing",),
    ("helper_parallel_signing",),
)
"""The appendix's row groups, in order; tables separate them with an extra rule.

The security module's table also starts a group for each block size
("100 parallel" and "800 parallel signature operations").
"""

COMPARISON_ROWS: Final[tuple[tuple[str, tuple[Operation, ...], tuple[Operation, ...]], ...]] = (
    ("key generation", ("key_generation",), ("key_generation",)),
    (
        "derive R0, R1 & blinding",
        ("r_derivation", "blinding_secret_derivation", "blinding"),
        ("blinding",),
    ),
    ("signing", ("signing",), ("signing",)),
    ("unblinding", ("unblinding",), ("unblinding",)),
    ("verifying", ("verifying",), ("verifying",)),
)
"""(row, CS operations summed, RSA operations summed): the thesis's CS-vs-RSA comparison.

CS needs three calls where RSA needs one to blind a message, so the
discussion chapter compares their sum with RSA's blinding.
"""

COMPARISON_SIZES_PER_TABLE: Final = 2
"""RSA sizes per CS-vs-RSA table (each adds a speed and a ratio column)."""

SPEEDUP_RSA_BITS: Final = 2048
"""RSA size of the per-machine speedup table (Taler's default denomination key size)."""

THREE_DECIMALS_BELOW: Final = 5
"""Speeds below this print three decimals ("3.332 ms"), from here on integers ("5 ms", "34 ms")."""

GROUP_DIGITS_FROM_MS: Final = 10_000
"""Numbers from here on get a thousands separator.

The appendix groups five-digit values ("10 000 ms") but prints four-digit ones
plainly ("2684 ms", "8000 ms"), as SI typography does; we follow the appendix.
"""

SUMMARY_COLUMNS: Final = 6
"""Machines per cross-machine LaTeX table; more are split over several tables to fit A4."""

FLAG_MARKS: Final[dict[str, tuple[str, str]]] = {
    "noisy": (r"\dag", "†"),
    "near_resolution": (r"\ddag", "‡"),
    "single_sample": (r"\S", "§"),
}
"""Flag from :func:`archbench.stats.summarize` -> (LaTeX mark, Markdown mark)."""

FLAG_LEGEND: Final[dict[str, str]] = {
    "noisy": f"noisy: coefficient of variation above {DEFAULT_CV_THRESHOLD:.0%}",
    "near_resolution": (
        f"near the clock resolution: median block shorter than "
        f"{DEFAULT_RESOLUTION_FACTOR} clock ticks"
    ),
    "single_sample": "a single sample: no spread is known",
}

NS_PER_MS: Final = 1_000_000
SCIENTIFIC_FROM: Final = 1e12
"""From here on numbers print as ``1.00e+30``: a float has ~16 significant digits, and a
speed of 10^12 is no measurement anyway. Non-zero values that would print ``0.000`` also
switch to it (``4.00e-05``)."""


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


def parse_unit(text: str) -> Unit:
    """``"ms"``, ``"us"``/``"µs"`` or ``"ops/s"``.

    Raises:
        ReportError: any other text; the message lists the choices.
    """
    try:
        return UNITS[text.strip()]
    except KeyError:
        raise ReportError(f"--unit {text!r} is not one of: ms, us (µs), ops/s") from None


def parse_style(text: str) -> Style:
    """``"thesis"`` (the thesis's macros) or ``"booktabs"`` (plain booktabs tables).

    Raises:
        ReportError: any other text; the message lists the choices.
    """
    for style in STYLES:
        if text.strip() == style:
            return style
    raise ReportError(f"--style {text!r} is not one of: {', '.join(STYLES)}")


# --- number formatting ---------------------------------------------------------


def format_number(value: float, thousands_sep: str = " ") -> str:
    """A number as the appendix prints speeds: three decimals below 5, integers from 5.

    Values too small to show in three decimals (``0.00004`` -> ``"4.00e-05"``,
    not ``"0.000"``) or from :data:`SCIENTIFIC_FROM` on (``1e30`` ->
    ``"1.00e+30"``, not 31 invented digits) print in scientific notation
    with three significant digits.

    ``0.2044`` -> ``"0.204"``, ``4.9996`` -> ``"5"`` (decided on the rounded
    text), ``2684.4`` -> ``"2684"``, ``10000.4`` -> ``"10 000"``: from
    :data:`GROUP_DIGITS_FROM_MS` on, groups of three digits are separated by
    ``thousands_sep`` (LaTeX passes the thin space ``\\,``). Rounding is
    Python's round-half-even on the binary value.

    Raises:
        ValueError: ``value`` is NaN or infinite; such a value must never
            reach a table.
    """
    if not math.isfinite(value):
        raise ValueError(f"cannot format a non-finite number: {value!r}")
    if value != 0 and (float(f"{value:.3f}") == 0 or abs(value) >= SCIENTIFIC_FROM):
        # "0.000" would claim zero, and 30 digits of a float would invent 14.
        return f"{value:.2e}"
    decimals = f"{value:.3f}"
    if abs(float(decimals)) < THREE_DECIMALS_BELOW:
        return decimals
    whole = f"{value:.0f}"
    if abs(int(whole)) < GROUP_DIGITS_FROM_MS:
        return whole
    return f"{value:,.0f}".replace(",", thousands_sep)


def unit_label(unit: Unit, micro: str = "µ") -> str:
    """``"ms"``, ``"µs"`` (``micro`` + ``"s"``; LaTeX passes ``\\textmu{}``) or ``"ops/s"``."""
    return f"{micro}s" if unit == "us" else unit


def format_speed(
    value: float, unit: Unit = "ms", thousands_sep: str = " ", micro: str = "µ"
) -> str:
    """``value`` (already in ``unit``) with its unit: ``"0.204 ms"``, ``"10 000 ms"``.

    Raises:
        ValueError: ``value`` is not finite.
    """
    return f"{format_number(value, thousands_sep)} {unit_label(unit, micro)}"


def format_ms(value_ms: float, thousands_sep: str = " ") -> str:
    """A speed in ms as the appendix prints it: ``"0.204 ms"``, ``"2684 ms"``, ``"10 000 ms"``.

    Raises:
        ValueError: ``value_ms`` is not finite.
    """
    return format_speed(value_ms, "ms", thousands_sep)


def format_ratio(value: float, thousands_sep: str = " ") -> str:
    """A ratio to three significant digits, never in exponent notation.

    ``3.0195`` -> ``"3.02"``, ``0.0000760`` -> ``"0.0000760"``, ``13157.9``
    -> ``"13 158"`` (grouped from :data:`GROUP_DIGITS_FROM_MS` on).

    Raises:
        ValueError: ``value`` is not positive and finite.
    """
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"a ratio must be positive and finite, got {value!r}")
    if value >= SCIENTIFIC_FROM or value < 1e-12:
        return f"{value:.2e}"
    decimals = max(0, 2 - math.floor(math.log10(value)))
    text = f"{value:.{decimals}f}"
    # Rounding may add a digit (9.996 -> "10.00"); redo with the new magnitude.
    decimals = max(0, 2 - math.floor(math.log10(float(text))))
    text = f"{value:.{decimals}f}"
    if float(text) >= GROUP_DIGITS_FROM_MS:
        return f"{value:,.{decimals}f}".replace(",", thousands_sep)
    return text


def unit_value(thesis_ms: float, ops_per_s: float, unit: Unit) -> float:
    """A row's figure in ``unit``: ``thesis_ms`` in ms or µs, or ``ops_per_s`` (one operation)."""
    if unit == "ms":
        return thesis_ms
    if unit == "us":
        return thesis_ms * 1000
    return ops_per_s


# --- escaping -----------------------------------------------------------------

_LATEX_SPECIAL: Final = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Without T1 font encoding these print as other glyphs (< as an inverted !).
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    # pdflatex's default OT1 encoding has no such glyphs; these are the TS1 ones.
    "µ": r"\textmu{}",
    "μ": r"\textmu{}",
    "×": r"\texttimes{}",
    "–": "--",
    "—": "---",
    "†": r"\dag{}",
    "‡": r"\ddag{}",
    "§": r"\S{}",
    "¶": r"\P{}",
}
_LATEX_TABLE: Final = str.maketrans(_LATEX_SPECIAL)
_WHITESPACE: Final = re.compile(r"\s+")


def latex_escape(text: str) -> str:
    r"""Escape ``text`` so LaTeX prints it literally.

    Handles ``\ & % $ # _ { } ~ ^ < > |`` and the few non-ASCII signs reports
    use (µ × – — † ‡ §); e.g. ``"#1 SMP x86_64"`` becomes ``"\#1 SMP
    x86\_64"``. Whitespace runs (newlines included) collapse to one space,
    because a blank line inside ``\section{}`` is a LaTeX error.
    """
    return _WHITESPACE.sub(" ", text).strip().translate(_LATEX_TABLE)


# Characters that start Markdown syntax anywhere in a line. Underscores only
# emphasise at word boundaries, so "x86_64" stays readable in the raw file.
_MARKDOWN_SPECIAL: Final = re.compile(
    r"[\\`*\[\]<>|~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|&(?=#?[0-9A-Za-z]+;)"
)


def markdown_escape(text: str) -> str:
    r"""Escape ``text`` so GitHub Markdown prints it literally.

    Backslash-escapes ``\ ` * [ ] < > | ~ $``, underscores at word boundaries
    and ``&`` that would start an HTML entity; whitespace runs collapse to one
    space so a value never ends a heading or a table row early.
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), _WHITESPACE.sub(" ", text).strip())


class _Latex(str):
    """Text that is already LaTeX; the LaTeX environment prints it unchanged."""


class _Markdown(str):
    """Text that is already Markdown; the Markdown environment prints it unchanged."""


def _latex_filter(value: object) -> _Latex:
    return value if isinstance(value, _Latex) else _Latex(latex_escape(str(value)))


def _markdown_filter(value: object) -> _Markdown:
    return value if isinstance(value, _Markdown) else _Markdown(markdown_escape(str(value)))


@functools.cache
def _environment(kind: str) -> jinja2.Environment:
    common: dict[str, Any] = {
        "loader": jinja2.FileSystemLoader(TEMPLATES_DIR),
        "autoescape": False,
        "undefined": jinja2.StrictUndefined,
        "trim_blocks": True,
        "lstrip_blocks": True,
        "keep_trailing_newline": True,
    }
    if kind == "latex":
        # Jinja's default {{ }} and {% %} clash with LaTeX braces and comments.
        # HTML autoescaping would mangle LaTeX; finalize escapes for LaTeX instead.
        env = jinja2.Environment(  # noqa: S701
            block_start_string=r"\BLOCK{",
            block_end_string="}",
            variable_start_string=r"\VAR{",
            variable_end_string="}",
            comment_start_string="((#",
            comment_end_string="#))",
            # A value that skipped |latex is still escaped: data can never
            # inject LaTeX, and escaped text is not escaped twice.
            finalize=_latex_filter,
            **common,
        )
        env.filters["latex"] = _latex_filter
    else:
        # HTML autoescaping would print &amp; in Markdown; finalize escapes for it.
        env = jinja2.Environment(finalize=_markdown_filter, **common)  # noqa: S701
        env.filters["md"] = _markdown_filter
    return env


def _render(kind: str, template: str, **context: Any) -> str:
    try:
        return _environment(kind).get_template(template).render(**context)
    except jinja2.TemplateNotFound as exc:
        raise ReportError(
            f"report template {exc.name!r} not found in {TEMPLATES_DIR}; "
            "run archbench from a complete checkout (reports/templates/)"
        ) from exc


# --- the neutral view: tables of cells, shared by LaTeX and Markdown ---------------


@dataclass(frozen=True)
class _Speed:
    """A speed cell; ``value`` (in the report's unit) is None exactly when the row is invalid."""

    value: float | None
    printed: str | None = None
    flags: tuple[str, ...] = ()
    note: int | None = None
    bare: bool = False
    """Without the unit (cross-machine tables name it in the caption)."""


@dataclass(frozen=True)
class _Ratio:
    """A ratio cell; ``value`` is None when one side is missing or (``invalid``) invalid."""

    value: float | None
    suffix: str = ""
    invalid: bool = False


def _is_empty(cell: object) -> bool:
    """True for a cell that says nothing: not measured (invalid rows do say something)."""
    if cell is None:
        return True
    return isinstance(cell, _Ratio) and cell.value is None and not cell.invalid


_Cell = str | _Speed | _Ratio | None
"""Plain text (escaped by the renderer), a number, or None for "not measured"."""


@dataclass(frozen=True)
class _Table:
    label: str
    caption: str
    header: tuple[str, ...]
    align: str
    groups: tuple[tuple[tuple[_Cell, ...], ...], ...]
    notes: tuple[str, ...] = ()
    """Invalid-row reasons; note ``i + 1`` is ``notes[i]``."""
    small: bool = False
    rotate_from: int | None = None
    """Header cells from this index on are set vertically in LaTeX, to keep wide tables on A4."""
    version_notes: tuple[str, ...] = ()
    """Notes saying which compared machines' library versions differ (:mod:`archbench.versions`)."""

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags some cell carries, in legend order."""
        present = {
            flag
            for group in self.groups
            for row in group
            for cell in row
            if isinstance(cell, _Speed)
            for flag in cell.flags
        }
        return tuple(f for f in FLAG_MARKS if f in present)


@dataclass(frozen=True)
class _Machine:
    """One result as a report shows it: a unique name and where its rows are."""

    name: str
    slug: str
    result: Result
    frame: pd.DataFrame = field(compare=False)

    @property
    def emulated(self) -> bool:
        return self.result.emulated

    @property
    def is_reference(self) -> bool:
        return self.result.reference is not None

    @property
    def header(self) -> str:
        """Column header in cross-machine tables: ``amd64-trixie (amd64, Debian 13)``.

        Reference data keeps ``name (arch)``: its Setup box says what it ran on.
        """
        if self.is_reference:
            return f"{self.name} ({self.result.target.arch})"
        return f"{self.name} ({self.result.target.arch}, {versions.release(self.result)})"


@dataclass(frozen=True)
class _Section:
    """Everything one machine's section shows, shared by both templates."""

    name: str
    title: str
    heading: str
    emulated: bool
    setup: tuple[tuple[str, str], ...]
    notes: str
    table: _Table


@dataclass(frozen=True)
class _Part:
    """A titled group of tables (summary, CS vs RSA, comparison)."""

    title: str
    intro: str
    tables: tuple[_Table, ...]


@dataclass(frozen=True)
class _Chapter:
    unit: Unit
    sections: tuple[_Section, ...]
    parts: tuple[_Part, ...]
    citation: str | None
    failures: tuple[tuple[str, str], ...]


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "target"


def _arch_key(arch: str) -> str:
    try:
        return Arch.from_key(arch).key
    except ValueError:
        return arch


def _machines(results: Sequence[Result], frame: pd.DataFrame) -> list[_Machine]:
    """Measured results by target name and run, then reference results in the given order.

    A target name that occurs in several results (``--all-runs``) is shown
    as ``target@run``, so every section, column and LaTeX label is unique.

    Raises:
        ReportError: no results.
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    measured = sorted(
        (r for r in results if r.reference is None), key=lambda r: (r.target.name, r.run_id)
    )
    ordered = measured + [r for r in results if r.reference is not None]
    counts: dict[str, int] = {}
    for r in ordered:
        counts[r.target.name] = counts.get(r.target.name, 0) + 1
    machines: list[_Machine] = []
    slugs: set[str] = set()
    for r in ordered:
        name = r.target.name if counts[r.target.name] == 1 else f"{r.target.name}@{r.run_id}"
        slug = base = _slug(name)
        n = 1
        while slug in slugs:
            n += 1
            slug = f"{base}-{n}"
        slugs.add(slug)
        rows = frame[(frame["run_id"] == r.run_id) & (frame["target"] == r.target.name)]
        machines.append(_Machine(name, slug, r, rows))
    return machines


def machine_names(results: Sequence[Result]) -> list[tuple[str, Result]]:
    """Results in report order, each with the name its section and columns use.

    Measured results by target name and run id, then reference results in
    the given order; a target that occurs in several runs is
    ``target@run``. Plots use this so a bar and a table column agree.

    Raises:
        ReportError: no results.
    """
    return [(m.name, m.result) for m in _machines(results, tidy_frame(results))]


def _cpu(result: Result) -> str:
    """The CPU as a title names it; reference boxes print "8-core …", titles drop that."""
    cpu = result.harness.setup.cpu_model
    if result.reference is not None:
        return re.sub(r"^\d+-core\s+", "", cpu, flags=re.I)
    if result.emulated:
        execution = result.execution
        qemu = (execution.qemu_version if execution else None) or "unknown version"
        # The Debian package suffix "(Debian 1:7.2+dfsg-…)" belongs in the Setup box only.
        return f"{result.target.arch} on QEMU {qemu.split(' (', 1)[0]}"
    return cpu


def _setup_items(result: Result) -> tuple[tuple[str, str], ...]:
    setup = result.harness.setup
    execution = result.execution
    try:
        pkg_arch = Arch.from_key(result.target.arch).debian_arch
    except ValueError:
        pkg_arch = result.target.arch
    reference = result.reference
    if reference is not None:
        # As printed: the box's CPU line and OS line, and only the packages it lists.
        return (
            ("CPU", setup.cpu_model),
            ("Architecture", f"{result.target.arch} (uname -m: {setup.machine})"),
            ("OS", f"{setup.os} {setup.kernel}".strip()),
            *((f"{p}:{pkg_arch} version", v or "not installed") for p, v in setup.packages.items()),
            ("Source", f"{reference.source} ({reference.label})"),
        )

    def version(package: str) -> str:
        if package not in setup.packages:
            return "unknown"
        return setup.packages[package] or "not installed"

    gnunet = version("libgnunetutil")
    if gnunet == "not installed" and setup.gnunet_version:
        # Built from source: dpkg does not know it, pkg-config does.
        gnunet = f"{setup.gnunet_version} (pkg-config)"
    if execution is not None and execution.emulated:
        how = (
            f"emulated (QEMU {execution.qemu_version or 'unknown version'}) "
            f"on {execution.host_arch} host {execution.host_cpu}"
        )
        # Under QEMU user emulation /proc/cpuinfo is the host's: there is no
        # target CPU to name, only the host that emulated it.
        host = f"{setup.cores}-core {setup.cpu_model}"
        cpu = f"{host} (the host's CPU; {result.target.arch} emulated by QEMU)"
    else:
        how = "native"
        cpu = f"{setup.cores}-core {setup.cpu_model}"
    if execution is not None and execution.cpus is not None:
        how += f", CPU quota {execution.cpus:g} (Docker --cpus)"
    return (
        ("CPU", cpu),
        ("Architecture", f"{result.target.arch} (uname -m: {setup.machine})"),
        ("OS", " ".join(dict.fromkeys(v for v in (setup.os, setup.kernel) if v)) or "unknown"),
        (f"libsodium:{pkg_arch} version", version("libsodium")),
        (f"libgcrypt:{pkg_arch} version", version("libgcrypt")),
        (f"libgnunetutil:{pkg_arch} version", gnunet),
        ("Execution", how),
    )


_GROUP_OF: Final[dict[str, int]] = {
    op: index for index, group in enumerate(OPERATION_GROUPS) for op in group
}
_RANK: Final[dict[str, int]] = {op: i for i, op in enumerate(OPERATION_ORDER)}

_RowKey = tuple[str, int, str, int]
"""(operation, thesis_ops, scheme, key_bits or 0): one row of a table across machines."""


def _row_key(record: dict[str, Any]) -> _RowKey:
    bits = record["key_bits"]
    return (
        str(record["operation"]),
        int(record["thesis_ops"]),
        str(record["scheme"]),
        0 if bits is None or bits is pd.NA else int(bits),
    )


def _sort_key(key: _RowKey) -> tuple[int, int, bool, int]:
    operation, ops, scheme, bits = key
    return (_RANK.get(operation, len(_RANK)), ops, scheme != "CS", bits)


def _group_key(key: _RowKey) -> tuple[int, int]:
    operation, ops, _, _ = key
    # Each block size of the security module is a group of its own, as printed.
    return (
        _GROUP_OF.get(operation, len(OPERATION_GROUPS)),
        ops if operation in HELPER_OPERATIONS else 0,
    )


def _label(key: _RowKey) -> str:
    _, _, scheme, bits = key
    return "CS" if scheme == "CS" else f"RSA {bits} bit"


def _operation_label(key: _RowKey, unit: Unit, *, short: bool = False) -> str:
    operation, ops, _, _ = key
    words = (SHORT_WORDING if short else OPERATION_WORDING)[operation]
    if operation in HELPER_OPERATIONS:
        return f"{ops} {words}"
    if unit == "ops/s" or short:
        return words
    return f"{ops}x {words}"


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {str(k): (None if v is pd.NA else v) for k, v in record.items()}
        for record in frame.to_dict("records")
    ]


def _flags(record: dict[str, Any]) -> tuple[str, ...]:
    text = record["flags"]
    return tuple(text.split(";")) if isinstance(text, str) and text else ()


def _speed(
    record: dict[str, Any], unit: Unit, *, note: int | None = None, bare: bool = False
) -> _Speed:
    if not record["valid"]:
        return _Speed(None, note=note, bare=bare)
    # Printed text stands in for the number only where it is in the table's unit
    # (imported GNUnet logs print µs or s, too).
    printed = record["printed"]
    if unit != "ms" or not isinstance(printed, str) or not printed.endswith("ms"):
        printed = None
    value = unit_value(float(record["thesis_ms"]), float(record["ops_per_s"]), unit)
    return _Speed(value, printed, _flags(record), bare=bare)


def _grouped(
    rows: Iterable[tuple[_RowKey, tuple[_Cell, ...]]],
) -> tuple[tuple[tuple[_Cell, ...], ...], ...]:
    groups: dict[tuple[int, int], list[tuple[_Cell, ...]]] = {}
    for key, cells in sorted(rows, key=lambda kc: _sort_key(kc[0])):
        groups.setdefault(_group_key(key), []).append(cells)
    return tuple(tuple(g) for _, g in sorted(groups.items()))


def _what(unit: Unit, suite: str = "blindsig") -> str:
    if unit == "ops/s":
        return "operations per second (one operation)"
    if suite == "blindsig":
        return f"median time of {THESIS_OPS} operations in {unit_label(unit)}"
    return f"median time of the block each row names, in {unit_label(unit)}"


def _section(machine: _Machine, unit: Unit) -> _Section:
    result = machine.result
    notes: dict[str, int] = {}
    rows: list[tuple[_RowKey, tuple[_Cell, ...]]] = []
    for record in _records(machine.frame):
        key = _row_key(record)
        note = None
        if not record["valid"]:
            reason = record["invalid_reason"] or "no reason recorded"
            # The harness invalidates every row of a scheme and key size with
            # the same reason; one note per (scheme, reason) keeps notes short.
            note = notes.setdefault(f"{record['label']}: {reason}", len(notes) + 1)
        rows.append(
            (key, (_label(key), _operation_label(key, unit), _speed(record, unit, note=note)))
        )
    cpu = _cpu(result)
    helper_only = bool(rows) and all(key[0] in HELPER_OPERATIONS for key, _ in rows)
    if result.reference is not None:
        caption = f"Comparison on {cpu} ({result.reference.label})"
        heading = f"{cpu} — {machine.name} (reference data)"
    elif result.emulated:
        execution = result.execution
        host = execution.host_arch if execution else "unknown"
        caption = f"Comparison on {cpu} (emulated on {host})"
        heading = f"{cpu} — {machine.name} (emulated on {host})"
    else:
        caption = f"Comparison on {cpu}"
        heading = f"{cpu} — {machine.name}"
    table = _Table(
        label=f"tab:comp-sign-{machine.slug}",
        caption=caption,
        header=("Signature Scheme", "Test" if helper_only else "Operation", "Speed"),
        align="llr",
        groups=_grouped(rows),
        notes=tuple(notes),
        version_notes=measurement.blindsig_notes(result),
    )
    return _Section(
        name=machine.name,
        title=f"{cpu} ({machine.name})",
        heading=heading,
        emulated=result.emulated,
        setup=_setup_items(result),
        notes=result.reference.notes if result.reference else "",
        table=table,
    )


def _chunks(machines: Sequence[_Machine], size: int) -> list[list[_Machine]]:
    """Split into about equal chunks of at most ``size`` (11 -> 6 + 5, not 6 + 5 by luck)."""
    if not machines:
        return []
    count = -(-len(machines) // max(1, size))
    per = -(-len(machines) // count)
    return [list(machines[i : i + per]) for i in range(0, len(machines), per)]


def _kinds(machines: Sequence[_Machine]) -> list[tuple[str, str, list[_Machine]]]:
    """(slug, caption suffix, machines): hardware and reference together, emulated apart."""
    hardware = [m for m in machines if not m.emulated]
    emulated = [m for m in machines if m.emulated]
    kinds = []
    if hardware:
        kinds.append(("native", "", hardware))
    if emulated:
        kinds.append(
            (
                "emulated",
                " (QEMU user emulation: not comparable with hardware)",
                emulated,
            )
        )
    return kinds


def _suites(machines: Sequence[_Machine]) -> list[str]:
    found = {str(s) for m in machines for s in m.frame["suite"]}
    # Blind signatures first: it is what the appendix is about.
    return sorted(found, key=lambda s: (s != "blindsig", s))


def _cross_table(
    machines: Sequence[_Machine],
    suite: str,
    cell: Callable[[_Machine, dict[str, Any]], _Cell],
    unit: Unit,
) -> tuple[tuple[str, ...], tuple[tuple[tuple[_Cell, ...], ...], ...]]:
    """Header and groups of a table with rows operation × scheme and a column per machine."""
    by_key: dict[_RowKey, dict[str, dict[str, Any]]] = {}
    for m in machines:
        for record in _records(m.frame[m.frame["suite"] == suite]):
            by_key.setdefault(_row_key(record), {})[m.name] = record
    rows: list[tuple[_RowKey, tuple[_Cell, ...]]] = []
    previous_op: tuple[str, int] | None = None
    for key in sorted(by_key, key=_sort_key):
        op = (key[0], key[1])
        label = _operation_label(key, unit, short=True) if op != previous_op else ""
        previous_op = op
        cells = tuple(
            cell(m, by_key[key][m.name]) if m.name in by_key[key] else None for m in machines
        )
        rows.append((key, (label, _label(key), *cells)))
    header = ("Operation", "Scheme", *(m.header for m in machines))
    return header, _grouped(rows)


def _cross_tables(
    machines: Sequence[_Machine],
    suite: str,
    cell: Callable[[_Machine, dict[str, Any]], _Cell],
    options: ReportOptions,
    label: str,
    title: str,
    detail: str,
    partners: Mapping[str, _Machine] | None = None,
) -> list[_Table]:
    """Cross-machine tables of ``suite``, split into chunks of ``summary_columns`` machines.

    ``label`` gets ``-<chunk number>``; the caption is ``"<title>, part i of
    n: <detail>"`` (without the part when one table suffices). Columns whose library
    versions differ from the others' (or, for ratio tables, from their ``partners``':
    machine name -> the machine it is divided by) carry :data:`versions.MARK` and a note.
    """
    chunks = _chunks(machines, options.summary_columns)
    tables = []
    for i, chunk in enumerate(chunks, start=1):
        header, groups = _cross_table(chunk, suite, cell, options.unit)
        results = {m.name: m.result for m in chunk}
        if partners is None:
            odd, note = versions.odd_ones_out(results)
        else:
            pairs = {name: (p.name, p.result) for name, p in partners.items()}
            odd, note = versions.against_partners(results, pairs)
        marked = tuple(versions.marked(m.header, m.name, odd) for m in chunk)
        header = header[: len(header) - len(chunk)] + marked
        part = f", part {i} of {len(chunks)}" if len(chunks) > 1 else ""
        tables.append(
            _Table(
                label=f"{label}-{i}",
                caption=f"{title}{part}: {detail}",
                header=header,
                align="ll" + "r" * len(chunk),
                groups=groups,
                small=True,
                rotate_from=2,
                version_notes=(note,) if note else (),
            )
        )
    return tables


def _suite_title(suite: str) -> str:
    return {
        "blindsig": "blind signatures",
        "security-module": "security module",
        "gnunet-perf": "GNUnet's perf_crypto programs",
    }.get(suite, suite)


def _summary(machines: Sequence[_Machine], options: ReportOptions) -> _Part:
    tables: list[_Table] = []
    unit = options.unit
    for suite in _suites(machines):
        with_suite = [m for m in machines if (m.frame["suite"] == suite).any()]
        for kind, suffix, group in _kinds(with_suite):
            tables += _cross_tables(
                group,
                suite,
                lambda _m, r: _speed(r, unit, bare=True),
                options,
                f"tab:summary-{_slug(suite)}-{kind}",
                f"Summary of {_suite_title(suite)} across machines",
                f"{_what(unit, suite)}{suffix}",
            )
    return _Part(
        title="Summary across machines",
        intro=(
            "Each column is one machine; reference columns are published figures (the "
            "thesis's, or imported tool logs). "
            "Emulated machines have tables of their own: QEMU user emulation measures the "
            "emulator, not the architecture."
        ),
        tables=tuple(tables),
    )


@dataclass(frozen=True)
class _Sum:
    """A sum of operations' times; ``per_op_ns`` is None when a part is missing or invalid."""

    per_op_ns: float | None
    invalid: bool
    flags: tuple[str, ...]

    def speed(self, unit: Unit) -> _Speed | None:
        """The sum as a cell in ``unit``; None when a part was not measured."""
        if self.per_op_ns is None:
            return _Speed(None) if self.invalid else None
        if unit == "ops/s":
            value = 1e9 / self.per_op_ns
        else:
            value = self.per_op_ns * THESIS_OPS / NS_PER_MS * (1000 if unit == "us" else 1)
        return _Speed(value, flags=self.flags)


def _sum(
    records: dict[tuple[str, str, int], dict[str, Any]], scheme: str, bits: int, ops: Sequence[str]
) -> _Sum:
    parts = [records.get((op, scheme, bits)) for op in ops]
    if any(p is None for p in parts):
        return _Sum(None, False, ())
    present = [p for p in parts if p is not None]
    if not all(p["valid"] for p in present):
        return _Sum(None, True, ())
    flags = tuple(dict.fromkeys(f for p in present for f in _flags(p)))
    return _Sum(sum(float(p["per_op_ns"]) for p in present), False, flags)


def _blindsig_records(machine: _Machine) -> dict[tuple[str, str, int], dict[str, Any]]:
    frame = machine.frame[machine.frame["suite"] == "blindsig"]
    out = {}
    for record in _records(frame):
        key = _row_key(record)
        out[(key[0], key[2], key[3])] = record
    return out


def _ratio(numerator: _Sum, denominator: _Sum, suffix: str = "") -> _Ratio:
    if numerator.invalid or denominator.invalid:
        return _Ratio(None, suffix, invalid=True)
    if numerator.per_op_ns is None or denominator.per_op_ns is None:
        return _Ratio(None, suffix)
    return _Ratio(numerator.per_op_ns / denominator.per_op_ns, suffix)


def _cs_vs_rsa(machines: Sequence[_Machine], options: ReportOptions) -> _Part:
    unit = options.unit
    tables = []
    for m in machines:
        records = _blindsig_records(m)
        sizes = sorted({bits for (_, scheme, bits) in records if scheme == "RSA"})
        if options.compare_bits is not None:
            sizes = [b for b in sizes if b in options.compare_bits]
        if not sizes or not any(scheme == "CS" for (_, scheme, _) in records):
            continue
        reference = m.result.reference
        kind = " (emulated)" if m.emulated else f" ({reference.label})" if reference else ""
        # Two RSA sizes per table: five value columns fit A4 beside the operation.
        for first in range(0, len(sizes), COMPARISON_SIZES_PER_TABLE):
            chunk = sizes[first : first + COMPARISON_SIZES_PER_TABLE]
            rows: list[tuple[_Cell, ...]] = []
            for label, cs_ops, rsa_ops in COMPARISON_ROWS:
                cs = _sum(records, "CS", 0, cs_ops)
                cells: list[_Cell] = [label, cs.speed(unit)]
                for bits in chunk:
                    rsa = _sum(records, "RSA", bits, rsa_ops)
                    cells += [rsa.speed(unit), _ratio(cs, rsa)]
                # An operation neither scheme measured here says nothing; leave it out.
                if not all(_is_empty(c) for c in cells[1:]):
                    rows.append(tuple(cells))
            if not rows:
                continue
            header: tuple[str, ...] = ("Operation", "CS")
            for bits in chunk:
                header += (f"RSA {bits} bit", "CS/RSA")
            sizes_text = " and ".join(str(b) for b in chunk)
            tables.append(
                _Table(
                    label=f"tab:cs-vs-rsa-{m.slug}-{'-'.join(str(b) for b in chunk)}",
                    caption=(
                        f"CS compared with RSA {sizes_text} bit on {m.name}{kind}: "
                        f"{_what(unit)}; CS/RSA is the ratio of times (below 1: CS is faster)"
                    ),
                    header=header,
                    align="l" + "r" * (len(header) - 1),
                    groups=(tuple(rows),),
                    small=True,
                )
            )
    return _Part(
        title="CS compared with RSA",
        intro=(
            "As in the thesis's discussion, operation by operation; CS derives R0 and R1, "
            "derives the blinding secrets and blinds where RSA only blinds, so the row "
            "'derive R0, R1 & blinding' sums those three CS operations."
        ),
        tables=tuple(tables),
    )


def _find_baseline(machines: Sequence[_Machine], name: str) -> _Machine:
    for m in machines:
        if name in (m.name, m.slug):
            chosen = m
            break
    else:
        same_target = [m for m in machines if m.result.target.name == name]
        if len(same_target) == 1:
            chosen = same_target[0]
        else:
            names = [m.name for m in machines]
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            which = (
                f"it is in several runs, use one of {', '.join(m.name for m in same_target)}"
                if same_target
                else f"choose one of: {', '.join(names)}"
            )
            raise ReportError(f"--baseline {name!r} names no single machine ({which}){hint}")
    if chosen.emulated:
        raise ReportError(
            f"--baseline {name!r} ran under QEMU emulation; emulated timings are never a "
            "yardstick for hardware, choose a native or reference machine"
        )
    return chosen


def _comparison(machines: Sequence[_Machine], options: ReportOptions) -> _Part:
    tables: list[_Table] = []
    with_2048 = [
        m
        for m in machines
        if {("CS", 0), ("RSA", SPEEDUP_RSA_BITS)} <= {(s, b) for (_, s, b) in _blindsig_records(m)}
    ]
    for kind, suffix, group in _kinds(with_2048):
        rows = []
        odd, note = versions.odd_ones_out({m.name: m.result for m in group})
        for m in group:
            records = _blindsig_records(m)
            cells: list[_Cell] = [versions.marked(m.header, m.name, odd)]
            for _, cs_ops, rsa_ops in COMPARISON_ROWS:
                cs = _sum(records, "CS", 0, cs_ops)
                rsa = _sum(records, "RSA", SPEEDUP_RSA_BITS, rsa_ops)
                cells.append(_ratio(rsa, cs, "×"))
            if not all(_is_empty(c) for c in cells[1:]):
                rows.append(tuple(cells))
        if not rows:
            continue
        tables.append(
            _Table(
                label=f"tab:speedup-rsa{SPEEDUP_RSA_BITS}-{kind}",
                caption=(
                    f"Speedup of CS over RSA {SPEEDUP_RSA_BITS} bit per machine: RSA time / "
                    f"CS time (above 1: CS is faster){suffix}"
                ),
                header=("Machine", *(label for label, _, _ in COMPARISON_ROWS)),
                align="l" + "r" * len(COMPARISON_ROWS),
                groups=(tuple(rows),),
                small=True,
                rotate_from=1,
                version_notes=(note,) if note else (),
            )
        )
    intro = (
        f"How much faster CS is than RSA {SPEEDUP_RSA_BITS} bit on each machine, "
        "operation by operation."
    )
    if options.baseline is not None:
        base = _find_baseline(machines, options.baseline)
        intro += (
            f" Then each machine's time relative to {base.name}: above 1 means slower "
            "than the baseline."
        )
        base_records = {_row_key(r): r for r in _records(base.frame)}

        def relative(_m: _Machine, record: dict[str, Any]) -> _Cell:
            other = base_records.get(_row_key(record))
            if other is None:
                return _Ratio(None)
            if not record["valid"] or not other["valid"]:
                return _Ratio(None, invalid=True)
            return _Ratio(float(record["per_op_ns"]) / float(other["per_op_ns"]), "×")

        for suite in _suites([base]):
            with_suite = [m for m in machines if (m.frame["suite"] == suite).any()]
            for kind, suffix, group in _kinds(with_suite):
                if kind == "native":
                    # The baseline comes first, as the column every other is read against.
                    group = [base, *(m for m in group if m is not base)]
                tables += _cross_tables(
                    group,
                    suite,
                    relative,
                    options,
                    f"tab:baseline-{_slug(suite)}-{kind}",
                    f"Time of {_suite_title(suite)} relative to {base.name}",
                    f"machine time / baseline time (above 1: slower){suffix}",
                    partners={m.name: base for m in group},
                )
    return _Part(title="Comparison across machines", intro=intro, tables=tuple(tables))


def _native_partner(emulated: _Machine, machines: Sequence[_Machine]) -> _Machine | None:
    """The native measurement an emulated one is read against.

    A native run of the same architecture if the results have one (the true
    emulation cost), else a native run on the emulating host's architecture
    (what the same CPU does without QEMU). Reference data never qualifies:
    it was measured on other machines.
    """
    measured = [m for m in machines if not m.emulated and m.result.execution is not None]
    same_arch = [m for m in measured if m.result.target.arch == emulated.result.target.arch]
    if same_arch:
        return same_arch[0]
    host = emulated.result.execution.host_arch if emulated.result.execution else None
    same_host = [m for m in measured if m.result.target.arch == host]
    return same_host[0] if same_host else None


def _emulation(machines: Sequence[_Machine], options: ReportOptions) -> _Part:
    """Emulation slowdown per operation: emulated per-op time / native per-op time."""
    pairs = [
        (m, partner)
        for m in machines
        if m.emulated and (partner := _native_partner(m, machines)) is not None
    ]
    if not pairs:
        return _Part(title="Emulation slowdown", intro="", tables=())
    partner_records = {m.name: {_row_key(r): r for r in _records(p.frame)} for m, p in pairs}

    def slowdown(m: _Machine, record: dict[str, Any]) -> _Cell:
        other = partner_records[m.name].get(_row_key(record))
        if other is None:
            return _Ratio(None)
        if not record["valid"] or not other["valid"]:
            return _Ratio(None, invalid=True)
        return _Ratio(float(record["per_op_ns"]) / float(other["per_op_ns"]), "×")

    emulated = [m for m, _ in pairs]
    against = "; ".join(f"{m.name} against {p.name}" for m, p in pairs)
    tables: list[_Table] = []
    for suite in _suites(emulated):
        tables += _cross_tables(
            [m for m in emulated if (m.frame["suite"] == suite).any()],
            suite,
            slowdown,
            options,
            f"tab:emulation-slowdown-{_slug(suite)}",
            f"Emulation slowdown of {_suite_title(suite)}",
            f"per-operation time under QEMU / native per-operation time ({against})",
            partners={m.name: p for m, p in pairs},
        )
    intro = (
        "How much slower each operation runs under QEMU user emulation than natively. "
        "A native run of the same architecture is used where the results have one, "
        "else a native run on the emulating host."
    )
    return _Part(title="Emulation slowdown", intro=intro, tables=tuple(tables))


def _repeatability(machines: Sequence[_Machine], options: ReportOptions) -> _Part:
    """Within-run next to between-run spread for results of ``invoke bench --repeat K``."""
    repeated = [m for m in machines if (m.frame["runs"] > 1).any()]
    if not repeated:
        return _Part(title="Repeatability", intro="", tables=())

    def spread(_m: _Machine, record: dict[str, Any]) -> _Cell:
        between = record["between_run_cv"]
        if record["runs"] < 2 or between is None or pd.isna(between):
            return None
        return f"{record['within_run_cv'] * 100:.1f} % / {between * 100:.1f} %"

    tables = []
    for suite in _suites(repeated):
        group = [m for m in repeated if (m.frame["suite"] == suite).any()]
        runs = ", ".join(f"{m.name}: {int(m.frame['runs'].max())} runs" for m in group)
        tables += _cross_tables(
            group,
            suite,
            spread,
            options,
            f"tab:repeatability-{_slug(suite)}",
            f"Spread of {_suite_title(suite)}",
            "coefficient of variation within one container run (median over runs) / "
            f"between the runs' medians ({runs})",
        )
    intro = (
        "Each repeated target ran in several independent containers (a fresh process each). "
        "The first figure is the spread of blocks inside one run, the second the spread "
        "of the runs' medians: a second figure well above the first means results move "
        "between runs more than within one."
    )
    return _Part(title="Repeatability", intro=intro, tables=tuple(tables))


def _suite_number(value: float) -> str:
    """Suite tables' numbers: three significant digits, whole numbers from 100 on."""
    return format_ratio(value)


def _from_suite_table(table: suite_tables.SuiteTable) -> _Table:
    return _Table(
        label=table.label,
        caption=table.caption,
        header=table.header,
        align=table.align,
        groups=(tuple(tuple(row) for row in table.rows),),
        small=len(table.header) > 5,
        version_notes=table.notes,
    )


def _machines_table(machines: Sequence[_Machine]) -> _Table:
    """Where the other suites ran: CPU, architecture, OS and the tool versions they used."""
    rows = []
    for m in machines:
        setup = m.result.harness.setup
        tools = "; ".join(
            f"{name} {version.splitlines()[0] if version else ''}".strip()
            for name, version in sorted((setup.tools or {}).items())
        )
        mode = "emulated" if m.emulated else "native"
        libraries = versions.summary(m.result).split(": ", 1)[1]
        arch = f"{m.result.target.arch} ({mode})"
        rows.append((m.name, _cpu(m.result), arch, setup.os, libraries, tools))
    return _Table(
        label="tab:suite-machines",
        caption="Machines of the other suites and the library and tool versions they ran",
        header=("Machine", "CPU", "Architecture", "OS", "Libraries", "Tools"),
        align="llllll",
        groups=(tuple(rows),),
        small=True,
    )


def _other_suites(machines: Sequence[_Machine], options: ReportOptions) -> list[_Part]:
    """One part per suite beyond the appendix's (see :mod:`archbench.suite_tables`)."""
    inputs = [
        suite_tables.SuiteMachine(m.name, m.header, m.result, m.frame)
        for m in machines
        if not m.frame[~m.frame["suite"].isin(APPENDIX_SUITES)].empty
    ]
    parts = []
    for index, (title, tables) in enumerate(
        suite_tables.suite_tables(
            inputs, _suite_number, format_ratio, columns=options.summary_columns
        )
    ):
        converted = [_from_suite_table(t) for t in tables]
        if index == 0:
            with_rows = [m for m in machines if m.name in {i.name for i in inputs}]
            converted.insert(0, _machines_table(with_rows))
        parts.append(
            _Part(
                title=f"Suite: {title}",
                intro=(
                    "Median of all timed samples per row; † marks rows whose samples vary by "
                    "more than 5 % (CV). Emulated machines have tables of their own."
                ),
                tables=tuple(converted),
            )
        )
    return parts


def _chapter(
    results: Sequence[Result], options: ReportOptions, failures: Sequence[LoadFailure] = ()
) -> _Chapter:
    """The neutral view of the whole chapter.

    Raises:
        ReportError: no results, a damaged row, or an unknown or emulated baseline.
    """
    frame = tidy_frame(results)
    everything = _machines(results, frame)
    # The appendix's sections and tables show the appendix suites; the other
    # suites have parts of their own (archbench.suite_tables).
    machines = [
        dataclasses.replace(m, frame=m.frame[m.frame["suite"].isin(APPENDIX_SUITES)])
        for m in everything
    ]
    machines = [m for m in machines if not m.frame.empty or not m.result.harness.rows]
    parts = [
        _summary(machines, options),
        _cs_vs_rsa(machines, options),
        _comparison(machines, options),
        _emulation(machines, options),
        _repeatability(machines, options),
        *_other_suites(everything, options),
    ]
    citations = sorted({m.result.reference.citation for m in machines if m.result.reference})
    # load() messages start with the path; print it once.
    skipped = tuple((str(f.path), f.message.removeprefix(f"{f.path}: ")) for f in failures)
    return _Chapter(
        unit=options.unit,
        sections=tuple(_section(m, options.unit) for m in machines if not m.frame.empty),
        parts=tuple(p for p in parts if p.tables),
        citation="; ".join(citations) or None,
        failures=skipped,
    )


# --- LaTeX ------------------------------------------------------------------------


@dataclass(frozen=True)
class _LatexTable:
    label: str
    caption: _Latex
    colspec: str
    header: _Latex
    groups: tuple[tuple[_Latex, ...], ...]
    notes: tuple[_Latex, ...]
    small: bool


def _latex_marks(flags: Sequence[str]) -> str:
    return "".join(r"\textsuperscript{" + FLAG_MARKS[f][0] + "}" for f in flags)


def _latex_cell(cell: _Cell, unit: Unit) -> str:
    if cell is None:
        return "--"
    if isinstance(cell, str):
        return latex_escape(cell)
    if isinstance(cell, _Ratio):
        if cell.value is None:
            return r"\textit{invalid}" if cell.invalid else "--"
        return format_ratio(cell.value, r"\,") + (r"\texttimes{}" if cell.suffix else "")
    if cell.value is None:
        mark = "" if cell.note is None else r"\textsuperscript{" + str(cell.note) + "}"
        return r"\textit{invalid}" + mark
    marks = _latex_marks(cell.flags)
    if cell.printed is not None:
        if cell.bare:
            return latex_escape(re.sub(r"\s*ms$", "", cell.printed)).replace(" ", r"\,") + marks
        return latex_escape(cell.printed) + marks
    if cell.bare:
        return format_number(cell.value, r"\,") + marks
    return format_speed(cell.value, unit, r"\,", r"\textmu{}") + marks


def _latex_table(table: _Table, unit: Unit, style: Style) -> _LatexTable:
    def head(index: int, text: str) -> str:
        cell = latex_escape(text)
        if table.rotate_from is not None and index >= table.rotate_from:
            # Machine names are long; vertical headers keep a dozen columns on A4.
            cell = r"\rotatebox{90}{" + cell + "}"
        return r"\textbf{" + cell + "}" if style == "thesis" else cell

    notes = [
        r"\textsuperscript{" + str(i) + r"}\,\textit{invalid}: " + latex_escape(text)
        for i, text in enumerate(table.notes, start=1)
    ]
    notes += [
        r"\textsuperscript{" + FLAG_MARKS[f][0] + r"}\," + latex_escape(FLAG_LEGEND[f])
        for f in table.flags
    ]
    notes += [latex_escape(text) for text in table.version_notes]
    return _LatexTable(
        label=table.label,
        caption=_Latex(latex_escape(table.caption)),
        colspec=table.align,
        header=_Latex(" & ".join(head(i, h) for i, h in enumerate(table.header))),
        groups=tuple(
            tuple(_Latex(" & ".join(_latex_cell(c, unit) for c in row)) for row in group)
            for group in table.groups
        ),
        notes=tuple(_Latex(n) for n in notes),
        small=table.small,
    )


def _intro(chapter: _Chapter) -> list[str]:
    """Plain sentences that open the chapter: what a figure is, and where figures come from."""
    unit = chapter.unit
    if unit == "ops/s":
        what = "Speeds are operations per second of one operation, from the median block time."
    else:
        what = (
            f"Speeds are in {unit_label(unit)}: the median time of {THESIS_OPS} operations "
            "(of the whole block for the security module), from all timed blocks."
        )
    out = [what]
    if chapter.citation:
        out.append(
            "Sections marked as reference data reproduce published figures as printed: "
            + chapter.citation
            + "."
        )
    if any(s.emulated for s in chapter.sections):
        out.append(
            "Emulated sections ran under QEMU user emulation; their timings measure the "
            "emulator and are never ranked against hardware."
        )
    return out


def render_latex(
    results: Sequence[Result],
    options: ReportOptions = ReportOptions(),  # frozen: one shared default is safe
    failures: Sequence[LoadFailure] = (),
) -> str:
    """The chapter "Performance Measurements" in LaTeX (``appendix.tex``).

    A ``\\section`` per machine (measured ones by target name, then reference
    ones in the given order), then the summary, CS-vs-RSA and comparison
    sections. ``options.style`` ``"thesis"`` uses the thesis's macros
    (``bfhBox``, ``setupBfhTabular``, ``BFH-MediumBlue``; define them with
    :func:`render_standalone` outside the thesis), ``"booktabs"`` plain
    ``booktabs`` rules. ``failures`` become LaTeX comments at the end.

    Raises:
        ReportError: no results, a damaged row, an unknown or emulated
            baseline, or the template is missing.
    """
    chapter = _chapter(results, options, failures)

    def table(t: _Table) -> _LatexTable:
        return _latex_table(t, options.unit, options.style)

    return _render(
        "latex",
        LATEX_TEMPLATE,
        style=options.style,
        intro=[_Latex(latex_escape(s)) for s in _intro(chapter)],
        sections=[(s, table(s.table)) for s in chapter.sections],
        parts=[(p, [table(t) for t in p.tables]) for p in chapter.parts],
        failures=[_Latex(latex_escape(f"{path}: {msg}")) for path, msg in chapter.failures],
    )


def render_standalone(style: Style = "thesis") -> str:
    """``appendix-standalone.tex``: compiles ``appendix.tex`` outside the thesis class.

    It defines ``bfhBox`` (tcolorbox), ``setupBfhTabular`` (xcolor's
    alternating row colours) and the ``BFH-*`` colours with plain packages:
    xcolor (``table``), tcolorbox, booktabs, graphicx, geometry. ``style`` is
    recorded in a comment only; both styles compile with the same preamble.

    Raises:
        ReportError: the template is missing.
    """
    return _render(
        "latex", STANDALONE_TEMPLATE, style=style, chapter=LATEX_FILE.removesuffix(".tex")
    )


# --- Markdown ---------------------------------------------------------------------


def _markdown_cell(cell: _Cell, unit: Unit) -> str:
    if cell is None:
        return "–"
    if isinstance(cell, str):
        return markdown_escape(cell)
    if isinstance(cell, _Ratio):
        if cell.value is None:
            return "invalid" if cell.invalid else "–"
        return format_ratio(cell.value) + cell.suffix
    if cell.value is None:
        return "invalid" if cell.note is None else f"invalid [{cell.note}]"
    marks = "".join(FLAG_MARKS[f][1] for f in cell.flags)
    if cell.printed is not None:
        text = re.sub(r"\s*ms$", "", cell.printed) if cell.bare else cell.printed
        return markdown_escape(text) + marks
    if cell.bare:
        return format_number(cell.value) + marks
    return format_speed(cell.value, unit) + marks


def _markdown_table(table: _Table, unit: Unit) -> _Markdown:
    rows = [[_markdown_cell(c, unit) for c in row] for group in table.groups for row in group]
    text = tabulate(
        rows,
        headers=[markdown_escape(h) for h in table.header],
        # "pipe" is GitHub's table syntax with the ---: marker that
        # right-aligns numbers; "github" omits alignment markers.
        tablefmt="pipe",
        colalign=tuple("left" if a == "l" else "right" for a in table.align),
        disable_numparse=True,
    )
    if table.notes:
        text += "\n\nInvalid rows (signatures failed to verify; no speed is reported):\n\n"
        text += "\n".join(
            f"- [{i}] {markdown_escape(note)}" for i, note in enumerate(table.notes, start=1)
        )
    if table.flags:
        text += "\n\n" + "\n".join(
            f"- {FLAG_MARKS[f][1]} {markdown_escape(FLAG_LEGEND[f])}" for f in table.flags
        )
    if table.version_notes:
        text += "\n\n" + "\n".join(f"- {markdown_escape(n)}" for n in table.version_notes)
    return _Markdown(text)


def render_markdown(
    results: Sequence[Result],
    failures: Sequence[LoadFailure] = (),
    options: ReportOptions = ReportOptions(),  # frozen: one shared default is safe
) -> str:
    """The same chapter in GitHub Markdown (``appendix.md``); ``failures`` close it as a warning.

    Raises:
        ReportError: no results, a damaged row, an unknown or emulated
            baseline, or the template is missing.
    """
    chapter = _chapter(results, options, failures)
    unit = options.unit
    return _render(
        "markdown",
        MARKDOWN_TEMPLATE,
        intro=_intro(chapter),
        sections=[(s, _markdown_table(s.table, unit)) for s in chapter.sections],
        parts=[
            (p, [(t.caption, _markdown_table(t, unit)) for t in p.tables]) for p in chapter.parts
        ],
        failures=chapter.failures,
    )


def render_markdown_table(result: Result, unit: Unit = "ms") -> str:
    """The Markdown tables of one result (with notes and flag legend), no trailing newline.

    The appendix suites' speeds are the median time of 10 operations (see
    :func:`archbench.export.tidy_frame`); invalid rows read ``invalid [n]``
    and note ``n`` below the table gives the reason. The other suites follow,
    one table each (:mod:`archbench.suite_tables`).

    Raises:
        ReportError: a damaged row.
    """
    (machine,) = _machines([result], tidy_frame([result]))
    out = []
    appendix = dataclasses.replace(
        machine, frame=machine.frame[machine.frame["suite"].isin(APPENDIX_SUITES)]
    )
    if not appendix.frame.empty:
        out.append(str(_markdown_table(_section(appendix, unit).table, unit)))
    for part in _other_suites([machine], ReportOptions(unit=unit)):
        for table in part.tables:
            if table.label == "tab:suite-machines":
                continue
            out.append(f"**{markdown_escape(table.caption)}**\n\n{_markdown_table(table, unit)}")
    return "\n\n".join(out)


# --- selection and files ------------------------------------------------------------


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
        ReportError: ``results`` is not empty but nothing matches; the
            message lists what there is to choose from.
    """
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


def write_reports(
    results: Sequence[Result],
    failures: Sequence[LoadFailure],
    out_dir: Path,
    options: ReportOptions = ReportOptions(),  # frozen: one shared default is safe
) -> list[Path]:
    """Write ``appendix.tex``, ``appendix-standalone.tex`` and ``appendix.md`` into ``out_dir``.

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
    if not results:
        detail = ""
        if failures:
            detail = (
                f" ({len(failures)} results file(s) could not be loaded, "
                f"first: {failures[0].message})"
            )
        raise ReportError(f"no results to report{detail}; run 'invoke bench' first")
    rendered = {
        out_dir / LATEX_FILE: render_latex(results, options, failures),
        out_dir / STANDALONE_FILE: render_standalone(options.style),
        out_dir / MARKDOWN_FILE: render_markdown(results, failures, options),
    }
    for path, text in rendered.items():
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise ReportError(
                f"{path}: cannot write report: {exc.strerror or exc}; "
                "choose a writable output directory"
            ) from exc
    return list(rendered)
