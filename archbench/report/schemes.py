"""CS compared with RSA: per machine operation by operation, and the CS speedup per machine.

The CS "derive R0, R1 & blinding" row is the sum of r derivation,
blinding-secret derivation and blinding (the thesis's discussion chapter:
0.444 + 0.094 + 3.332 = 3.870 ms on the Ryzen 7). A CS speedup is RSA time /
CS time (:data:`~archbench.result.vocabulary.SPEEDUP_DEFINITION`), a
:func:`archbench.analysis.stats.slowdown` of two per-operation times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from archbench.analysis import slowdown
from archbench.errors import ReportError
from archbench.report import versions
from archbench.report.crossmachine import kinds
from archbench.report.model import (
    Cell,
    Machine,
    Part,
    Ratio,
    ReportOptions,
    Speed,
    Table,
    is_empty,
)
from archbench.report.record import Record
from archbench.report.sections import record_digits, what
from archbench.report.units import Unit, per_op_ns_in, ratio_digits, sum_digits, unit_label
from archbench.result import COMPARISON_ROWS, SPEEDUP_HEADER, THESIS_OPS, scheme_text

COMPARISON_SIZES_PER_TABLE: Final = 2
"""RSA sizes per CS-vs-RSA table (each adds a speed and a ratio column)."""


@dataclass(frozen=True)
class _Sum:
    """A sum of operations' times; ``per_op_ns`` is None when a part is missing or invalid."""

    per_op_ns: float | None
    invalid: bool
    flags: tuple[str, ...]
    digits: int | None = None
    printed: str | None = None
    """The published text of a one-part sum, shown as printed where the unit is ms."""

    def speed(self, unit: Unit, *, bare: bool = False) -> Speed | None:
        """The sum as a cell in ``unit`` (``bare``: without it); None when a part is missing."""
        if self.per_op_ns is None:
            return Speed(None, bare=bare) if self.invalid else None
        value = per_op_ns_in(self.per_op_ns, THESIS_OPS, unit)
        printed = self.printed if unit == "ms" else None
        return Speed(value, printed, flags=self.flags, digits=self.digits, bare=bare)


_Records = dict[tuple[str, str, int], Record]


def _sum(records: _Records, scheme: str, bits: int, ops: Sequence[str]) -> _Sum:
    parts = [records.get((op, scheme, bits)) for op in ops]
    if any(p is None for p in parts):
        return _Sum(None, False, ())
    present = [p for p in parts if p is not None]
    if not all(p.valid for p in present):
        return _Sum(None, True, ())
    flags = tuple(dict.fromkeys(f for p in present for f in p.flag_names))
    digits = sum_digits([(p.per_op_ns, record_digits(p)) for p in present])
    printed = present[0].printed if len(present) == 1 else None
    if not (isinstance(printed, str) and printed.endswith("ms")):
        printed = None
    return _Sum(sum(p.per_op_ns for p in present), False, flags, digits, printed)


def _blindsig(machine: Machine) -> _Records:
    out = {}
    for record in machine.suite_records("blindsig"):
        out[(record.operation, record.scheme, record.key_bits or 0)] = record
    return out


def _ratio(numerator: _Sum, denominator: _Sum, suffix: str = "") -> Ratio:
    if numerator.invalid or denominator.invalid:
        return Ratio(None, suffix, invalid=True)
    if numerator.per_op_ns is None or denominator.per_op_ns is None:
        return Ratio(None, suffix)
    digits = ratio_digits(numerator.digits, denominator.digits)
    return Ratio(slowdown(numerator.per_op_ns, denominator.per_op_ns), suffix, digits=digits)


def _rsa_sizes(machines: Sequence[Machine]) -> list[int]:
    """RSA sizes of the blind-signature rows of machines that also measured CS."""
    sizes: set[int] = set()
    for m in machines:
        records = _blindsig(m)
        if any(scheme == "CS" for (_, scheme, _) in records):
            sizes |= {bits for (_, scheme, bits) in records if scheme == "RSA"}
    return sorted(sizes)


def compared_sizes(machines: Sequence[Machine], options: ReportOptions) -> tuple[int, ...]:
    """The RSA sizes CS is compared with: ``--compare-bits``, else every size measured.

    Raises:
        ReportError: a size in ``--compare-bits`` that no machine measured
            beside CS; the message lists the sizes there are.
    """
    there = _rsa_sizes(machines)
    if options.compare_bits is None:
        return tuple(there)
    unknown = [b for b in options.compare_bits if b not in there]
    if unknown:
        raise ReportError(
            f"--compare-bits {','.join(str(b) for b in unknown)}: no machine measured RSA "
            f"of that size beside CS; sizes measured: "
            f"{', '.join(str(b) for b in there) or 'none (no machine measured CS and RSA)'}"
        )
    return options.compare_bits


def cs_vs_rsa(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """Per machine, CS against each RSA size operation by operation, with the CS speedup.

    The unit stands in the column headers (``RSA``, ``1024 bit``, ``(ms)``),
    not in every cell, and LaTeX stacks the headers' lines: the table then
    fits ``\\linewidth`` of a 10 pt ``report`` without being shrunk.

    Raises:
        ReportError: ``--compare-bits`` names a size no machine measured.
    """
    unit = options.unit
    wanted = compared_sizes(machines, options)
    tables = []
    for m in machines:
        records = _blindsig(m)
        sizes = sorted({bits for (_, scheme, bits) in records if scheme == "RSA"} & set(wanted))
        if not sizes or not any(scheme == "CS" for (_, scheme, _) in records):
            continue
        reference = m.result.reference
        kind = " (emulated)" if m.emulated else f" ({reference.label})" if reference else ""
        # Two RSA sizes per table: five value columns fit A4 beside the operation.
        for first in range(0, len(sizes), COMPARISON_SIZES_PER_TABLE):
            chunk = sizes[first : first + COMPARISON_SIZES_PER_TABLE]
            rows: list[tuple[Cell, ...]] = []
            for label, cs_ops, rsa_ops in COMPARISON_ROWS:
                cs = _sum(records, "CS", 0, cs_ops)
                cells: list[Cell] = [label, cs.speed(unit, bare=True)]
                for bits in chunk:
                    rsa = _sum(records, "RSA", bits, rsa_ops)
                    cells += [rsa.speed(unit, bare=True), _ratio(rsa, cs, "×")]
                # An operation neither scheme measured here says nothing; leave it out.
                if not all(is_empty(c) for c in cells[1:]):
                    rows.append(tuple(cells))
            if not rows:
                continue
            # "\n": LaTeX stacks the header's lines (Markdown joins them).
            in_unit = f"({unit_label(unit)})"
            header: tuple[str, ...] = ("Operation", f"CS\n{in_unit}")
            for bits in chunk:
                header += (f"RSA\n{bits} bit\n{in_unit}", SPEEDUP_HEADER.replace(" ", "\n", 1))
            sizes_text = " and ".join(str(b) for b in chunk)
            tables.append(
                Table(
                    label=f"tab:cs-vs-rsa-{m.slug}-{'-'.join(str(b) for b in chunk)}",
                    caption=(
                        f"CS compared with RSA {sizes_text} bit on {m.name}{kind}: "
                        f"{what(unit, machines=[m])}"
                    ),
                    header=header,
                    align="l" + "r" * (len(header) - 1),
                    groups=(tuple(rows),),
                    small=True,
                )
            )
    return Part(
        title="CS compared with RSA",
        intro=(
            "As in the thesis's discussion, operation by operation; CS derives R0 and R1, "
            "derives the blinding secrets and blinds where RSA only blinds, so the row "
            "'derive R0, R1 & blinding' sums those three CS operations."
        ),
        tables=tuple(tables),
    )


def speedup_tables(machines: Sequence[Machine], sizes: Sequence[int]) -> list[Table]:
    """Per RSA size, the CS speedup of each machine (rows) and comparison row (columns)."""
    return [t for bits in sizes for t in _speedup(machines, bits)]


def _speedup(machines: Sequence[Machine], bits: int) -> list[Table]:
    tables: list[Table] = []
    with_bits = [
        m for m in machines if {("CS", 0), ("RSA", bits)} <= {(s, b) for (_, s, b) in _blindsig(m)}
    ]
    for kind, suffix, group in kinds(with_bits):
        rows = []
        odd, note = versions.odd_ones_out({m.name: m.result for m in group})
        for m in group:
            records = _blindsig(m)
            cells: list[Cell] = [versions.marked(m.header, m.name, odd)]
            for _, cs_ops, rsa_ops in COMPARISON_ROWS:
                cs = _sum(records, "CS", 0, cs_ops)
                rsa = _sum(records, "RSA", bits, rsa_ops)
                cells.append(_ratio(rsa, cs, "×"))
            if not all(is_empty(c) for c in cells[1:]):
                rows.append(tuple(cells))
        if not rows:
            continue
        tables.append(
            Table(
                label=f"tab:speedup-rsa{bits}-{kind}",
                caption=f"CS speedup over {scheme_text('RSA', bits)} per machine{suffix}",
                header=("Machine", *(label for label, _, _ in COMPARISON_ROWS)),
                align="l" + "r" * len(COMPARISON_ROWS),
                groups=(tuple(rows),),
                small=True,
                rotate_from=1,
                version_notes=(note,) if note else (),
            )
        )
    return tables
