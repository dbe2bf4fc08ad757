"""The appendix's parts across machines: summary, CS vs RSA, speedup, baseline, emulation, spread.

Ratios of times are :func:`archbench.stats.slowdown` of two per-operation
medians; the CS "derive R0, R1 & blinding" row is the sum of r derivation,
blinding-secret derivation and blinding (the thesis's discussion chapter:
0.444 + 0.094 + 3.332 = 3.870 ms on the Ryzen 7).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from archbench.errors import ReportError
from archbench.report import versions
from archbench.report.crossmachine import RowLayout, cross_tables, kinds, tables_by_kind
from archbench.report.model import (
    Cell,
    Machine,
    Part,
    Ratio,
    ReportOptions,
    Speed,
    Table,
    flags_of,
    is_empty,
    slug,
)
from archbench.report.sections import record_digits, speed, what
from archbench.report.units import Unit, per_op_ns_in, ratio_digits, sum_digits
from archbench.report.vocabulary import (
    COMPARISON_ROWS,
    SPEEDUP_HEADER,
    SPEEDUP_RSA_BITS,
    THESIS_OPS,
    RowKey,
    group_key,
    operation_label,
    row_key,
    scheme_label,
    sort_key,
    suite_title,
)
from archbench.stats import slowdown

COMPARISON_SIZES_PER_TABLE: Final = 2
"""RSA sizes per CS-vs-RSA table (each adds a speed and a ratio column)."""


def _leading(key: RowKey, _record: dict[str, Any], previous: RowKey | None) -> tuple[str, ...]:
    same = previous is not None and previous[:2] == key[:2]
    return ("" if same else operation_label(key, False, short=True), scheme_label(key))


APPENDIX_LAYOUT: Final = RowLayout(
    header=("Operation", "Scheme"),
    align="ll",
    key=row_key,
    leading=_leading,
    sort=sort_key,
    group=group_key,
)
"""Rows operation × scheme in the appendix's order and groups."""


def suites_of(machines: Sequence[Machine]) -> list[str]:
    """The suites the machines ran; blind signatures first, it is what the appendix is about."""
    found = {str(r["suite"]) for m in machines for r in m.records}
    return sorted(found, key=lambda s: (s != "blindsig", s))


def _appendix_tables(
    machines: Sequence[Machine], options: ReportOptions, **kwargs: Any
) -> list[Table]:
    return tables_by_kind(
        machines,
        layout=APPENDIX_LAYOUT,
        columns=options.summary_columns,
        rotate_from=2,
        small=True,
        **kwargs,
    )


def summary(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """Speeds per suite, a column per machine."""
    unit = options.unit
    tables: list[Table] = []
    for suite in suites_of(machines):
        tables += _appendix_tables(
            machines,
            options,
            suite=suite,
            cell=lambda _m, r: speed(r, unit, bare=True),
            label=f"tab:summary-{slug(suite)}",
            title=f"Summary of {suite_title(suite)} across machines",
            detail=functools.partial(what, unit, suite),
        )
    return Part(
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
    digits: int | None = None
    printed: str | None = None
    """The published text of a one-part sum, shown as printed where the unit is ms."""

    def speed(self, unit: Unit) -> Speed | None:
        """The sum as a cell in ``unit``; None when a part was not measured."""
        if self.per_op_ns is None:
            return Speed(None) if self.invalid else None
        value = per_op_ns_in(self.per_op_ns, THESIS_OPS, unit)
        printed = self.printed if unit == "ms" else None
        return Speed(value, printed, flags=self.flags, digits=self.digits)


_Records = dict[tuple[str, str, int], dict[str, Any]]


def _sum(records: _Records, scheme: str, bits: int, ops: Sequence[str]) -> _Sum:
    parts = [records.get((op, scheme, bits)) for op in ops]
    if any(p is None for p in parts):
        return _Sum(None, False, ())
    present = [p for p in parts if p is not None]
    if not all(p["valid"] for p in present):
        return _Sum(None, True, ())
    flags = tuple(dict.fromkeys(f for p in present for f in flags_of(p)))
    digits = sum_digits([(float(p["per_op_ns"]), record_digits(p)) for p in present])
    printed = present[0]["printed"] if len(present) == 1 else None
    if not (isinstance(printed, str) and printed.endswith("ms")):
        printed = None
    return _Sum(sum(float(p["per_op_ns"]) for p in present), False, flags, digits, printed)


def _blindsig(machine: Machine) -> _Records:
    out = {}
    for record in machine.suite_records("blindsig"):
        key = row_key(record)
        out[(key[0], key[2], key[3])] = record
    return out


def _ratio(numerator: _Sum, denominator: _Sum, suffix: str = "") -> Ratio:
    if numerator.invalid or denominator.invalid:
        return Ratio(None, suffix, invalid=True)
    if numerator.per_op_ns is None or denominator.per_op_ns is None:
        return Ratio(None, suffix)
    digits = ratio_digits(numerator.digits, denominator.digits)
    return Ratio(slowdown(numerator.per_op_ns, denominator.per_op_ns), suffix, digits=digits)


def ratio_of(record: dict[str, Any], other: dict[str, Any] | None) -> Ratio:
    """``record``'s per-operation time over ``other``'s, as a ``×`` cell."""
    if other is None:
        return Ratio(None)
    if not record["valid"] or not other["valid"]:
        return Ratio(None, invalid=True)
    value = slowdown(float(record["per_op_ns"]), float(other["per_op_ns"]))
    return Ratio(value, "×", digits=ratio_digits(record_digits(record), record_digits(other)))


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
    """Per machine, CS against each RSA size operation by operation, with CS/RSA.

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
                cells: list[Cell] = [label, cs.speed(unit)]
                for bits in chunk:
                    rsa = _sum(records, "RSA", bits, rsa_ops)
                    cells += [rsa.speed(unit), _ratio(rsa, cs, "×")]
                # An operation neither scheme measured here says nothing; leave it out.
                if not all(is_empty(c) for c in cells[1:]):
                    rows.append(tuple(cells))
            if not rows:
                continue
            header: tuple[str, ...] = ("Operation", "CS")
            for bits in chunk:
                header += (f"RSA {bits} bit", SPEEDUP_HEADER)
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


def find_baseline(machines: Sequence[Machine], name: str) -> Machine:
    """The machine ``--baseline`` names (name, slug, or a target in one run only).

    Raises:
        ReportError: no single machine has that name, or it ran emulated.
    """
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


def _check_baseline_shares_rows(base: Machine, machines: Sequence[Machine]) -> None:
    """Raise when no other machine measured a row the baseline has (a 1.00× table of itself).

    Raises:
        ReportError: naming the baseline's suites and the machines that would do.
    """
    owners: dict[tuple[str, RowKey], set[str]] = {}
    for m in machines:
        for r in m.records:
            owners.setdefault((str(r["suite"]), row_key(r)), set()).add(m.name)
    if any(len(owners[(str(r["suite"]), row_key(r))]) > 1 for r in base.records):
        return
    usable = [
        m.name
        for m in machines
        if not m.emulated and any(len(owners[(str(r["suite"]), row_key(r))]) > 1 for r in m.records)
    ]
    suites = ", ".join(sorted({str(r["suite"]) for r in base.records}))
    raise ReportError(
        f"--baseline {base.name!r}: no other machine measured what it did (suite {suites}), "
        "so every figure would compare it with itself; choose a machine that shares rows "
        f"with others: {', '.join(usable) or 'none in this selection'}"
    )


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
                caption=(f"CS speedup over RSA {bits} bit per machine{suffix}"),
                header=("Machine", *(label for label, _, _ in COMPARISON_ROWS)),
                align="l" + "r" * len(COMPARISON_ROWS),
                groups=(tuple(rows),),
                small=True,
                rotate_from=1,
                version_notes=(note,) if note else (),
            )
        )
    return tables


def comparison(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """The speedup of CS over RSA per machine and, with a baseline, times relative to it.

    Raises:
        ReportError: the baseline is unknown or emulated (:func:`find_baseline`).
    """
    sizes = (SPEEDUP_RSA_BITS,) if options.compare_bits is None else options.compare_bits
    tables = [t for bits in sizes for t in _speedup(machines, bits)]
    intro = (
        f"How much faster CS is than RSA {' and '.join(str(b) for b in sizes)} bit on each "
        "machine, operation by operation."
    )
    if options.baseline is not None:
        base = find_baseline(machines, options.baseline)
        intro += (
            f" Then each machine's time relative to {base.name}: above 1 means slower "
            "than the baseline."
        )
        base_records = {row_key(r): r for r in base.records}
        _check_baseline_shares_rows(base, machines)

        def first(kind: str, group: list[Machine]) -> list[Machine]:
            # The baseline comes first, as the column every other is read against.
            return [base, *(m for m in group if m is not base)] if kind == "native" else group

        for suite in suites_of([base]):
            tables += _appendix_tables(
                machines,
                options,
                suite=suite,
                cell=lambda _m, r: ratio_of(r, base_records.get(row_key(r))),
                label=f"tab:baseline-{slug(suite)}",
                title=f"Time of {suite_title(suite)} relative to {base.name}",
                detail="machine time / baseline time (above 1: slower)",
                arrange=first,
                partners=lambda group: {m.name: base for m in group},
            )
    return Part(title="Comparison across machines", intro=intro, tables=tuple(tables))


def native_partner(emulated: Machine, machines: Sequence[Machine]) -> Machine | None:
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


def emulation(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """Emulation slowdown per operation: emulated per-op time / native per-op time."""
    pairs = [
        (m, partner)
        for m in machines
        if m.emulated and (partner := native_partner(m, machines)) is not None
    ]
    if not pairs:
        return Part(title="Emulation slowdown", intro="", tables=())
    partner_records = {m.name: {row_key(r): r for r in p.records} for m, p in pairs}
    emulated = [m for m, _ in pairs]
    against = "; ".join(f"{m.name} against {p.name}" for m, p in pairs)
    tables: list[Table] = []
    for suite in suites_of(emulated):
        tables += cross_tables(
            [m for m in emulated if m.has_suite(suite)],
            suite,
            lambda m, r: ratio_of(r, partner_records[m.name].get(row_key(r))),
            APPENDIX_LAYOUT,
            columns=options.summary_columns,
            label=f"tab:emulation-slowdown-{slug(suite)}",
            title=f"Emulation slowdown of {suite_title(suite)}",
            detail=f"per-operation time under QEMU / native per-operation time ({against})",
            partners={m.name: p for m, p in pairs},
            rotate_from=2,
            small=True,
        )
    intro = (
        "How much slower each operation runs under QEMU user emulation than natively. "
        "A native run of the same architecture is used where the results have one, "
        "else a native run on the emulating host."
    )
    return Part(title="Emulation slowdown", intro=intro, tables=tuple(tables))


def repeatability(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """Within-run next to between-run spread for results of ``invoke bench --repeat K``."""
    repeated = [m for m in machines if any(r["runs"] > 1 for r in m.records)]
    if not repeated:
        return Part(title="Repeatability", intro="", tables=())

    def spread(_m: Machine, record: dict[str, Any]) -> Cell:
        between = record["between_run_cv"]
        if record["runs"] < 2 or between is None:
            return None
        return f"{record['within_run_cv'] * 100:.1f} % / {between * 100:.1f} %"

    tables = []
    for suite in suites_of(repeated):
        group = [m for m in repeated if m.has_suite(suite)]
        runs = ", ".join(f"{m.name}: {max(int(r['runs']) for r in m.records)} runs" for m in group)
        tables += cross_tables(
            group,
            suite,
            spread,
            APPENDIX_LAYOUT,
            columns=options.summary_columns,
            label=f"tab:repeatability-{slug(suite)}",
            title=f"Spread of {suite_title(suite)}",
            detail=(
                "coefficient of variation within one container run (median over runs) / "
                f"between the runs' medians ({runs})"
            ),
            rotate_from=2,
            small=True,
        )
    intro = (
        "Each repeated target ran in several independent containers (a fresh process each). "
        "The first figure is the spread of blocks inside one run, the second the spread "
        "of the runs' medians: a second figure well above the first means results move "
        "between runs more than within one."
    )
    return Part(title="Repeatability", intro=intro, tables=tuple(tables))
