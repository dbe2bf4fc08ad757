"""Reports: the thesis appendix "Performance Measurements", rebuilt from stored results.

One section per target, as in the appendix of the Clause Blind Schnorr thesis
(``/work/shared/seeds/thesis-appendix-performance.tex``): a Setup box generated
from the result, then a table *Signature Scheme | Operation | Speed* whose rows
follow the appendix order and grouping. Two renderings share one view of the
data:

* ``appendix.tex`` (``reports/templates/appendix.tex.j2``): sections meant to
  be ``\\input`` below the thesis's ``\\chapter{Performance Measurements}``;
  it uses the thesis macros (``bfhBox``, ``setupBfhTabular``, ...).
* ``appendix.md`` (``reports/templates/appendix.md.j2``): the same tables for
  reading on GitHub or in a terminal.

Speeds are the median of a row's samples: the wall-clock time of one block of
``ops_per_block`` operations, in milliseconds, as the thesis prints "10x
signing: 0.077 ms". Statistics come from :func:`results_frame`, one pandas
DataFrame of every row, so later statistics and exports build on the same
numbers the tables show.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jinja2
import pandas as pd
from tabulate import tabulate

from archbench.errors import ReportError
from archbench.platforms import Arch
from archbench.results import LoadFailure, Operation, Result, write_atomic

TEMPLATES_DIR: Final = Path(__file__).resolve().parent.parent / "reports" / "templates"
"""Where the Jinja2 templates live: ``reports/templates`` of the checkout."""

LATEX_TEMPLATE: Final = "appendix.tex.j2"
MARKDOWN_TEMPLATE: Final = "appendix.md.j2"
LATEX_FILE: Final = "appendix.tex"
MARKDOWN_FILE: Final = "appendix.md"

OPERATION_WORDING: Final[dict[Operation, str]] = {
    "key_generation": "key generation",
    "r_derivation": "r0, r1 derive and R1,R2 calculation",
    "blinding_secret_derivation": "derivation of blinding secrets",
    "blinding": "blinding",
    "signing": "signing",
    "unblinding": "unblinding",
    "verifying": "verifying",
}
"""Operation id -> the thesis appendix's wording (``harness/CONTRACT.md``)."""

OPERATION_GROUPS: Final[tuple[tuple[Operation, ...], ...]] = (
    ("key_generation",),
    ("r_derivation", "blinding_secret_derivation", "blinding"),
    ("signing",),
    ("unblinding",),
    ("verifying",),
)
"""The appendix's row groups, in order; LaTeX separates them with an extra ``\\hline``."""

_OPERATION_RANK: Final[dict[str, int]] = {
    op: rank for rank, op in enumerate(op for group in OPERATION_GROUPS for op in group)
}
_GROUP_OF: Final[dict[str, int]] = {
    op: index for index, group in enumerate(OPERATION_GROUPS) for op in group
}

NS_PER_MS: Final = 1_000_000

GROUP_DIGITS_FROM_MS: Final = 10_000
"""Speeds from here on get a thousands separator.

The appendix groups five-digit values ("10 000 ms") but prints four-digit ones
plainly ("2684 ms", "8000 ms"), as SI typography does; we follow the appendix.
"""

FRAME_COLUMNS: Final = (
    "run_id",
    "target",
    "suite",
    "scheme",
    "key_bits",
    "label",
    "operation",
    "ops_per_block",
    "n_samples",
    "median_ms",
    "valid",
    "invalid_reason",
)


def results_frame(results: Sequence[Result]) -> pd.DataFrame:
    """One DataFrame row per measured row of every result, in appendix order.

    Columns (one row per harness row):

    ========================  ================================================
    ``run_id``                run that produced the result (str)
    ``target``                matrix target name (str)
    ``suite``                 harness suite, e.g. ``blindsig`` (str)
    ``scheme``                ``CS`` or ``RSA`` (str)
    ``key_bits``              RSA modulus size in bits; ``<NA>`` for CS (Int64)
    ``label``                 scheme as the thesis prints it, ``RSA 2048 bit``
    ``operation``             operation id from ``harness/CONTRACT.md`` (str)
    ``ops_per_block``         operations inside one timed block (int64)
    ``n_samples``             timed blocks (repetitions) behind the median (int64)
    ``median_ms``             median wall-clock time of one block, in ms (float64)
    ``valid``                 False when signatures failed to verify (bool)
    ``invalid_reason``        why the row is invalid; missing when valid (str)
    ========================  ================================================

    ``median_ms`` is the median of ``samples_ns`` divided by 10**6; with an
    even number of samples it is the mean of the two middle ones. It is
    computed for invalid rows too (the samples stay inspectable) but reports
    never print it for them.

    Rows are sorted by target name and run id, then as the appendix orders them: operation
    (key generation, r derivation, blinding secret derivation, blinding,
    signing, unblinding, verifying), CS before RSA, RSA by ascending key size.
    The index is a fresh ``RangeIndex``. An empty ``results`` gives an empty
    frame with these columns.
    """
    columns: dict[str, list[Any]] = {name: [] for name in FRAME_COLUMNS if name != "median_ms"}
    sample_row: list[int] = []
    sample_ns: list[int] = []
    for result in results:
        for row in result.harness.rows:
            sample_row.extend([len(columns["run_id"])] * len(row.samples_ns))
            sample_ns.extend(row.samples_ns)
            columns["run_id"].append(result.run_id)
            columns["target"].append(result.target.name)
            columns["suite"].append(row.suite)
            columns["scheme"].append(row.scheme)
            columns["key_bits"].append(row.key_bits)
            columns["label"].append(row.label)
            columns["operation"].append(row.operation)
            columns["ops_per_block"].append(row.ops_per_block)
            columns["n_samples"].append(len(row.samples_ns))
            columns["valid"].append(row.valid)
            columns["invalid_reason"].append(None if row.valid else row.invalid_reason)
    n_rows = len(columns["run_id"])
    samples = pd.DataFrame(
        {
            "row": pd.Series(sample_row, dtype="int64"),
            "ns": pd.Series(sample_ns, dtype="int64"),
        }
    )
    # Every row has at least one sample (Row validates it), so reindexing only
    # matters for a broken invariant: it then yields NaN, which rendering refuses.
    medians_ms = samples.groupby("row")["ns"].median().reindex(range(n_rows)) / NS_PER_MS
    frame = pd.DataFrame(
        {
            "run_id": pd.Series(columns["run_id"], dtype=str),
            "target": pd.Series(columns["target"], dtype=str),
            "suite": pd.Series(columns["suite"], dtype=str),
            "scheme": pd.Series(columns["scheme"], dtype=str),
            "key_bits": pd.Series(columns["key_bits"], dtype="Int64"),
            "label": pd.Series(columns["label"], dtype=str),
            "operation": pd.Series(columns["operation"], dtype=str),
            "ops_per_block": pd.Series(columns["ops_per_block"], dtype="int64"),
            "n_samples": pd.Series(columns["n_samples"], dtype="int64"),
            "median_ms": pd.Series(medians_ms.to_numpy(), dtype="float64"),
            "valid": pd.Series(columns["valid"], dtype=bool),
            "invalid_reason": pd.Series(columns["invalid_reason"], dtype=str),
        }
    )
    frame["_op"] = frame["operation"].map(_OPERATION_RANK)
    frame["_rsa"] = frame["scheme"] != "CS"
    frame["_bits"] = frame["key_bits"].fillna(0)
    frame = frame.sort_values(["target", "run_id", "_op", "_rsa", "_bits", "suite"], kind="stable")
    return frame.drop(columns=["_op", "_rsa", "_bits"]).reset_index(drop=True)


def format_ms(value_ms: float, thousands_sep: str = " ") -> str:
    """Format a speed as the appendix does: three decimals and ``ms``.

    ``0.2044`` -> ``"0.204 ms"``, ``2684.1234`` -> ``"2684.123 ms"``,
    ``10000.1234`` -> ``"10 000.123 ms"``. Values that round to 10 000 ms or
    more get ``thousands_sep`` between groups of three digits (LaTeX passes
    the thin space ``\\,``); see :data:`GROUP_DIGITS_FROM_MS`.

    Raises:
        ValueError: ``value_ms`` is NaN or infinite; such a value must never
            reach a table.
    """
    if not math.isfinite(value_ms):
        raise ValueError(f"cannot format a non-finite speed: {value_ms!r} ms")
    plain = f"{value_ms:.3f}"
    # Decide on the rounded text so 9999.9996 (printed 10000.000) is grouped.
    if abs(float(plain)) < GROUP_DIGITS_FROM_MS:
        return f"{plain} ms"
    return f"{value_ms:,.3f}".replace(",", thousands_sep) + " ms"


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
}
_LATEX_TABLE: Final = str.maketrans(_LATEX_SPECIAL)
_WHITESPACE: Final = re.compile(r"\s+")


def latex_escape(text: str) -> str:
    r"""Escape ``text`` so LaTeX prints it literally.

    Handles ``\ & % $ # _ { } ~ ^ < > |``; e.g. ``"#1 SMP x86_64"`` becomes
    ``"\#1 SMP x86\_64"``. Whitespace runs (newlines included) collapse to
    one space, because a blank line inside ``\section{}`` is a LaTeX error.
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


def _latex_ms(value_ms: float) -> _Latex:
    return _Latex(format_ms(value_ms, thousands_sep=r"\,"))


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
        env.filters["latex_ms"] = _latex_ms
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
            f"report template {template!r} not found in {TEMPLATES_DIR}; "
            "run archbench from a complete checkout (reports/templates/)"
        ) from exc


@dataclass(frozen=True)
class _Line:
    """One table row; ``median_ms`` is None exactly when the row is invalid."""

    label: str
    operation: str
    median_ms: float | None
    note: int | None


@dataclass(frozen=True)
class _Note:
    number: int
    text: str


@dataclass(frozen=True)
class _Section:
    """Everything one target's section shows, shared by both templates."""

    name: str
    slug: str
    cpu_model: str
    emulated: bool
    host_arch: str
    qemu_version: str
    setup: tuple[tuple[str, str], ...]
    groups: tuple[tuple[_Line, ...], ...]
    notes: tuple[_Note, ...]
    markdown_table: _Markdown


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "target"


def _setup_items(result: Result) -> tuple[tuple[str, str], ...]:
    setup = result.harness.setup
    execution = result.execution
    try:
        pkg_arch = Arch.from_key(result.target.arch).debian_arch
    except ValueError:
        pkg_arch = result.target.arch

    def version(package: str) -> str:
        if package not in setup.packages:
            return "unknown"
        return setup.packages[package] or "not installed"

    gnunet = version("libgnunetutil")
    if gnunet == "not installed" and setup.gnunet_version:
        # Built from source: dpkg does not know it, pkg-config does.
        gnunet = f"{setup.gnunet_version} (pkg-config)"
    if execution is None:
        how = "reference data" + (f" ({result.reference.source})" if result.reference else "")
    elif execution.emulated:
        how = (
            f"emulated (QEMU {execution.qemu_version or 'unknown version'}) "
            f"on {execution.host_arch} host {execution.host_cpu}"
        )
    else:
        how = "native"
    if result.emulated:
        # Under QEMU user emulation /proc/cpuinfo is the host's: there is no
        # target CPU to name, only the host that emulated it.
        host = f"{setup.cores}-core {setup.cpu_model}"
        cpu = f"none ({result.target.arch} emulated on the host's {host})"
    else:
        cpu = f"{setup.cores}-core {setup.cpu_model}"
    return (
        ("CPU", cpu),
        ("Architecture", f"{result.target.arch} (uname -m: {setup.machine})"),
        ("OS", f"{setup.os} {setup.kernel}"),
        (f"libsodium:{pkg_arch} version", version("libsodium")),
        (f"libgcrypt:{pkg_arch} version", version("libgcrypt")),
        (f"libgnunetutil:{pkg_arch} version", gnunet),
        ("Execution", how),
    )


def _lines(result: Result, frame: pd.DataFrame) -> tuple[list[list[_Line]], list[_Note]]:
    """Table rows of one result, grouped as the appendix groups them.

    Raises:
        ReportError: a valid row has no finite median (a broken results file).
    """
    groups: list[list[_Line]] = [[] for _ in OPERATION_GROUPS]
    notes: dict[str, int] = {}
    for record in frame.to_dict("records"):
        label = str(record["label"])
        operation = f"{record['ops_per_block']}x {OPERATION_WORDING[record['operation']]}"
        median = float(record["median_ms"])
        if bool(record["valid"]):
            if not math.isfinite(median):
                raise ReportError(
                    f"target {result.target.name} (run {result.run_id}): {label} "
                    f"{record['operation']} has no finite median; the results file is "
                    "damaged, re-measure it with 'invoke bench'"
                )
            line = _Line(label, operation, median, None)
        else:
            reason = record["invalid_reason"]
            why = reason if isinstance(reason, str) and reason else "no reason recorded"
            # The harness invalidates every row of a scheme and key size with
            # the same reason; one note per (scheme, reason) keeps notes short.
            text = f"{label}: {why}"
            number = notes.setdefault(text, len(notes) + 1)
            line = _Line(label, operation, None, number)
        groups[_GROUP_OF[str(record["operation"])]].append(line)
    return groups, [_Note(number, text) for text, number in notes.items()]


def _markdown_table(groups: Sequence[Sequence[_Line]], notes: Sequence[_Note]) -> _Markdown:
    rows = [
        [
            markdown_escape(line.label),
            markdown_escape(line.operation),
            format_ms(line.median_ms) if line.median_ms is not None else f"invalid [{line.note}]",
        ]
        for group in groups
        for line in group
    ]
    table = tabulate(
        rows,
        headers=["Signature Scheme", "Operation", "Speed"],
        # "pipe" is GitHub's table syntax with the ---: marker that
        # right-aligns Speed; "github" omits alignment markers.
        tablefmt="pipe",
        colalign=("left", "left", "right"),
        disable_numparse=True,
    )
    if notes:
        table += "\n\nInvalid rows (signatures failed to verify; no speed is reported):\n\n"
        table += "\n".join(f"- [{note.number}] {markdown_escape(note.text)}" for note in notes)
    return _Markdown(table)


def _section(result: Result, frame: pd.DataFrame) -> _Section:
    groups, notes = _lines(result, frame)
    kept = tuple(tuple(group) for group in groups if group)
    execution = result.execution
    qemu = (execution.qemu_version if execution else None) or "unknown version"
    return _Section(
        name=result.target.name,
        slug=_slug(result.target.name),
        cpu_model=(
            f"{result.target.arch} on QEMU {qemu}"
            if result.emulated
            else result.harness.setup.cpu_model
        ),
        emulated=result.emulated,
        host_arch=execution.host_arch if execution else "",
        qemu_version=qemu,
        setup=_setup_items(result),
        groups=kept,
        notes=tuple(notes),
        markdown_table=_markdown_table(kept, notes),
    )


def _sections(results: Sequence[Result]) -> list[_Section]:
    """Sections sorted by target name.

    Raises:
        ReportError: no results, or two results for one target (or two target
            names with the same label slug), which would give duplicate
            sections and LaTeX labels.
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    ordered = sorted(results, key=lambda r: (r.target.name, r.run_id))
    seen: dict[str, Result] = {}
    for result in ordered:
        slug = _slug(result.target.name)
        if slug in seen:
            other = seen[slug]
            raise ReportError(
                f"targets {other.target.name!r} (run {other.run_id}) and "
                f"{result.target.name!r} (run {result.run_id}) would share the LaTeX "
                f"label tab:comp-sign-{slug}; report one run at a time or rename a target"
            )
        seen[slug] = result
    frame = results_frame(ordered)
    return [_section(r, frame[frame["target"] == r.target.name]) for r in ordered]


def render_latex(results: Sequence[Result]) -> str:
    """The LaTeX appendix: one ``\\section`` per result, targets sorted by name.

    Raises:
        ReportError: no results, duplicate targets, a damaged row, or the
            template is missing.
    """
    return _render("latex", LATEX_TEMPLATE, sections=_sections(results))


def render_markdown(results: Sequence[Result], failures: Sequence[LoadFailure] = ()) -> str:
    """The Markdown appendix; ``failures`` are listed in a closing warning section.

    Raises:
        ReportError: no results, duplicate targets, a damaged row, or the
            template is missing.
    """
    # load() messages start with the path; print it once.
    skipped = [(str(f.path), f.message.removeprefix(f"{f.path}: ")) for f in failures]
    return _render("markdown", MARKDOWN_TEMPLATE, sections=_sections(results), failures=skipped)


def render_markdown_table(result: Result) -> str:
    """The Markdown table of one result (with its invalid-row notes), no trailing newline.

    Speeds are medians in ms (see :func:`results_frame`); invalid rows read
    ``invalid [n]`` and note ``n`` below the table gives the reason.

    Raises:
        ReportError: a valid row has no finite median.
    """
    return str(_section(result, results_frame([result])).markdown_table)


def write_reports(
    results: Sequence[Result], failures: Sequence[LoadFailure], out_dir: Path
) -> list[Path]:
    """Write ``appendix.tex`` and ``appendix.md`` into ``out_dir``, atomically.

    Both files are rendered before either is written, so a rendering error
    leaves the previous reports untouched. ``failures`` (files that could not
    be loaded) are listed at the end of the Markdown and do not stop the rest.

    Returns:
        The paths written: ``[out_dir/appendix.tex, out_dir/appendix.md]``.

    Raises:
        ReportError: no results (the message says to run ``invoke bench``
            first and names load failures, if any), duplicate targets, a
            damaged row, a missing template, or ``out_dir`` is not writable.
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
        out_dir / LATEX_FILE: render_latex(results),
        out_dir / MARKDOWN_FILE: render_markdown(results, failures),
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
