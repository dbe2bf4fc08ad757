"""The thesis appendix's LaTeX as printed: sections, Setup boxes, tables and their cells.

Reads the appendix "Performance Measurements" of the thesis
(``thesis-appendix-performance.tex``) into :class:`SeedTable` s exactly as
printed, and reads a printed cell into our terms: a scheme (``"RSA 1024
bit"``), an operation (``"10x signing"``, worded as
:data:`archbench.result.vocabulary.OPERATION_WORDING`), a value in ms
(``"10 000 ms"``). :mod:`archbench.upstream.reference` turns the tables into the
reference dataset.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

from archbench.errors import ReportError
from archbench.result import NS_PER_MS, Operation, Scheme
from archbench.upstream.wording import THESIS_BLINDSIG_WORDING, THESIS_HELPER_WORDING

SEED_FILE: Final = "thesis-appendix-performance.tex"
"""The seed's file name, as cited in every reference file's ``source``."""

TABLE_LABEL_PREFIX: Final = "tab:comp-sign-"

_BOX_KEY: Final = re.compile(r"^(CPU|[Aa]rchitecture|OS|lib[a-z]+(?:[:a-z0-9]*)? version):\s*(.*)$")
_SCHEME: Final = re.compile(r"^(CS|RSA (\d+)(?: bit)?)$")
_BLINDSIG_OP: Final = re.compile(r"^(\d+)x (.+)$")
_HELPER_OP: Final = re.compile(r"^(\d+) (.+)$")
_VALUE: Final = re.compile(r"^(\d[\d ]*(?:\.\d+)?)\s*ms$")
_UNESCAPE: Final = re.compile(r"\\([#_&%$])")


@dataclass(frozen=True)
class SeedRow:
    """One table row exactly as the seed prints it (LaTeX escapes removed)."""

    scheme: str
    """``"CS"``, ``"RSA 1024 bit"``, or ``"RSA 4092"`` as printed."""
    operation: str
    """``"10x key generation"`` or ``"100 parallel signature operations"``."""
    value: str
    """``"0.204 ms"``, ``"10 000 ms"``, ``"11ms"``."""
    group: int
    """Index of the ``\\hline\\hline``-separated group, from 0."""


@dataclass(frozen=True)
class SeedTable:
    """One appendix section: its title, Setup box and table, as printed."""

    title: str
    label: str
    caption: str
    box: tuple[tuple[str, str], ...]
    """(key, value) lines of the Setup box; continuation lines are joined."""
    rows: tuple[SeedRow, ...]
    intro: str = ""
    """The text between the section title and the Setup box, ``\\ref{…}`` kept."""
    printed_box: tuple[str, ...] = ()
    """The Setup box's lines as the PDF breaks them (at ``\\\\``), LaTeX escapes removed:
    the ARMv7 box prints "CPU: … (v7l) Architecture: armv7" as one line."""


def _unescape(text: str) -> str:
    return re.sub(r"\s+", " ", _UNESCAPE.sub(r"\1", text)).strip()


def _box(text: str, where: str) -> tuple[tuple[str, str], ...]:
    items: list[list[str]] = []
    for raw in text.strip().splitlines():
        line = raw.strip().removesuffix("\\\\").strip()
        if not line:
            continue
        match = _BOX_KEY.match(line)
        if match:
            items.append([match.group(1), match.group(2)])
        elif items:
            # A value wrapped onto the next source line (Threadripper's OS line).
            items[-1][1] += " " + line
        else:
            raise ReportError(f"{where}: Setup box line {line!r} has no 'Key:' prefix")
    return tuple((key, _unescape(value)) for key, value in items)


def _rows(text: str, where: str) -> tuple[SeedRow, ...]:
    rows: list[SeedRow] = []
    group = 0
    for raw in text.strip().splitlines():
        line = raw.strip()
        if line == r"\hline":
            group += 1
        elif "&" in line and r"\textbf" not in line:
            cells = [c.strip() for c in re.sub(r"\\\\(\\hline)?$", "", line).split("&")]
            if len(cells) != 3:
                raise ReportError(f"{where}: table row {line!r} does not have three cells")
            scheme, operation, value = (_unescape(c) for c in cells)
            rows.append(SeedRow(scheme, operation, value, group))
    return tuple(rows)


def parse_seed(text: str, source: str = SEED_FILE) -> list[SeedTable]:
    """Every table of the appendix chapter "Performance Measurements", in order.

    Only sections after ``\\chapter{Performance Measurements}`` that contain
    a ``tabular`` count; each must also have a Setup box, a caption and a
    ``tab:comp-sign-…`` label.

    Raises:
        ReportError: the chapter is missing, or a section lacks one of those
            parts, or a table row does not have three cells; the message
            names ``source`` and the section.
    """
    _, found, chapter = text.partition(r"\chapter{Performance Measurements}")
    if not found:
        raise ReportError(f"{source}: no \\chapter{{Performance Measurements}}")
    chapter = re.split(r"\\chapter\{", chapter, maxsplit=1)[0]
    tables: list[SeedTable] = []
    for chunk in re.split(r"\\section\{", chapter)[1:]:
        title, _, body = chunk.partition("}")
        where = f"{source}, section {title!r}"
        tabular = re.search(r"\\begin\{tabular\}\{[^}]*\}(.*?)\\end\{tabular\}", body, re.S)
        if tabular is None:
            continue
        box = re.search(r"\\begin\{bfhBox\}\[[^\]]*\]\{Setup\}(.*?)\\end\{bfhBox\}", body, re.S)
        intro = body[: box.start()] if box is not None else ""
        caption = re.search(r"\\caption\{([^}]*)\}", body)
        label = re.search(r"\\label\{(" + re.escape(TABLE_LABEL_PREFIX) + r"[^}]*)\}", body)
        if box is None or caption is None or label is None:
            raise ReportError(f"{where}: expected a Setup box, a \\caption and a \\label")
        tables.append(
            SeedTable(
                title=_unescape(title),
                label=label.group(1),
                caption=_unescape(caption.group(1)),
                box=_box(box.group(1), where),
                rows=_rows(tabular.group(1), where),
                intro=_unescape(intro),
                printed_box=tuple(
                    line
                    for line in (_unescape(part) for part in re.split(r"\\\\", box.group(1)))
                    if line
                ),
            )
        )
    if not tables:
        raise ReportError(f"{source}: the Performance Measurements chapter has no tables")
    return tables


def printed_to_ns(printed: str) -> int:
    """A printed speed in ms (``"10 000 ms"``, ``"0.001 ms"``, ``"11ms"``) in integer ns.

    Exact: decimal arithmetic, so ``"0.204 ms"`` is 204 000 ns, not a float
    neighbour of it.

    Raises:
        ValueError: not a number followed by ``ms``, or not positive.
    """
    match = _VALUE.match(printed.strip())
    if match is None:
        raise ValueError(f"not a speed in ms: {printed!r}")
    try:
        ns = Decimal(match.group(1).replace(" ", "")) * NS_PER_MS
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise ValueError(f"not a speed in ms: {printed!r}") from exc
    if ns <= 0 or ns != ns.to_integral_value():
        raise ValueError(f"{printed!r} is not a positive whole number of ns")
    return int(ns)


def read_scheme(text: str, where: str) -> tuple[Scheme, int | None]:
    """(scheme, key bits) of a printed scheme cell: ``"CS"``, ``"RSA 1024 bit"``, ``"RSA 4092"``.

    Raises:
        ReportError: any other text; the message starts with ``where``.
    """
    match = _SCHEME.match(text)
    if match is None:
        raise ReportError(f"{where}: unknown signature scheme {text!r}")
    return ("CS", None) if match.group(2) is None else ("RSA", int(match.group(2)))


def read_operation(text: str, where: str) -> tuple[Operation, int, str]:
    """(operation id, ops_per_block, suite) of a printed operation cell.

    ``"10x signing"`` is (``signing``, 10, ``blindsig``), ``"800 parallel
    signature operations"`` (``helper_parallel_signing``, 800,
    ``security-module``): the words are the vocabulary's
    (:mod:`archbench.upstream.wording`), without aliases.

    Raises:
        ReportError: any other text; the message starts with ``where``.
    """
    match = _BLINDSIG_OP.match(text)
    if match and match.group(2) in THESIS_BLINDSIG_WORDING:
        return THESIS_BLINDSIG_WORDING[match.group(2)], int(match.group(1)), "blindsig"
    match = _HELPER_OP.match(text)
    if match and match.group(2) in THESIS_HELPER_WORDING:
        return THESIS_HELPER_WORDING[match.group(2)], int(match.group(1)), "security-module"
    raise ReportError(f"{where}: unknown operation {text!r}")
