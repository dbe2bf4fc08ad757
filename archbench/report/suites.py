"""Parts for the suites beyond the thesis appendix (openssl-speed, rsa-large, sodium, gnupg).

Every suite gets a cross-machine table from the one builder
(:mod:`archbench.report.crossmachine`): asymmetric operations in operations
per second (``openssl speed``'s sign/s, verify/s), bulk rows
(``bytes_per_op``) in MB/s (10⁶ bytes, as ``openssl speed`` prints), key
generation and GnuPG decryption in ms per operation (they take from
milliseconds to minutes); emulated machines in tables of their own. Suites
with tables of their own add them (:data:`EXTRA_TABLES`):

* ``openssl speed -multi N`` scaling: aggregate ops/s of N processes over
  the single-process figure on the same machine;
* NIST vs Brainpool curves of equal size class (P-256/brainpoolP256r1,
  P-384/brainpoolP384r1, P-521/brainpoolP512r1), the comparison of the tinc
  seed (``tinc-sptps-speed-curves.txt``: about 5x on optimised OpenSSL);
* libsodium best / Nth best / mean / worst per operation, as pycryptopp
  reported its benchmarks (``pycryptopp-low-power-bench.txt``);
* GnuPG decryption per device and algorithm with bandwidth, as the
  ``gnupg-token-decrypt-bench.txt`` seed plots it.

Their numbers are formatted by the caller's formatters (:data:`Formatter`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Final

from archbench.analysis import order_statistics
from archbench.report import versions
from archbench.report.crossmachine import CellFn, CrossSpec, RowLayout, tables_by_kind
from archbench.report.model import Cell, Machine, Part, ReportOptions, Table
from archbench.report.record import Record
from archbench.report.sections import cpu
from archbench.report.units import format_ratio
from archbench.result import NS_PER_MS
from archbench.suites import BLIND_SIGNATURE_SUITES, PART_ORDER, suite_title

NIST_BRAINPOOL_PAIRS: Final = (
    ("P-256", "brainpoolP256r1"),
    ("P-384", "brainpoolP384r1"),
    ("P-521", "brainpoolP512r1"),
)
"""Curves of the same size class compared in the tinc seed."""

TIME_OPERATIONS: Final = frozenset({"key_generation"})
"""Operations shown as ms per operation everywhere (slow, and users think of them as time)."""

Formatter = Callable[[float], str]

_Key = tuple[str, int, str, str, int, str]
"""(scheme, key_bits or 0, param, operation, processes, device)."""


def _suite_row(record: Record) -> _Key:
    """The row of an other suite's cross-machine table a record belongs to."""
    return (
        record.scheme,
        record.key_bits or 0,
        str(record.param or ""),
        record.operation,
        record.processes,
        record.device,
    )


def row_unit(record: Record) -> str:
    """How a row's speed is shown: ``ops/s``, ``MB/s`` (bulk rows) or ``ms`` (per operation).

    Decided by the row's kind, never by its value, so one row has one unit on every machine.
    """
    if record.bytes_per_op is not None and record.suite != "gnupg":
        return "MB/s"
    if record.operation in TIME_OPERATIONS or record.suite == "gnupg":
        return "ms"
    return "ops/s"


def row_value(record: Record) -> float:
    """The row's speed in :func:`row_unit`: ops/s, MB/s or ms per operation (median)."""
    unit = row_unit(record)
    if unit == "MB/s" and record.mb_per_s is not None:
        return record.mb_per_s
    if unit == "ms":
        return record.per_op_ns / NS_PER_MS
    return record.ops_per_s


def multi_scaling_table(
    machines: Sequence[Machine], fmt: Formatter, ratio: Formatter
) -> Table | None:
    """``openssl speed -multi N`` against the single process, per machine and row.

    Scaling = aggregate ops/s of N processes / ops/s of one process (ideal: N
    on N free cores). The 1-minute load average at the start of the run is
    shown beside it: scaling well below N with a load near the core count
    means the cores were shared, not that the machine does not scale. None
    when no machine has both figures.
    """
    rows = []
    for m in machines:
        load = m.result.harness.setup.load_average
        load_text = f"{load[0]:.2f}" if load else "–"
        records = [r for r in m.records if r.suite == "openssl-speed" and r.valid]
        single = {_suite_row(r)[:4]: r for r in records if r.processes == 1}
        for r in records:
            processes = r.processes
            partner = single.get(_suite_row(r)[:4])
            if processes == 1 or partner is None:
                continue
            one, many = row_value(partner), row_value(r)
            rows.append(
                (
                    m.name,
                    r.label,
                    r.operation,
                    row_unit(r),
                    fmt(one),
                    str(processes),
                    fmt(many),
                    ratio(many / one),
                    f"{m.result.harness.setup.cores} / {load_text}",
                )
            )
    if not rows:
        return None
    return Table(
        label="tab:suite-openssl-speed-multi",
        caption=(
            "openssl speed: one process against -multi N (aggregate of N processes); "
            "scaling = N-process figure / single-process figure, ideally N on N idle cores; "
            "cores / load is the CPU count and the 1-minute load average when the run began "
            "(a load near the core count means the processes shared cores)"
        ),
        header=(
            "Machine",
            "Scheme",
            "Operation",
            "Unit",
            "1 process",
            "N",
            "N processes",
            "Scaling",
            "Cores / load",
        ),
        align="llllrrrrr",
        groups=(tuple(rows),),
        small=True,
    )


def nist_brainpool_table(
    machines: Sequence[Machine], fmt: Formatter, ratio: Formatter
) -> Table | None:
    """NIST against Brainpool curves of the same size class, single process, per machine.

    Ratio = NIST ops/s / Brainpool ops/s (the tinc seed measured about 5x for
    P-521 vs brainpoolP512r1 ECDSA signing on optimised OpenSSL). None when no
    machine has a pair.
    """
    rows = []
    for m in machines:
        records = [
            r for r in m.records if r.suite == "openssl-speed" and r.valid and r.processes == 1
        ]
        by = {(r.scheme, str(r.param or ""), r.operation): r for r in records}
        for scheme, operation in sorted({(k[0], k[2]) for k in by}):
            for nist, brainpool in NIST_BRAINPOOL_PAIRS:
                a = by.get((scheme, nist, operation))
                b = by.get((scheme, brainpool, operation))
                if a is None or b is None:
                    continue
                fast, slow = row_value(a), row_value(b)
                rows.append(
                    (
                        m.name,
                        f"{scheme} {operation}",
                        f"{nist} / {brainpool}",
                        fmt(fast),
                        fmt(slow),
                        ratio(fast / slow),
                    )
                )
    if not rows:
        return None
    return Table(
        label="tab:suite-openssl-speed-nist-brainpool",
        caption=(
            "NIST vs Brainpool curves (openssl speed, one process): ops/s and the ratio "
            "NIST / Brainpool"
        ),
        header=("Machine", "Operation", "Curves", "NIST ops/s", "Brainpool ops/s", "Ratio"),
        align="lllrrr",
        groups=(tuple(rows),),
        small=True,
    )


def order_statistics_table(
    machines: Sequence[Machine], suite: str, fmt: Formatter, nth_default: int = 3
) -> Table | None:
    """Best / Nth best / mean / worst per operation, per machine (pycryptopp's report).

    Per-operation times in µs; bulk rows (``bytes_per_op``) in ns per byte.
    ``nth`` is the suite's setting in the result (``suites[suite].parameters.nth``),
    else ``nth_default``. None when no machine ran the suite.
    """
    rows = []
    nths = set()
    for m in machines:
        run = m.result.harness.suites.get(suite)
        nth = int(run.parameters.get("nth", nth_default)) if run else nth_default
        nths.add(nth)
        for row in m.result.harness.rows:
            if row.suite != suite:
                continue
            if not row.valid:
                rows.append((m.name, row.label, row.operation, "", "invalid", "", "", ""))
                continue
            stats = order_statistics(row.samples_ns, row.ops_per_block, nth)
            scale, unit = (1e3, "µs") if row.bytes_per_op is None else (row.bytes_per_op, "ns/B")
            rows.append(
                (
                    m.name,
                    row.label,
                    row.operation.replace("_", " "),
                    unit,
                    fmt(stats.best / scale),
                    fmt(stats.nth_best / scale),
                    fmt(stats.mean / scale),
                    fmt(stats.worst / scale),
                )
            )
    if not rows:
        return None
    nth_text = "/".join(str(n) for n in sorted(nths))
    return Table(
        label=f"tab:suite-{suite}-order-statistics",
        caption=(
            f"{suite_title(suite)}: best, {nth_text}. best, mean and worst per "
            "operation, as pycryptopp reported (µs per operation; ns per byte for bulk rows)"
        ),
        header=(
            "Machine",
            "Scheme",
            "Operation",
            "Unit",
            "Best",
            f"{nth_text}. best",
            "Mean",
            "Worst",
        ),
        align="llllrrrr",
        groups=(tuple(rows),),
        small=True,
    )


def gnupg_table(machines: Sequence[Machine], fmt: Formatter) -> Table | None:
    """GnuPG decryption per machine, device and algorithm: median time (ms) and MB/s.

    Bandwidth = file bytes / time of one ``gpg --decrypt`` process, as the
    gnupg-token seed computes it (its "bandwidth" column); it includes
    process start, so it is lower than what the cipher alone achieves.
    """
    rows = []
    for m in machines:
        for r in m.records:
            if r.suite != "gnupg" or r.operation != "decrypt":
                continue
            if not r.valid:
                rows.append((m.name, r.device, r.label, "invalid", ""))
                continue
            mb_s = r.mb_per_s
            rows.append(
                (
                    m.name,
                    r.device,
                    r.label,
                    fmt(r.per_op_ns / NS_PER_MS),
                    fmt(float(mb_s)) if mb_s is not None else "–",
                )
            )
    if not rows:
        return None
    return Table(
        label="tab:suite-gnupg-decrypt",
        caption="GnuPG decryption of a random file: median time per gpg process and bandwidth",
        header=("Machine", "Device", "Algorithm", "Time (ms)", "MB/s"),
        align="lllrr",
        groups=(tuple(rows),),
        small=False,
    )


ExtraTables = Callable[[Sequence[Machine], Formatter, Formatter], list[Table | None]]
"""(machines, hardware first; speed formatter; ratio formatter) -> a suite's own tables."""

EXTRA_TABLES: Final[dict[str, ExtraTables]] = {
    "openssl-speed": lambda machines, fmt, ratio: [
        multi_scaling_table(machines, fmt, ratio),
        nist_brainpool_table(machines, fmt, ratio),
    ],
    "sodium": lambda machines, fmt, _ratio: [order_statistics_table(machines, "sodium", fmt)],
    "gnupg": lambda machines, fmt, _ratio: [gnupg_table(machines, fmt)],
}
"""The tables a suite adds after its cross-machine table; a new suite with tables of its
own adds its entry here (the cross-machine table needs nothing)."""


def other_suites(machines: Sequence[Machine]) -> list[str]:
    """Suites the machines ran that are not the appendix's, in the suites' ``PART_ORDER``."""
    found = {r.suite for m in machines for r in m.records} - set(BLIND_SIGNATURE_SUITES)
    return sorted(found, key=lambda s: (PART_ORDER.index(s) if s in PART_ORDER else 99, s))


def _operation_text(record: Record) -> str:
    text = record.operation.replace("_", " ")
    processes = record.processes
    if processes > 1:
        text += f" ({processes} processes)"
    if record.device != "cpu":
        text += f" on {record.device}"
    return text


def _leading(_key: Any, record: Record, _previous: Any) -> tuple[str, ...]:
    return (record.label, _operation_text(record), row_unit(record))


SUITE_LAYOUT = RowLayout(
    header=("Scheme", "Operation", "Unit"), align="lll", key=_suite_row, leading=_leading
)
"""Rows scheme × operation (× processes, device) in the order the suite emitted them."""


def _cell(fmt: Formatter) -> CellFn:
    def cell(_m: Machine, record: Record) -> Cell:
        if not record.valid:
            return "invalid"
        text = fmt(row_value(record))
        flags = str(record.flags or "")
        return text + (" †" if "noisy" in flags else "")

    return cell


def cross_machine_tables(
    machines: Sequence[Machine], suite: str, fmt: Formatter, columns: int
) -> list[Table]:
    """Per-suite tables with one column per machine; hardware and emulated apart.

    Cells are the median speed in the row's unit (:func:`row_unit`); "–" is
    not measured, "invalid" a row the harness refused, † a noisy row (CV > 5 %).
    """
    spec = CrossSpec(
        suite,
        _cell(fmt),
        SUITE_LAYOUT,
        columns=columns,
        label=f"tab:suite-{suite}",
        title=f"{suite_title(suite)} across machines",
        detail=(
            "median ops/s, MB/s (10^6 bytes/s) or ms per operation as the Unit column "
            "says; † marks a row whose samples vary by more than 5 % (CV)"
        ),
    )
    return tables_by_kind(machines, spec)


def _mark_machine_rows(table: Table, machines: Sequence[Machine]) -> Table:
    """Mark the rows (first cell: machine name) of machines whose library versions differ."""
    names = {str(row[0]) for row in table.rows}
    odd, note = versions.odd_ones_out({m.name: m.result for m in machines if m.name in names})
    if note is None:
        return table
    rows = tuple((versions.marked(str(row[0]), str(row[0]), odd), *row[1:]) for row in table.rows)
    return dataclasses.replace(table, groups=(rows,), version_notes=(*table.version_notes, note))


def suite_tables(
    machines: Sequence[Machine],
    fmt: Formatter = format_ratio,
    ratio: Formatter = format_ratio,
    columns: int = 6,
) -> list[tuple[str, list[Table]]]:
    """(suite title, tables) for every non-appendix suite the machines ran, in report order.

    ``fmt`` formats speeds, ``ratio`` ratios (both: three significant digits by default).
    """
    out: list[tuple[str, list[Table]]] = []
    for suite in other_suites(machines):
        tables = cross_machine_tables(machines, suite, fmt, columns)
        hardware_first = sorted(machines, key=lambda m: m.result.emulated)
        own = EXTRA_TABLES.get(suite)
        extra = own(hardware_first, fmt, ratio) if own is not None else []
        tables += [_mark_machine_rows(t, machines) for t in extra if t is not None]
        out.append((suite_title(suite), tables))
    return out


def machines_table(machines: Sequence[Machine]) -> Table:
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
        rows.append((m.name, cpu(m.result), arch, setup.os, libraries, tools))
    return Table(
        label="tab:suite-machines",
        caption="Machines of the other suites and the library and tool versions they ran",
        header=("Machine", "CPU", "Architecture", "OS", "Libraries", "Tools"),
        align="YYYYYY",  # Y: wraps within \linewidth (archbench-appendix.sty); lists are long
        groups=(tuple(rows),),
        small=True,
    )


def suite_parts(machines: Sequence[Machine], options: ReportOptions) -> list[Part]:
    """One part per suite beyond the appendix's; the first opens with :func:`machines_table`."""
    inputs = [m for m in machines if any(r.suite not in BLIND_SIGNATURE_SUITES for r in m.records)]
    parts = []
    for index, (title, tables) in enumerate(suite_tables(inputs, columns=options.summary_columns)):
        if index == 0:
            tables.insert(0, machines_table(inputs))
        parts.append(
            Part(
                title=f"Suite: {title}",
                intro=(
                    "Median of all timed samples per row; † marks rows whose samples vary by "
                    "more than 5 % (CV). Emulated machines have tables of their own."
                ),
                tables=tuple(tables),
            )
        )
    return parts
