"""The appendix's parts across machines: summary, speedup and baseline, emulation, spread.

Ratios of times are :func:`archbench.analysis.stats.slowdown` of two per-operation
medians, to the digits both figures support. CS compared with RSA is
:mod:`archbench.report.schemes`.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence
from typing import Final

from archbench.analysis import slowdown
from archbench.errors import ReportError
from archbench.inputs import quote
from archbench.report.crossmachine import (
    CellFn,
    CrossSpec,
    Detail,
    RowLayout,
    cross_tables,
    tables_by_kind,
)
from archbench.report.model import (
    Cell,
    Machine,
    Part,
    Ratio,
    ReportOptions,
    Table,
    slug,
)
from archbench.report.record import Record
from archbench.report.schemes import speedup_tables
from archbench.report.sections import record_digits, speed, what
from archbench.report.units import ratio_digits
from archbench.result import (
    SPEEDUP_RSA_BITS,
    AppendixRow,
    group_key,
    operation_label,
    scheme_label,
    sort_key,
)
from archbench.suites import suite_title


def _leading(key: AppendixRow, _record: Record, previous: AppendixRow | None) -> tuple[str, ...]:
    same = previous is not None and previous[:2] == key[:2]
    return ("" if same else operation_label(key, False, short=True), scheme_label(key))


APPENDIX_LAYOUT: Final = RowLayout(
    header=("Operation", "Scheme"),
    align="ll",
    key=lambda record: record.appendix_row,
    leading=_leading,
    sort=sort_key,
    group=group_key,
)
"""Rows operation × scheme in the appendix's order and groups."""


def suites_of(machines: Sequence[Machine]) -> list[str]:
    """The suites the machines ran; blind signatures first, it is what the appendix is about."""
    found = {r.suite for m in machines for r in m.records}
    return sorted(found, key=lambda s: (s != "blindsig", s))


def _appendix_spec(
    options: ReportOptions, suite: str, cell: CellFn, label: str, title: str, detail: Detail
) -> CrossSpec:
    """Small tables in the appendix's rows, machine headers set vertically."""
    return CrossSpec(
        suite,
        cell,
        APPENDIX_LAYOUT,
        columns=options.summary_columns,
        label=label,
        title=title,
        detail=detail,
        rotate_from=2,
        small=True,
    )


def summary(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """Speeds per suite, a column per machine."""
    unit = options.unit
    tables: list[Table] = []
    for suite in suites_of(machines):
        spec = _appendix_spec(
            options,
            suite,
            cell=lambda _m, r: speed(r, unit, bare=True),
            label=f"tab:summary-{slug(suite)}",
            title=f"Summary of {suite_title(suite)} across machines",
            detail=functools.partial(what, unit, suite),
        )
        tables += tables_by_kind(machines, spec)
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


def ratio_of(record: Record, other: Record | None) -> Ratio:
    """``record``'s per-operation time over ``other``'s, as a ``×`` cell."""
    if other is None:
        return Ratio(None)
    if not record.valid or not other.valid:
        return Ratio(None, invalid=True)
    value = slowdown(record.per_op_ns, other.per_op_ns)
    return Ratio(value, "×", digits=ratio_digits(record_digits(record), record_digits(other)))


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
            raise ReportError(f"--baseline {quote(name)} names no single machine ({which}){hint}")
    if chosen.emulated:
        raise ReportError(
            f"--baseline {quote(name)} ran under QEMU emulation; emulated timings are never a "
            "yardstick for hardware, choose a native or reference machine"
        )
    return chosen


def _check_baseline_shares_rows(base: Machine, machines: Sequence[Machine]) -> None:
    """Raise when no other machine measured a row the baseline has (a 1.00× table of itself).

    Raises:
        ReportError: naming the baseline's suites and the machines that would do.
    """
    owners: dict[tuple[str, AppendixRow], set[str]] = {}
    for m in machines:
        for r in m.records:
            owners.setdefault((r.suite, r.appendix_row), set()).add(m.name)
    if any(len(owners[(r.suite, r.appendix_row)]) > 1 for r in base.records):
        return
    usable = [
        m.name
        for m in machines
        if not m.emulated and any(len(owners[(r.suite, r.appendix_row)]) > 1 for r in m.records)
    ]
    suites = ", ".join(sorted({r.suite for r in base.records}))
    raise ReportError(
        f"--baseline {quote(base.name)}: no other machine measured what it did (suite {suites}), "
        "so every figure would compare it with itself; choose a machine that shares rows "
        f"with others: {', '.join(usable) or 'none in this selection'}"
    )


def comparison(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """The speedup of CS over RSA per machine and, with a baseline, times relative to it.

    Raises:
        ReportError: the baseline is unknown or emulated (:func:`find_baseline`).
    """
    sizes = (SPEEDUP_RSA_BITS,) if options.compare_bits is None else options.compare_bits
    tables = speedup_tables(machines, sizes)
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
        base_records = {r.appendix_row: r for r in base.records}
        _check_baseline_shares_rows(base, machines)

        def first(kind: str, group: list[Machine]) -> list[Machine]:
            # The baseline comes first, as the column every other is read against.
            return [base, *(m for m in group if m is not base)] if kind == "native" else group

        for suite in suites_of([base]):
            spec = _appendix_spec(
                options,
                suite,
                cell=lambda _m, r: ratio_of(r, base_records.get(r.appendix_row)),
                label=f"tab:baseline-{slug(suite)}",
                title=f"Time of {suite_title(suite)} relative to {base.name}",
                detail="machine time / baseline time (above 1: slower)",
            )
            tables += tables_by_kind(
                machines,
                spec,
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
    partner_records = {m.name: {r.appendix_row: r for r in p.records} for m, p in pairs}
    emulated = [m for m, _ in pairs]
    against = "; ".join(f"{m.name} against {p.name}" for m, p in pairs)
    tables: list[Table] = []
    for suite in suites_of(emulated):
        spec = _appendix_spec(
            options,
            suite,
            cell=lambda m, r: ratio_of(r, partner_records[m.name].get(r.appendix_row)),
            label=f"tab:emulation-slowdown-{slug(suite)}",
            title=f"Emulation slowdown of {suite_title(suite)}",
            detail=f"per-operation time under QEMU / native per-operation time ({against})",
        )
        tables += cross_tables(
            [m for m in emulated if m.has_suite(suite)],
            spec,
            partners={m.name: p for m, p in pairs},
        )
    intro = (
        "How much slower each operation runs under QEMU user emulation than natively. "
        "A native run of the same architecture is used where the results have one, "
        "else a native run on the emulating host."
    )
    return Part(title="Emulation slowdown", intro=intro, tables=tuple(tables))


def repeatability(machines: Sequence[Machine], options: ReportOptions) -> Part:
    """Within-run next to between-run spread for results of ``invoke bench --repeat K``."""
    repeated = [m for m in machines if any(r.runs > 1 for r in m.records)]
    if not repeated:
        return Part(title="Repeatability", intro="", tables=())

    def spread(_m: Machine, record: Record) -> Cell:
        between = record.between_run_cv
        if record.runs < 2 or between is None:
            return None
        return f"{record.within_run_cv * 100:.1f} % / {between * 100:.1f} %"

    tables = []
    for suite in suites_of(repeated):
        group = [m for m in repeated if m.has_suite(suite)]
        runs = ", ".join(f"{m.name}: {max(r.runs for r in m.records)} runs" for m in group)
        spec = _appendix_spec(
            options,
            suite,
            cell=spread,
            label=f"tab:repeatability-{slug(suite)}",
            title=f"Spread of {suite_title(suite)}",
            detail=(
                "coefficient of variation within one container run (median over runs) / "
                f"between the runs' medians ({runs})"
            ),
        )
        tables += cross_tables(group, spec)
    intro = (
        "Each repeated target ran in several independent containers (a fresh process each). "
        "The first figure is the spread of blocks inside one run, the second the spread "
        "of the runs' medians: a second figure well above the first means results move "
        "between runs more than within one."
    )
    return Part(title="Repeatability", intro=intro, tables=tuple(tables))
