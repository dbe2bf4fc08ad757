"""The one cross-machine table builder and the one chunker every suite uses.

A cross-machine table has a row per operation (as the suite's
:class:`RowLayout` keys it) and a column per machine. Hardware (and
reference data) and emulated machines never share a table (:func:`kinds`),
and more machines than ``ReportOptions.summary_columns`` are split into
about equal tables (:func:`chunks`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar

from archbench.report import versions
from archbench.report.model import Cell, Machine, Table
from archbench.report.record import Record

T = TypeVar("T")

EMULATED_SUFFIX: Final = " (QEMU user emulation: not comparable with hardware)"

CellFn = Callable[[Machine, Record], Cell]
"""(machine, its record of the row) -> the cell."""


@dataclass(frozen=True)
class RowLayout:
    """How a suite's records become rows: key, order, groups and the leading (text) cells.

    ``key(record)`` names the row a record belongs to; ``sort`` orders the
    keys (None: first-seen order); ``group`` puts keys into rule-separated
    groups (None: one group); ``leading(key, record, previous_key)`` gives the
    text cells before the machines' (``header`` names them, ``align`` aligns them).
    """

    header: tuple[str, ...]
    align: str
    key: Callable[[Record], Hashable]
    leading: Callable[[Any, Record, Any], tuple[str, ...]]
    sort: Callable[[Any], Any] | None = None
    group: Callable[[Any], Any] | None = None


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    """Split into about equal chunks of at most ``size``: 7 by 6 -> 4 + 3, 11 by 6 -> 6 + 5."""
    if not items:
        return []
    count = -(-len(items) // max(1, size))
    per = -(-len(items) // count)
    return [list(items[i : i + per]) for i in range(0, len(items), per)]


def kinds(machines: Sequence[Machine]) -> list[tuple[str, str, list[Machine]]]:
    """(slug, caption suffix, machines): hardware and reference together, emulated apart."""
    hardware = [m for m in machines if not m.emulated]
    emulated = [m for m in machines if m.emulated]
    out = []
    if hardware:
        out.append(("native", "", hardware))
    if emulated:
        out.append(("emulated", EMULATED_SUFFIX, emulated))
    return out


def _rows(
    machines: Sequence[Machine], suite: str, cell: CellFn, layout: RowLayout
) -> tuple[tuple[tuple[Cell, ...], ...], ...]:
    by_key: dict[Hashable, dict[str, Record]] = {}
    for m in machines:
        for record in m.suite_records(suite):
            by_key.setdefault(layout.key(record), {})[m.name] = record
    keys = list(by_key) if layout.sort is None else sorted(by_key, key=layout.sort)
    groups: dict[Any, list[tuple[Cell, ...]]] = {}
    previous: Hashable | None = None
    for key in keys:
        records = by_key[key]
        leading = layout.leading(key, next(iter(records.values())), previous)
        previous = key
        cells = tuple(cell(m, records[m.name]) if m.name in records else None for m in machines)
        group = None if layout.group is None else layout.group(key)
        groups.setdefault(group, []).append((*leading, *cells))
    ordered = groups.items() if layout.group is None else sorted(groups.items())
    return tuple(tuple(rows) for _, rows in ordered)


Detail = str | Callable[[Sequence[Machine]], str]
"""A caption's detail: fixed text, or text made from a chunk's machines."""


@dataclass(frozen=True)
class CrossSpec:
    """What one family of cross-machine tables shows and how it is labelled and captioned.

    ``cell`` gives each machine's cell of a row (``layout`` gives the rows);
    tables have at most ``columns`` machine columns. ``label`` gets
    ``-<chunk number>`` (and, through :func:`tables_by_kind`, ``-<kind>``
    before it); the caption is ``"<title>, part i of n: <detail>"`` (without
    the part when one table suffices). ``rotate_from``: header cells from this
    index on are set vertically in LaTeX (None: none); ``small`` None: small
    when more than five columns.
    """

    suite: str
    cell: CellFn
    layout: RowLayout
    columns: int
    label: str
    title: str
    detail: Detail
    rotate_from: int | None = None
    small: bool | None = None


def cross_tables(
    machines: Sequence[Machine],
    spec: CrossSpec,
    partners: Mapping[str, Machine] | None = None,
) -> list[Table]:
    """Tables of ``spec.suite`` with a column per machine, in chunks of at most ``spec.columns``.

    Columns whose library versions differ from the others' (or, for ratio
    tables, from their ``partners``': machine name -> the machine it is divided
    by) carry :data:`versions.MARK` and a note. ``spec.detail`` may depend on the
    chunk's machines.
    """
    parts = chunks(machines, spec.columns)
    tables = []
    for i, chunk in enumerate(parts, start=1):
        results = {m.name: m.result for m in chunk}
        if partners is None:
            odd, note = versions.odd_ones_out(results)
        else:
            pairs = {name: (p.name, p.result) for name, p in partners.items()}
            odd, note = versions.against_partners(results, pairs)
        layout = spec.layout
        header = (*layout.header, *(versions.marked(m.header, m.name, odd) for m in chunk))
        part = f", part {i} of {len(parts)}" if len(parts) > 1 else ""
        detail = spec.detail if isinstance(spec.detail, str) else spec.detail(chunk)
        tables.append(
            Table(
                label=f"{spec.label}-{i}",
                caption=f"{spec.title}{part}: {detail}",
                header=header,
                align=layout.align + "r" * len(chunk),
                groups=_rows(chunk, spec.suite, spec.cell, layout),
                small=len(header) > 5 if spec.small is None else spec.small,
                rotate_from=spec.rotate_from,
                version_notes=(note,) if note else (),
            )
        )
    return tables


def _with_suffix(detail: Detail, suffix: str) -> Detail:
    if isinstance(detail, str):
        return detail + suffix
    return lambda chunk: detail(chunk) + suffix


def tables_by_kind(
    machines: Sequence[Machine],
    spec: CrossSpec,
    *,
    arrange: Callable[[str, list[Machine]], list[Machine]] | None = None,
    partners: Callable[[list[Machine]], Mapping[str, Machine]] | None = None,
) -> list[Table]:
    """:func:`cross_tables` for the machines that ran ``spec.suite``, hardware and emulated apart.

    Labels are ``<label>-<kind>-<chunk>``; emulated captions end in
    :data:`EMULATED_SUFFIX`. ``arrange(kind, machines)`` may reorder a kind's
    machines (the baseline first); ``partners(machines)`` gives ratio partners.
    """
    tables: list[Table] = []
    for kind, suffix, group in kinds([m for m in machines if m.has_suite(spec.suite)]):
        if arrange is not None:
            group = arrange(kind, group)
        kind_spec = replace(
            spec, label=f"{spec.label}-{kind}", detail=_with_suffix(spec.detail, suffix)
        )
        tables += cross_tables(
            group, kind_spec, partners=None if partners is None else partners(group)
        )
    return tables
